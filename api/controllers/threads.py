"""Threads: ``GET /v1/threads``, ``PUT/GET/DELETE /v1/threads/{thread_id}`` over ``sift.graph.threads``.

The same store ``sift ask --thread`` and ``sift threads`` use, so a thread started on either side is listed,
read and continued on the other.
"""

from __future__ import annotations

from litestar import Controller, Response, delete, get, put
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec
from litestar.params import JSONBody, Parameter

from sift.api.controllers.common import errors
from sift.api.schemas import KB_NAME, ThreadCreate, ThreadDetail, ThreadList, ThreadSummary
from sift.api.services import ThreadService
from sift.models import THREAD_ID, THREAD_ID_MAX

ThreadParam = Parameter(pattern=THREAD_ID, min_length=1, max_length=THREAD_ID_MAX,
                        description="the thread's id: a uuid, a slug or an id of the client's such as "
                                    "`slack:C024BE91L` (no `/`, spaces or control characters)")


class ThreadController(Controller):
    """Conversations of the caller's tenant: named by the client or by the server, listed, read and deleted."""

    path = "/v1/threads"
    tags = ["threads"]

    @get("/", operation_id="list_threads", sync_to_thread=True, responses=errors())
    def threads(
        self,
        thread_service: NamedDependency[ThreadService],
        tenant: NamedDependency[str],
        kb: str | None = Parameter(default=None, pattern=KB_NAME),
        limit: int = Parameter(default=50, ge=1, le=500),
        offset: int = Parameter(default=0, ge=0, le=1_000_000),
    ) -> ThreadList:
        """The caller's threads, most recent first (those started by `sift ask` too)."""
        return thread_service.list_threads(tenant, kb, limit, offset)

    @put("/{thread_id:str}", operation_id="put_thread", status_code=200,
         responses={201: ResponseSpec(data_container=ThreadSummary, description="The thread was created."),
                    **errors(404, 409)})
    async def create(self, thread_service: NamedDependency[ThreadService], tenant: NamedDependency[str],
                     data: JSONBody[ThreadCreate], thread_id: str = ThreadParam) -> Response[ThreadSummary]:
        """Create the thread ``thread_id`` on a knowledge base (201), or return it when it exists (200);
        a title or metadata given replaces the stored one. Sending a message to a new id creates it too."""
        thread, created = await thread_service.put(tenant, thread_id, data)
        return Response(thread, status_code=201 if created else 200)

    @get("/{thread_id:str}", operation_id="get_thread", sync_to_thread=True, responses=errors(404))
    def thread(self, thread_service: NamedDependency[ThreadService], tenant: NamedDependency[str],
               thread_id: str = ThreadParam) -> ThreadDetail:
        """A thread's turns: questions, answers and citations."""
        return thread_service.get(tenant, thread_id)

    @delete("/{thread_id:str}", operation_id="delete_thread", status_code=204, responses=errors(404))
    async def remove(self, thread_service: NamedDependency[ThreadService], tenant: NamedDependency[str],
                     thread_id: str = ThreadParam) -> None:
        """Delete a thread: its ownership row and its checkpointed state (its records stay)."""
        await thread_service.delete(tenant, thread_id)
