"""The graph factory ``langgraph dev`` (LangGraph Studio) loads through ``langgraph.json``.

``langgraph dev`` refuses a graph compiled with a custom checkpointer (it brings its own), so this factory
returns the graph compiled without one. Studio can only send JSON, so the database, indexes and embedder are
opened from ``SIFT_*`` settings the first time a node of a run needs them, and released when the run ends.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig

from sift.config import Settings
from sift.graph.build import build_graph
from sift.graph.context import AskContext


class LazyContext:
    """Opens the run context on first use (once), so schema and state reads never load the embedder."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._ctx: AskContext | None = None

    def __call__(self) -> AskContext:
        with self._lock:
            if self._ctx is None:
                from sift.chat import make_chat_model
                from sift.graph.service import open_resources

                engine, searcher = open_resources(self.settings)
                self._ctx = AskContext(engine=engine, searcher=searcher, settings=self.settings,
                                       chat_model=make_chat_model(self.settings))
            return self._ctx

    def close(self) -> None:
        """Stop the searcher's worker threads if they were started."""
        if self._ctx is not None and self._ctx.searcher is not None:
            self._ctx.searcher.close()


@asynccontextmanager
async def make_graph(config: RunnableConfig) -> AsyncIterator[Any]:
    """The ask graph for Studio, with its context opened lazily from the environment's settings."""
    provide = LazyContext(Settings())
    try:
        yield build_graph(provide).compile(name="sift-ask")
    finally:
        provide.close()
