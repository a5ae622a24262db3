"""`langgraph dev` (the Studio server) loads the graph from langgraph.json and answers over its HTTP API, offline."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from sift.config import Settings
from sift.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
STARTUP_S = 90


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _langgraph() -> str:
    exe = Path(sys.executable).with_name("langgraph")
    return str(exe) if exe.exists() else shutil.which("langgraph") or "langgraph"


@pytest.fixture
def data_dir(tiny_repo: Path, tmp_path: Path, local_embedder) -> Path:
    settings = Settings(data_dir=tmp_path / "data")
    ingest(settings, tiny_repo, "tiny", embedder=local_embedder)
    return settings.data_dir


def test_langgraph_dev_serves_the_ask_graph(data_dir: Path, tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "SIFT_DATA_DIR": str(data_dir), "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
           "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_API_KEY": "", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    for key in ("SIFT_LLM_BASE_URL", "SIFT_LLM_MODEL"):
        env.pop(key, None)
    log = (tmp_path / "langgraph-dev.log").open("w")
    proc = subprocess.Popen(
        [_langgraph(), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
         "--config", str(ROOT / "langgraph.json")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        with httpx.Client(base_url=base, timeout=60) as client:
            while True:
                assert proc.poll() is None, (tmp_path / "langgraph-dev.log").read_text()[-3000:]
                try:
                    if client.get("/ok").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "langgraph dev did not start in time"
                time.sleep(0.5)
            thread = client.post("/threads", json={}).json()["thread_id"]
            out = client.post(f"/threads/{thread}/runs/wait", json={
                "assistant_id": "ask", "input": {"question": "Where is validate_token defined?", "kb": "tiny"}})
            assert out.status_code == 200, out.text
            answer = out.json()["answer"]
            assert answer["grounded"] is True
            assert any(c["path"] == "pkg/auth.py" for c in answer["citations"])
            state = client.get(f"/threads/{thread}/state").json()
            assert state["values"]["turns"][0]["question"] == "Where is validate_token defined?"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        log.close()
