"""Chat: ``POST /v1/chat`` and ``POST /v1/chat/stream`` (SSE), in threads of ``sift.graph.threads``."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.response import ServerSentEvent

from sift.api.controllers.common import errors
from sift.api.schemas import Answer, ChatRequest
from sift.api.services import ChatService
from sift.api.sse import STREAM_RESPONSE


class ChatController(Controller):
    """Questions answered with citations, in threads that survive restarts."""

    path = "/v1"
    tags = ["chat"]

    @post("/chat", status_code=200, responses=errors(404, 409, 502, 503))
    async def chat(self, chat_service: NamedDependency[ChatService], tenant: NamedDependency[str],
                   data: JSONBody[ChatRequest]) -> Answer:
        """Answer a question in a thread (new, or named by the client); the answer cites files and lines."""
        return await chat_service.answer(tenant, data)

    @post("/chat/stream", status_code=200, responses={200: STREAM_RESPONSE, **errors(404, 409, 503)})
    async def chat_stream(self, chat_service: NamedDependency[ChatService], tenant: NamedDependency[str],
                          data: JSONBody[ChatRequest]) -> ServerSentEvent:
        """The same as ``/v1/chat`` as server-sent events: plan, retrieve, fuse, check, fallback, token,
        answer, error, done."""
        return ServerSentEvent(await chat_service.stream(tenant, data))
