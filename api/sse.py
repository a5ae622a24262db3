"""Server-sent events for ``POST /v1/chat/stream``: the graph's progress as typed events, recorded at the end.

Events: ``plan``, ``retrieve``, ``fuse``, ``check``, ``fallback``, ``token``, ``answer``, ``error``, ``done``.
Each carries an ``id:`` (1, 2, … within the stream); a ``: keep-alive`` comment goes out whenever the run is
quiet for ``SIFT_SSE_KEEPALIVE_S`` (a long model call or retrieval), so proxies do not drop the connection.
A failure mid-stream becomes an ``error`` event followed by ``done``; a client that disconnects cancels the
run (the generator is closed), and the question is recorded as cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import anyio
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Example
from litestar.response import ServerSentEventMessage
from pydantic_core import to_jsonable_python
from sqlalchemy import Engine

from sift.api.errors import HTTP_CODES, error_body
from sift.api.limits import LimitedAskService
from sift.graph.threads import record_turn

log = logging.getLogger(__name__)

T = TypeVar("T")

EVENTS = ("plan", "retrieve", "fuse", "check", "fallback", "token", "answer", "error", "done")
KEEPALIVE = ServerSentEventMessage(comment="keep-alive", data=None)

_EVENT_TEXT = {
    "plan": "the planner's decision (question type, channels, sub-queries, budget)",
    "retrieve": "one retrieval branch finished (channel, query, round, hits, elapsed_ms, error)",
    "fuse": "the evidence after fusion (count and `[n] path:a-b name` labels)",
    "check": "the citation check of a draft (ok, valid ids, problems)",
    "fallback": "a new retrieval round (strategy, round)",
    "token": "a piece of the model's answer text (LLM mode only)",
    "answer": "the final `Answer`, as `POST /v1/chat` returns it (with its `confidence` and `confidence_score`)",
    "error": "the run failed: `{error, detail, status}`; `done` follows",
    "done": "the stream's last event: `{thread_id, elapsed_ms?}`",
}
STREAM_RESPONSE = ResponseSpec(
    data_container=str, media_type="text/event-stream", generate_examples=False,
    description="Server-sent events, each `id: n`, `event: <type>` and `data: <JSON>`; `: keep-alive` comments "
                "while the run is quiet. Event types, in the order they can occur:\n\n"
                + "\n".join(f"- `{name}`: {text}" for name, text in _EVENT_TEXT.items()),
    examples=[Example(summary="an extractive answer", value=(
        'id: 1\nevent: plan\ndata: {"question_type": "locate", "channels": ["bm25", "vector", "smart"]}\n\n'
        'id: 2\nevent: retrieve\ndata: {"channel": "bm25", "query": "validate token", "round": 0, "hits": 7}\n\n'
        ': keep-alive\n\n'
        'id: 3\nevent: answer\ndata: {"text": "`validate_token` is defined in pkg/auth.py [1].", "grounded": true, '
        '"confidence": "high", "confidence_score": 0.93}'
        '\n\nid: 4\nevent: done\ndata: {"thread_id": "3f2a", "elapsed_ms": 84.2}\n\n'))],
)


def encode(event: str, data: Any, event_id: int | None = None) -> ServerSentEventMessage:
    """One SSE message with a JSON payload (and its ``id:`` when given)."""
    return ServerSentEventMessage(event=event, data=json.dumps(to_jsonable_python(data), ensure_ascii=False),
                                  id=event_id)


async def with_keepalive(source: AsyncIterator[T], interval_s: float) -> AsyncIterator[T | None]:
    """``source``'s items, and ``None`` whenever it is quiet for ``interval_s``.

    ``source`` runs in its own task (feeding a small queue), so waiting with a timeout never cancels it; closing
    this generator cancels that task, which closes ``source``.
    """
    queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue(maxsize=8)

    async def pump() -> None:
        try:
            async for item in source:
                await queue.put((True, item))
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which re-raises it
            await queue.put((False, exc))
            return
        await queue.put((False, None))

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                more, item = await asyncio.wait_for(queue.get(), timeout=interval_s)
            except TimeoutError:
                yield None
                continue
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def error_event(data: Any) -> dict[str, Any]:
    """An ``error`` event's payload in the API's error shape ``{error, detail, status}``."""
    raw = data if isinstance(data, dict) else {"message": str(data)}
    status = int(raw.get("status") or 500)
    detail = raw.get("detail") or raw.get("message") or "the run failed"
    if status >= 500 and status not in (502, 503):
        detail = "internal error while answering; the server log has the details"
    return {"error": raw.get("error") or HTTP_CODES.get(status, "error"), "detail": str(detail), "status": status}


async def chat_events(
    service: LimitedAskService, engine: Engine, *, tenant: str, kb: str, thread: dict[str, Any], question: str,
    keepalive_s: float = 15.0,
) -> AsyncIterator[ServerSentEventMessage]:
    """Relay ``service.stream`` as SSE messages and record the turn however the stream ends; the graph runs
    under the thread's checkpointer key, while events name the client's ``thread_id``."""
    started = time.perf_counter()
    answer: dict[str, Any] | None = None
    status, error, done = "cancelled", None, False
    thread_id = thread["thread_id"]
    ids = itertools.count(1)
    stream = service.stream(question, kb, tenant=tenant, thread_id=thread["checkpoint_id"])
    try:
        async for item in with_keepalive(stream, keepalive_s):
            if item is None:
                yield KEEPALIVE
                continue
            event, data = item
            if event in ("answer", "done") and isinstance(data, dict):
                data = {**data, "thread_id": thread_id}
            if event == "answer":
                answer = to_jsonable_python(data)
            elif event == "error":
                error = str(data.get("message", data)) if isinstance(data, dict) else str(data)
                status, data = "error", error_event(data)
            elif event == "done":
                done = True
            yield encode(event, data, next(ids))
        if status != "error":
            status = "answered" if answer is not None else "error"
        if not done:  # the service stops after an error event; clients always get a final done
            yield encode("done", {"thread_id": thread_id}, next(ids))
    except Exception as exc:  # noqa: BLE001 - every failure mid-stream becomes an error event
        code, body = error_body(exc)
        if code >= 500:
            log.exception("chat stream failed for thread %s", thread_id, exc_info=exc)
        status, error = "error", body["detail"]
        yield encode("error", {**body, "status": code}, next(ids))
        yield encode("done", {"thread_id": thread_id}, next(ids))
    finally:
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        record_turn(engine, tenant, kb, thread, question, answer, status=status, error=error,
                    timings={"stream_ms": elapsed})
        with anyio.CancelScope(shield=True):  # let the run clean up even when the client went away
            await stream.aclose()
