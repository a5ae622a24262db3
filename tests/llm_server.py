"""A scripted OpenAI-compatible chat server on 127.0.0.1: the stand-in for a remote LLM in tests.

It speaks just enough of ``POST /v1/chat/completions`` (plain JSON and ``stream: true`` server-sent events) for
the real ``ChatOpenAI`` client to talk to it. Each request consumes the next step of a script; a step is a dict
(``{"content": ...}``, ``{"tool_calls": [(name, args), ...]}``, ``{"status": 500}``, ``{"hang": seconds}``,
``{"raw": "not json"}``; ``"finish": "length"`` added to a content step ends it as cut off at ``max_tokens``) or a
callable that receives the request body and returns such a dict. Requests are recorded in ``requests``.

``response_format`` is honoured as a structured-output server would: ``json_object`` and ``json_schema``
replies must be JSON (a scripted reply that is not is sent as-is, to test the client's handling). A stand-in
built with ``json_schema=False`` answers a ``json_schema`` request with HTTP 400, as servers without
structured-output support do (``schema_status=500``: as llama-cpp-python's server does), so the client's fallback
to JSON mode can be tested; one built with ``tools=False`` answers any request with ``tools`` with HTTP 400.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedLLM:
    """Start with ``with ScriptedLLM(steps) as llm:``; ``llm.base_url`` goes into ``SIFT_LLM_BASE_URL``."""

    def __init__(self, steps: list[Step], default: Step | None = None, *, json_schema: bool = True,
                 schema_status: int = 400, tools: bool = True) -> None:
        self.steps = list(steps)
        self.default = default
        self.json_schema = json_schema
        self.schema_status = schema_status
        self.tools = tools
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply for one request (the script's next step, else the default)."""
        with self._lock:
            self.requests.append(body)
            if not self.json_schema and (body.get("response_format") or {}).get("type") == "json_schema":
                return {"status": self.schema_status,
                        "error": "response_format of type 'json_schema' is not supported"}
            if not self.tools and body.get("tools"):
                return {"status": 400, "error": "this server does not support tools"}
            step = self.steps.pop(0) if self.steps else self.default
        if step is None:
            return {"status": 500, "error": "script exhausted"}
        return step(body) if callable(step) else step

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                step = server.next_step(body)
                if "hang" in step:
                    time.sleep(step["hang"])
                    step = {"content": "too late"}
                if "status" in step:
                    self._send(step["status"], {"error": {"message": step.get("error", "scripted failure"),
                                                          "type": "server_error"}})
                    return
                message = _message(step)
                if body.get("stream"):
                    self._stream(body, message, step.get("finish", "stop"))
                else:
                    self._send(200, _completion(body, message, step.get("finish", "stop")))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], message: dict[str, Any], finish: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model", "stand-in")}
                chunks = []
                if message.get("tool_calls"):
                    for i, tc in enumerate(message["tool_calls"]):
                        chunks.append({"role": "assistant", "tool_calls": [{"index": i, **tc}]})
                else:
                    text = message.get("content") or ""
                    half = len(text) // 2
                    chunks = [{"role": "assistant", "content": text[:half]}, {"content": text[half:]}]
                for delta in chunks:
                    self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                finish = "tool_calls" if message.get("tool_calls") else finish
                self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        return Handler


def _message(step: dict[str, Any]) -> dict[str, Any]:
    if "tool_calls" in step:
        calls = [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                 for i, (name, args) in enumerate(step["tool_calls"])]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    if "raw" in step:
        return {"role": "assistant", "content": step["raw"]}
    content = step.get("content")
    return {"role": "assistant", "content": content if isinstance(content, str) else json.dumps(content)}


def _completion(body: dict[str, Any], message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "stand-in"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
