"""Server-sent events for ``POST /v1/chat/stream``: the graph's progress as typed events, recorded at the end.

Events: ``plan``, ``retrieve``, ``fuse``, ``check``, ``fallback``, ``token``, ``answer``, ``error``, ``done``.
A failure mid-stream becomes an ``error`` event followed by ``done``; a client that disconnects cancels the
run (the generator is closed), and the question is recorded as cancelled.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from litestar.response import ServerSentEventMessage
from pydantic_core import to_jsonable_python
from sqlalchemy import Engine

from sift.api.errors import HTTP_CODES, error_body
from sift.api.records import record_turn

log = logging.getLogger(__name__)

def encode(event: str, data: Any) -> ServerSentEventMessage:
    """One SSE message with a JSON payload."""
    return ServerSentEventMessage(event=event, data=json.dumps(to_jsonable_python(data), ensure_ascii=False))


def error_event(data: Any) -> dict[str, Any]:
    """An ``error`` event's payload in the API's error shape ``{error, detail, status}``."""
    raw = data if isinstance(data, dict) else {"message": str(data)}
    status = int(raw.get("status") or 500)
    detail = raw.get("detail") or raw.get("message") or "the run failed"
    if status >= 500 and status not in (502, 503):
        detail = "internal error while answering; the server log has the details"
    return {"error": raw.get("error") or HTTP_CODES.get(status, "error"), "detail": str(detail), "status": status}


async def chat_events(
    service: Any, engine: Engine, *, tenant: str, kb: str, thread_id: str, question: str
) -> AsyncIterator[ServerSentEventMessage]:
    """Relay ``service.stream`` as SSE messages and record the turn however the stream ends."""
    started = time.perf_counter()
    answer: dict[str, Any] | None = None
    status, error, done = "cancelled", None, False
    stream = service.stream(question, kb, tenant=tenant, thread_id=thread_id)
    try:
        async for event, data in stream:
            if event == "answer":
                answer = to_jsonable_python(data)
            elif event == "error":
                error = str(data.get("message", data)) if isinstance(data, dict) else str(data)
                status, data = "error", error_event(data)
            elif event == "done":
                done = True
            yield encode(event, data)
        if status != "error":
            status = "answered" if answer is not None else "error"
        if not done:  # the service stops after an error event; clients always get a final done
            yield encode("done", {"thread_id": thread_id})
    except Exception as exc:  # noqa: BLE001 - every failure mid-stream becomes an error event
        code, body = error_body(exc)
        if code >= 500:
            log.exception("chat stream failed for thread %s", thread_id, exc_info=exc)
        status, error = "error", body["detail"]
        yield encode("error", {**body, "status": code})
        yield encode("done", {"thread_id": thread_id})
    finally:
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        record_turn(engine, tenant, kb, thread_id, question, answer, status=status, error=error,
                    timings={"stream_ms": elapsed})
        with anyio.CancelScope(shield=True):  # let the run clean up even when the client went away
            await stream.aclose()
