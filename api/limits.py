"""Bounded concurrency for the CPU-bound endpoints: a few runs at a time, the rest queued in arrival order.

With 32 clients on 2 cores, letting every request compute at once makes them share the interpreter lock and
finish together, late; an ``anyio.CapacityLimiter`` (waiters woken first-in, first-out) lets each run at full
speed and keeps the latency of the unlucky ones close to the median.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:  # the graph loads with the app's lifespan (chat is off when it cannot)
    from sift.graph.service import AskService
    from sift.graph.state import Answer


class LimitedAskService:
    """The chat service with at most ``limit`` graph runs (``ask`` or a whole ``stream``) at once."""

    def __init__(self, service: AskService, limit: int) -> None:
        self.service = service
        self.limiter = anyio.CapacityLimiter(limit)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.service, name)

    async def ask(self, *args: Any, **kwargs: Any) -> Answer:
        """``service.ask`` once a slot is free."""
        async with self.limiter:
            return await self.service.ask(*args, **kwargs)

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        """``service.stream`` once a slot is free; the slot is held until the stream ends or is closed."""
        async with self.limiter:
            stream = self.service.stream(*args, **kwargs)
            try:
                async for item in stream:
                    yield item
            finally:
                await stream.aclose()
