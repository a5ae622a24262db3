"""The MCP server mounted in the REST app at ``/mcp``: one ``sift serve`` serves both, on the app's own engine,
indexes, model and chat service, behind the same API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

from litestar import Litestar, asgi
from litestar.handlers import ASGIRouteHandler

from sift.api.mcp.http import TenantAuth
from sift.api.mcp.state import AppState
from sift.api.mcp.tools import build_server

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from starlette.types import Receive, Scope, Send

    from sift.api.settings import ApiSettings

PATH = "/mcp"


def mcp_mount(settings: ApiSettings) -> tuple[ASGIRouteHandler, Callable[[Litestar], AbstractAsyncContextManager[None]]]:
    """The ``/mcp`` route handler, and the lifespan that runs its sessions once the app's state is open."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

    source = AppState(settings)
    server = build_server(source)
    server.streamable_http_app(streamable_http_path=PATH, host="0.0.0.0")  # noqa: S104 - builds the session manager

    async def engine() -> Engine:
        return (await source.get()).engine

    endpoint = TenantAuth(StreamableHTTPASGIApp(server.session_manager), settings, engine)

    @asgi(PATH, is_mount=True, copy_scope=True)
    async def mcp(scope: Scope, receive: Receive, send: Send) -> None:
        await endpoint(scope, receive, send)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        source.state = app.state
        async with server.session_manager.run():
            yield
        source.state = None

    return mcp, lifespan
