"""`sift llm serve`: llama.cpp's server on the packaged model, started, used and stopped as a user does."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request

from tests.local_llm import served


def _sift(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sift.cli", *args], capture_output=True, text=True, timeout=120)


def test_serve_answers_the_openai_api_and_stops_on_sigterm() -> None:
    with served("--ctx", "2048") as llm:
        assert llm["llm_model"] == "smollm2-135m" and llm["llm_context_tokens"] == 2048
        body = {"model": llm["llm_model"], "max_tokens": 8,
                "messages": [{"role": "user", "content": "Say hello."}]}
        req = urllib.request.Request(llm["llm_base_url"] + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            reply = json.loads(r.read())
        assert reply["choices"][0]["message"]["role"] == "assistant"
        assert 0 < reply["usage"]["completion_tokens"] <= 8
        port = int(llm["llm_base_url"].rsplit(":", 1)[1].split("/")[0])
    with socket.create_server(("127.0.0.1", port)):  # stopped: the port is free again
        pass


def test_models_lists_the_default_model_with_its_licence() -> None:
    out = _sift("llm", "models")
    assert out.returncode == 0, out.stderr
    name, licence, where = out.stdout.splitlines()[0].split("\t")
    assert name == "smollm2-135m (default)" and licence == "Apache-2.0" and where.endswith(".gguf")


def test_serve_refuses_a_taken_port_and_a_missing_model_clearly(tmp_path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = _sift("llm", "serve", "--port", str(port))
    assert out.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in out.stderr and "--port" in out.stderr
    out = _sift("llm", "serve", "--model", str(tmp_path / "absent.gguf"))
    assert out.returncode == 1 and "absent.gguf" in out.stderr and "smollm2-135m" in out.stderr
    out = _sift("llm", "serve", "--ctx", "100")
    assert out.returncode == 2 and "--ctx" in out.stderr
