"""Bounded concurrency for the CPU-bound endpoints: a few runs at a time, the rest queued in arrival order.

With 32 clients on 2 cores, letting every request compute at once makes them share the interpreter lock and
finish together, late; an ``anyio.CapacityLimiter`` (waiters woken first-in, first-out) lets each run at full
speed and keeps the latency of the unlucky ones close to the median.

Chat and search share the process's CPU (and its interpreter lock) fairly: searches compute in their own threads
(never on the event loop, which every chat run's graph steps need), and while any chat run is asked for, at
most half of the search slots (at least one) compute at once, so a search load cannot take the CPU from chat.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:  # the graph loads with the app's lifespan (chat is off when it cannot)
    from sift.graph.models import Answer
    from sift.graph.service import AskService


class SearchSlots:
    """How many searches compute at once: ``limit``, or ``shared`` (half, at least 1) while chat runs are asked for.

    Used on the event loop only (no lock needed). Lowering the limiter's total lets running searches finish; new
    ones wait until fewer than ``shared`` run.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.shared = max(1, limit // 2)
        self.limiter = anyio.CapacityLimiter(limit)
        self.chats = 0

    def chat_started(self) -> None:
        """A chat run was asked for: searches get their shared part of the slots."""
        self.chats += 1
        self.limiter.total_tokens = self.shared

    def chat_ended(self) -> None:
        """A chat run ended (answered, failed or closed): with none left, searches get every slot back."""
        self.chats -= 1
        if self.chats == 0:
            self.limiter.total_tokens = self.limit


class LimitedAskService:
    """The chat service with at most ``limit`` graph runs (``ask`` or a whole ``stream``) at once; while a run is
    asked for (waiting or running), ``search`` (the search endpoint's slots) computes fewer searches at once."""

    def __init__(self, service: AskService, limit: int, search: SearchSlots | None = None) -> None:
        self.service = service
        self.limiter = anyio.CapacityLimiter(limit)
        self.search = search

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def ask(self, *args: Any, **kwargs: Any) -> Answer:
        """``service.ask`` once a slot is free."""
        with self._chatting():
            async with self.limiter:
                return await self.service.ask(*args, **kwargs)

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        """``service.stream`` once a slot is free; the slot is held until the stream ends or is closed."""
        with self._chatting():
            async with self.limiter:
                stream = self.service.stream(*args, **kwargs)
                try:
                    async for item in stream:
                        yield item
                finally:
                    await stream.aclose()

    @contextmanager
    def _chatting(self) -> Iterator[None]:
        if self.search is not None:
            self.search.chat_started()
        try:
            yield
        finally:
            if self.search is not None:
                self.search.chat_ended()
