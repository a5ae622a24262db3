"""Threads as the API serves them, over ``sift.graph.threads`` (the store ``sift ask --thread`` uses too) and the
chat service's checkpointed state."""

from __future__ import annotations

from collections.abc import Iterable

import anyio
from sqlalchemy import Engine

from sift.api.limits import LimitedAskService
from sift.api.schemas import ThreadCreate, ThreadDetail, ThreadList, ThreadSummary
from sift.catalog import get_serving_kb
from sift.graph.threads import delete_thread, get_thread, list_threads, put_thread


class ThreadService:
    """The tenant's threads: listed, created or updated, read and deleted with their state."""

    def __init__(self, engine: Engine, ask: LimitedAskService | None) -> None:
        self.engine = engine
        self.ask = ask

    def list_threads(self, tenant: str, kb: str | None, limit: int, offset: int) -> ThreadList:
        """The tenant's threads, most recent first."""
        return ThreadList.model_validate({"threads": list_threads(self.engine, tenant, kb, limit, offset)})

    async def put(self, tenant: str, thread_id: str, data: ThreadCreate) -> tuple[ThreadSummary, bool]:
        """The thread ``thread_id`` on a served knowledge base, created when new; ``(thread, created)``."""
        await anyio.to_thread.run_sync(get_serving_kb, self.engine, data.kb, tenant)
        thread, created = await anyio.to_thread.run_sync(
            lambda: put_thread(self.engine, tenant, thread_id, data.kb, title=data.title, meta=data.metadata))
        return ThreadSummary.model_validate(thread), created

    def get(self, tenant: str, thread_id: str) -> ThreadDetail:
        """A thread's turns: questions, answers and citations."""
        return ThreadDetail.model_validate(get_thread(self.engine, tenant, thread_id))

    async def delete(self, tenant: str, thread_id: str) -> None:
        """Delete a thread's ownership row and its checkpointed state (its records stay)."""
        key = await anyio.to_thread.run_sync(delete_thread, self.engine, tenant, thread_id)
        await self.forget_states([key])

    async def forget_states(self, keys: Iterable[str]) -> None:
        """Delete the checkpointed state under ``keys`` (nothing when chat is off)."""
        if self.ask is not None:
            for key in keys:
                await self.ask.delete_thread(key)
