"""Chat and threads: ``POST /v1/chat``, ``POST /v1/chat/stream`` (SSE), ``GET/DELETE /v1/threads/{id}``."""

from __future__ import annotations

import time
from typing import Any

import anyio
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter
from litestar.response import ServerSentEvent

from sift.api.controllers.common import errors
from sift.api.errors import ChatUnavailable
from sift.api.records import delete_thread, get_thread, list_threads, open_thread, record_turn
from sift.api.schemas import KB_NAME, THREAD_ID, ChatRequest, ThreadDetail, ThreadList
from sift.api.sse import chat_events
from sift.catalog import get_serving_kb
from sift.errors import SiftError
from sift.graph.state import Answer

ThreadParam = Parameter(pattern=THREAD_ID, description="thread id")


def _service(state: State) -> Any:
    if state.ask is None:
        raise ChatUnavailable("chat is unavailable: the answer graph (graph.service) is not installed")
    return state.ask


async def _begin(state: State, tenant: NamedDependency[str], data: JSONBody[ChatRequest]) -> str:
    """Check the kb is served and the thread is the caller's (creating one when needed); returns its id."""
    await anyio.to_thread.run_sync(get_serving_kb, state.engine, data.kb, tenant)
    return await anyio.to_thread.run_sync(open_thread, state.engine, tenant, data.kb, data.thread_id, data.message)


class ChatController(Controller):
    """Questions answered with citations, in threads that survive restarts."""

    path = "/v1"
    tags = ["chat"]

    @post("/chat", status_code=200, responses=errors(404, 409, 502, 503))
    async def chat(self, state: State, tenant: NamedDependency[str], data: JSONBody[ChatRequest]) -> Answer:
        """Answer a question in a thread; the answer cites files and lines."""
        service = _service(state)
        thread_id = await _begin(state, tenant, data)
        started = time.perf_counter()
        try:
            answer = await service.ask(data.message, data.kb, tenant=tenant, thread_id=thread_id)
        except SiftError as exc:
            message = exc.message
            await anyio.to_thread.run_sync(lambda: record_turn(
                state.engine, tenant, data.kb, thread_id, data.message, None, status="error", error=message))
            raise
        answer = answer.model_copy(update={"thread_id": thread_id})
        body = answer.model_dump(mode="json")
        timings = {"request_ms": round((time.perf_counter() - started) * 1000, 1)}
        await anyio.to_thread.run_sync(lambda: record_turn(
            state.engine, tenant, data.kb, thread_id, data.message, body, timings=timings))
        return answer

    @post("/chat/stream", status_code=200, responses=errors(404, 409, 503))
    async def chat_stream(self, state: State, tenant: NamedDependency[str], data: JSONBody[ChatRequest]) -> ServerSentEvent:
        """The same as ``/v1/chat`` as server-sent events: plan, retrieve, fuse, check, fallback, token,
        answer, error, done."""
        service = _service(state)
        thread_id = await _begin(state, tenant, data)
        return ServerSentEvent(chat_events(service, state.engine, tenant=tenant, kb=data.kb, thread_id=thread_id,
                                           question=data.message))

    @get("/threads", sync_to_thread=True, responses=errors())
    def threads(
        self,
        state: State,
        tenant: NamedDependency[str],
        kb: str | None = Parameter(default=None, pattern=KB_NAME),
        limit: int = Parameter(default=50, ge=1, le=500),
        offset: int = Parameter(default=0, ge=0, le=1_000_000),
    ) -> ThreadList:
        """The caller's threads, most recent first."""
        return ThreadList.model_validate({"threads": list_threads(state.engine, tenant, kb, limit, offset)})

    @get("/threads/{thread_id:str}", sync_to_thread=True, responses=errors(404))
    def thread(self, state: State, tenant: NamedDependency[str], thread_id: str = ThreadParam) -> ThreadDetail:
        """A thread's turns: questions, answers and citations."""
        return ThreadDetail.model_validate(get_thread(state.engine, thread_id, tenant))

    @delete("/threads/{thread_id:str}", status_code=204, responses=errors(404))
    async def delete(self, state: State, tenant: NamedDependency[str], thread_id: str = ThreadParam) -> None:
        """Delete a thread: its ownership row and its checkpointed state."""
        await anyio.to_thread.run_sync(delete_thread, state.engine, thread_id, tenant)
        if state.ask is not None:
            await state.ask.delete_thread(thread_id)
