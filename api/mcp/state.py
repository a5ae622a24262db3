"""What the MCP tools run on: the REST app's state (engine, searcher, chat service, search limiter), either the
running Litestar app's own (``/mcp`` mounted in ``sift serve``) or one ``sift mcp`` opens on the first tool call.

Nothing here loads at start-up: the database, the indexes, the query encoder and the answer graph open when a
tool first needs them, once, so ``initialize`` and ``tools/list`` answer at once.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Protocol

import anyio

from sift.api.settings import ApiSettings

if TYPE_CHECKING:  # Litestar loads with the first tool call (or is there already, in `sift serve`)
    from litestar.datastructures import State

log = logging.getLogger(__name__)


class StateSource(Protocol):
    """Hands the tools the app state, opened when first asked for."""

    settings: ApiSettings

    async def get(self) -> State: ...


class AppState:
    """The running REST app's state, handed over by its lifespan once it is open (before the first request)."""

    def __init__(self, settings: ApiSettings) -> None:
        self.settings = settings
        self.state: State | None = None

    async def get(self) -> State:
        if self.state is None:
            from sift.errors import IndexNotReady

            raise IndexNotReady("the server is still starting; try again in a moment")
        return self.state


class LazyState:
    """The app state of a ``sift mcp`` process: opened on the first tool call, closed by ``aclose``."""

    def __init__(self, settings: ApiSettings) -> None:
        self.settings = settings
        self._state: State | None = None
        self._lock = anyio.Lock()
        self._stack = contextlib.AsyncExitStack()

    async def get(self) -> State:
        async with self._lock:
            if self._state is None:
                self._state = await self._open()
        return self._state

    async def _open(self) -> State:
        from litestar.datastructures import State

        from sift.api.app import open_state
        from sift.embed import check_embedder

        await anyio.to_thread.run_sync(check_embedder, self.settings)
        state = State({})
        # As the REST app opens it (the same encoder, cache and heap settling), each index loaded on first use.
        await self._stack.enter_async_context(open_state(state, self.settings, warm=False, run_jobs=False))
        log.info("mcp: resources open (data %s)", self.settings.data_dir)
        return state

    async def aclose(self) -> None:
        self._state = None
        await self._stack.aclose()
