"""Test doubles around the real answer graph: a searcher that stalls chosen channels, a service with set limits."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from sift.graph.context import RunLimits
from sift.graph.service import AskService


class SlowSearcher:
    """The real searcher, with a fixed delay before the named search channels (to test time bounds)."""

    def __init__(self, inner: Any, delay_ms: dict[str, int]) -> None:
        self.inner, self.delay_ms = inner, delay_ms

    def channel(self, name: str, *args: Any, **kwargs: Any) -> Any:
        time.sleep(self.delay_ms.get(name, 0) / 1000)
        return self.inner.channel(name, *args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


class LimitedService(AskService):
    """The real service with some run limits replaced (short time bounds, fewer rounds)."""

    def __init__(self, *args: Any, limits: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, limits=replace(RunLimits(), **(limits or {})), **kwargs)
