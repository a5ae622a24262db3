"""`langgraph dev` (the Studio server) loads the graph from langgraph.json and answers over its HTTP API, offline."""

from __future__ import annotations

import os
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


def _langgraph() -> list[str]:
    """The CLI run by this interpreter, so it imports the sift under test."""
    return [sys.executable, "-m", "langgraph_cli"]


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
        [*_langgraph(), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
         "--config", str(ROOT / "langgraph.json")],
        cwd=tmp_path, env=env,  # not the repository: langgraph.json must work from any directory
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
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
            # Studio builds its input form and context panel from these schemas
            assistant = client.post("/assistants/search", json={"graph_id": "ask"}).json()[0]["assistant_id"]
            schemas = client.get(f"/assistants/{assistant}/schemas").json()
            inputs = schemas["input_schema"]
            assert {"message", "question", "kb"} <= set(inputs["properties"]), inputs
            assert inputs["required"] == ["kb"]
            assert "alias" in inputs["properties"]["question"]["description"].lower()
            assert set(schemas["context_schema"]["properties"]) == {"max_rounds", "channel_timeout_ms", "use_llm"}
            assert "answer" in schemas["output_schema"]["properties"]

            thread = client.post("/threads", json={}).json()["thread_id"]
            out = client.post(f"/threads/{thread}/runs/wait", json={
                "assistant_id": "ask", "input": {"message": "Where is validate_token defined?", "kb": "tiny"}})
            assert out.status_code == 200, out.text
            answer = out.json()["answer"]
            assert answer["grounded"] is True
            assert any(c["path"] == "pkg/auth.py" for c in answer["citations"])
            # the alias asks the next question on the same thread
            out = client.post(f"/threads/{thread}/runs/wait", json={
                "assistant_id": "ask", "input": {"question": "How often should the secret be rotated?"}})
            assert out.status_code == 200, out.text
            state = client.get(f"/threads/{thread}/state").json()
            assert [t["question"] for t in state["values"]["turns"]] == [
                "Where is validate_token defined?", "How often should the secret be rotated?"]

            # a missing or unknown kb is an error that names the field and the known knowledge bases
            for given in ({"message": "Where is validate_token defined?"},
                          {"message": "Where is validate_token defined?", "kb": "nope"}):
                fresh = client.post("/threads", json={}).json()["thread_id"]
                out = client.post(f"/threads/{fresh}/runs/wait", json={"assistant_id": "ask", "input": given})
                error = out.json().get("__error__", out.json())  # how /runs/wait reports a failed run
                assert "kb" in error["message"] and "tiny" in error["message"], error
                assert error["error"] in ("BadInput", "UnknownKb"), error
    finally:
        _stop(proc)
        log.close()


def _stop(proc: subprocess.Popen) -> None:
    """Stop the server's whole process group (it may already be gone): the CLI's process exits before the server
    process it started does, so the group, not the first process, is waited for."""
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            proc.poll()
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
    proc.poll()
