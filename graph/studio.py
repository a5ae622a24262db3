"""The graph factory ``langgraph dev`` (LangGraph Studio) loads through ``langgraph.json``.

``langgraph dev`` refuses a graph compiled with a custom checkpointer (it brings its own), so this factory
returns the graph compiled without one. Studio can only send JSON, so its context schema is a few plain
tunables (``StudioContext``); the database, indexes, embedder and chat model are built here from ``SIFT_*``
settings the first time a node of a run needs them, and released when the server stops.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from sift.config import Settings
from sift.graph.build import RECURSION_LIMIT, build_graph
from sift.graph.context import MAX_ROUNDS, AskContext


@dataclass
class StudioContext:
    """What a Studio run may tune (the assistant's context); the dependencies are not part of it."""

    max_rounds: Annotated[int, Field(ge=1, le=20, description="Retrieval rounds at most (fallbacks included).")] \
        = MAX_ROUNDS
    channel_timeout_ms: Annotated[int, Field(ge=50, le=60_000, description="Time bound of each retrieve branch.")] \
        = 1500
    use_llm: Annotated[bool, Field(description="Use the configured chat model (SIFT_LLM_*); false answers "
                                               "with the extractive writer.")] = True


def _tunables(context: Any) -> StudioContext:
    """The run's tunables from whatever Studio sent (a ``StudioContext``, a dict or nothing)."""
    if isinstance(context, StudioContext):
        return context
    names = {f.name for f in dataclasses.fields(StudioContext)}
    given = {k: v for k, v in (context or {}).items() if k in names} if isinstance(context, dict) else {}
    return StudioContext(**given)


class LazyContext:
    """Opens the run context's dependencies on first use (once), so schema and state reads load nothing."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._ctx: AskContext | None = None

    def __call__(self, context: Any = None) -> AskContext:
        """The ``AskContext`` for one run: the shared dependencies with the run's tunables applied."""
        with self._lock:
            if self._ctx is None:
                from sift.chat import make_chat_model
                from sift.graph.service import open_resources

                engine, searcher = open_resources(self.settings)
                self._ctx = AskContext(engine=engine, searcher=searcher, settings=self.settings,
                                       chat_model=make_chat_model(self.settings))
            base = self._ctx
        tune = _tunables(context)
        limits = dataclasses.replace(base.limits, max_rounds=tune.max_rounds,
                                     channel_timeout_ms=tune.channel_timeout_ms)
        return dataclasses.replace(base, limits=limits, chat_model=base.chat_model if tune.use_llm else None)

    def close(self) -> None:
        """Stop the searcher's worker threads if they were started."""
        if self._ctx is not None and self._ctx.searcher is not None:
            self._ctx.searcher.close()


@asynccontextmanager
async def make_graph(config: RunnableConfig) -> AsyncIterator[Any]:
    """The ask graph for Studio, with its dependencies opened lazily from the environment's settings."""
    provide = LazyContext(Settings())
    try:
        graph = build_graph(provide, context_schema=StudioContext).compile(name="sift-ask")
        yield graph.with_config(recursion_limit=RECURSION_LIMIT)  # Studio's default, 25, is too few
    finally:
        provide.close()
