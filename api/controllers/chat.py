"""Chat: ``POST /v1/chat`` and ``POST /v1/chat/stream`` (SSE), in threads of ``sift.graph.threads``."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import anyio
from litestar import Controller, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.response import ServerSentEvent
from pydantic_core import to_jsonable_python

from sift.api.controllers.common import errors
from sift.api.errors import ChatUnavailable
from sift.api.limits import LimitedAskService
from sift.api.schemas import Answer, ChatRequest
from sift.api.sse import STREAM_RESPONSE, chat_events
from sift.catalog import get_serving_kb
from sift.errors import SiftError
from sift.graph.threads import open_thread, record_turn
from sift.graph.turns import thread_turn

T = TypeVar("T")


def _service(state: State) -> LimitedAskService:
    if state.ask is None:
        raise ChatUnavailable("chat is unavailable: the answer graph (graph.service) is not installed")
    return state.ask


async def _begin(state: State, tenant: str, data: ChatRequest) -> dict[str, Any]:
    """Check the kb is served and the thread is the caller's (creating it when new); returns the thread, with
    its checkpointer key."""
    await anyio.to_thread.run_sync(get_serving_kb, state.engine, data.kb, tenant)
    return await anyio.to_thread.run_sync(open_thread, state.engine, tenant, data.kb, data.thread_id, data.message)


def _turn(state: State, tenant: str, thread: dict[str, Any]) -> AbstractAsyncContextManager[object]:
    """The thread's turn: one question at a time per thread, across processes and replicas."""
    return thread_turn(state.engine, state.settings.data_dir, tenant, thread["checkpoint_id"],
                       state.settings.turn_wait_s)


async def _holding(events: AsyncIterator[T], turn: AbstractAsyncContextManager[object]) -> AsyncIterator[T]:
    """``events``, then ``turn`` exited (also when the client goes away and the stream is closed)."""
    try:
        async for event in events:
            yield event
    finally:
        await turn.__aexit__(None, None, None)


async def answer_on_thread(state: State, tenant: str, data: ChatRequest) -> Answer:
    """The answer to ``data.message`` on its thread (opened, or created when new), recorded as a turn of it; turns
    of one thread run one at a time."""
    service = _service(state)
    thread = await _begin(state, tenant, data)
    started = time.perf_counter()
    async with _turn(state, tenant, thread):
        try:
            answer = await service.ask(data.message, data.kb, tenant=tenant, thread_id=thread["checkpoint_id"])
        except SiftError as exc:
            message = exc.message
            await anyio.to_thread.run_sync(lambda: record_turn(
                state.engine, tenant, data.kb, thread, data.message, None, status="error", error=message))
            raise
        body = to_jsonable_python(answer)
        body["thread_id"] = thread["thread_id"]
        timings = {"request_ms": round((time.perf_counter() - started) * 1000, 1)}
        await anyio.to_thread.run_sync(lambda: record_turn(
            state.engine, tenant, data.kb, thread, data.message, body, timings=timings))
    return Answer.model_validate(body)


class ChatController(Controller):
    """Questions answered with citations, in threads that survive restarts."""

    path = "/v1"
    tags = ["chat"]

    @post("/chat", status_code=200, responses=errors(404, 409, 502, 503))
    async def chat(self, state: State, tenant: NamedDependency[str], data: JSONBody[ChatRequest]) -> Answer:
        """Answer a question in a thread (new, or named by the client); the answer cites files and lines."""
        return await answer_on_thread(state, tenant, data)

    @post("/chat/stream", status_code=200, responses={200: STREAM_RESPONSE, **errors(404, 409, 503)})
    async def chat_stream(self, state: State, tenant: NamedDependency[str], data: JSONBody[ChatRequest]) -> ServerSentEvent:
        """The same as ``/v1/chat`` as server-sent events: plan, retrieve, fuse, check, fallback, token,
        answer, error, done."""
        service = _service(state)
        thread = await _begin(state, tenant, data)
        # The turn is taken before the response starts, so a busy thread is a 409, not an error event; the
        # stream gives it back when it ends, however it ends.
        turn = _turn(state, tenant, thread)
        await turn.__aenter__()
        events = chat_events(service, state.engine, tenant=tenant, kb=data.kb, thread=thread,
                             question=data.message, keepalive_s=state.settings.sse_keepalive_s)
        return ServerSentEvent(_holding(events, turn))
