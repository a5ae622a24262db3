"""The MCP server over streamable HTTP (``sift mcp --http``), behind the REST API's keys.

With auth on, every request to ``/mcp`` must carry ``Authorization: Bearer <key>`` (a ``sift keys create`` key);
the key's tenant goes into the request scope, where the tools read it (``tools.tenant_of``), so a tenant sees only
its own knowledge bases, as over REST. A missing or unknown key is a 401 with the REST API's error body.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from sift.api.mcp.tools import TENANT_KEY

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from starlette.types import ASGIApp, Receive, Scope, Send

    from sift.api.settings import ApiSettings


class TenantAuth:
    """ASGI middleware: resolves the caller's tenant from its API key (or the default tenant with auth off)."""

    def __init__(self, app: ASGIApp, settings: ApiSettings, engine: Callable[[], Awaitable[Engine]]) -> None:
        self.app = app
        self.settings = settings
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tenant = self.settings.tenant
        if self.settings.auth:
            from sift.api.auth import bearer_token, tenant_for_key
            from sift.errors import SiftError

            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            try:
                key = bearer_token(headers.get("authorization"))
            except SiftError as exc:
                await _unauthorized(send, exc.message)
                return
            found = await anyio.to_thread.run_sync(tenant_for_key, await self.engine(), key)
            if found is None:
                await _unauthorized(send, "unknown or revoked API key")
                return
            tenant = found
        await self.app({**scope, TENANT_KEY: tenant}, receive, send)


async def _unauthorized(send: Send, detail: str) -> None:
    body = json.dumps({"error": "unauthorized", "detail": detail}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def serve_http(kb: str | None, settings: ApiSettings, host: str, port: int) -> None:
    """Run ``sift mcp --http``: the MCP endpoint at ``http://HOST:PORT/mcp`` under uvicorn."""
    import uvicorn

    from sift.api.mcp.state import LazyState
    from sift.api.mcp.tools import build_server

    source = LazyState(settings)
    server = build_server(source, kb)
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    opened: dict[str, Any] = {}

    async def engine() -> Engine:
        # The key lookup needs only the database, not the models and indexes the tools load.
        if "engine" not in opened:
            from sift.db import open_database

            opened["engine"] = await anyio.to_thread.run_sync(open_database, settings)
        return opened["engine"]

    uvicorn.run(TenantAuth(app, settings, engine), host=host, port=port, log_level="warning")
