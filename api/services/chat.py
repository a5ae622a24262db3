"""Chat as the API serves it: a question answered on a thread of ``sift.graph.threads``, whole or as server-sent
events, recorded as a turn of the thread; turns of one thread run one at a time, across processes and replicas."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import anyio
from litestar.response import ServerSentEventMessage
from pydantic_core import to_jsonable_python
from sqlalchemy import Engine

from sift.api.errors import ChatUnavailable
from sift.api.limits import LimitedAskService
from sift.api.schemas import Answer, ChatRequest
from sift.api.settings import ApiSettings
from sift.api.sse import chat_events
from sift.catalog import get_serving_kb
from sift.errors import SiftError
from sift.graph.threads import open_thread, record_turn
from sift.graph.turns import thread_turn

T = TypeVar("T")


async def _holding(events: AsyncIterator[T], turn: AbstractAsyncContextManager[object]) -> AsyncIterator[T]:
    """``events``, then ``turn`` exited (also when the client goes away and the stream is closed)."""
    try:
        async for event in events:
            yield event
    finally:
        await turn.__aexit__(None, None, None)


class ChatService:
    """Answers on threads over the app's answer graph (``ask``: None when the graph is not installed)."""

    def __init__(self, settings: ApiSettings, engine: Engine, ask: LimitedAskService | None) -> None:
        self.settings = settings
        self.engine = engine
        self.ask = ask

    def _service(self) -> LimitedAskService:
        if self.ask is None:
            raise ChatUnavailable("chat is unavailable: the answer graph (graph.service) is not installed")
        return self.ask

    async def _begin(self, tenant: str, data: ChatRequest) -> dict[str, Any]:
        """Check the kb is served and the thread is the caller's (creating it when new); returns the thread, with
        its checkpointer key."""
        await anyio.to_thread.run_sync(get_serving_kb, self.engine, data.kb, tenant)
        return await anyio.to_thread.run_sync(open_thread, self.engine, tenant, data.kb, data.thread_id, data.message)

    def _turn(self, tenant: str, thread: dict[str, Any]) -> AbstractAsyncContextManager[object]:
        """The thread's turn: one question at a time per thread, across processes and replicas."""
        return thread_turn(self.engine, self.settings.data_dir, tenant, thread["checkpoint_id"],
                           self.settings.turn_wait_s)

    async def answer(self, tenant: str, data: ChatRequest) -> Answer:
        """The answer to ``data.message`` on its thread (opened, or created when new), recorded as a turn of it."""
        service = self._service()
        thread = await self._begin(tenant, data)
        started = time.perf_counter()
        async with self._turn(tenant, thread):
            try:
                answer = await service.ask(data.message, data.kb, tenant=tenant, thread_id=thread["checkpoint_id"])
            except SiftError as exc:
                message = exc.message
                await anyio.to_thread.run_sync(lambda: record_turn(
                    self.engine, tenant, data.kb, thread, data.message, None, status="error", error=message))
                raise
            body = to_jsonable_python(answer)
            body["thread_id"] = thread["thread_id"]
            timings = {"request_ms": round((time.perf_counter() - started) * 1000, 1)}
            await anyio.to_thread.run_sync(lambda: record_turn(
                self.engine, tenant, data.kb, thread, data.message, body, timings=timings))
        return Answer.model_validate(body)

    async def stream(self, tenant: str, data: ChatRequest) -> AsyncIterator[ServerSentEventMessage]:
        """The answer's events (plan, retrieve, fuse, check, fallback, token, answer, error, done) as SSE messages.

        The turn is taken before this returns, so a busy thread is a Conflict (409), not an error event; the
        events give it back when they end, however they end."""
        service = self._service()
        thread = await self._begin(tenant, data)
        turn = self._turn(tenant, thread)
        await turn.__aenter__()
        events = chat_events(service, self.engine, tenant=tenant, kb=data.kb, thread=thread,
                             question=data.message, keepalive_s=self.settings.sse_keepalive_s)
        return _holding(events, turn)
