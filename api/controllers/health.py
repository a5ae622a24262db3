"""``GET /health`` (process up) and ``GET /ready`` (database, embedder, checkpointer and indexes loaded)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.datastructures import State
from litestar.openapi import ResponseSpec
from sqlalchemy import text

from sift.api.auth import bearer_token, tenant_for_key
from sift.api.schemas import Health, Ready


class HealthController(Controller):
    """Liveness and readiness probes (no auth)."""

    tags = ["health"]

    @get("/health", summary="Process is up")
    async def health(self) -> Health:
        """Always ok while the process serves requests."""
        return Health(status="ok")

    @get("/ready", summary="Database and indexes loaded", sync_to_thread=True,
         responses={200: ResponseSpec(data_container=Ready, description="Ready"),
                    503: ResponseSpec(data_container=Ready, description="Not ready")})
    def ready(self, state: State, request: Request) -> Response[dict[str, Any]]:
        """200 when the data directory is still there, the database answers and the embedder, checkpointer and index
        cache are loaded. Without a valid key (auth on) the body says only ``ready`` or ``not_ready``."""
        problem = state.data_dir.problem() if state.data_dir is not None else None
        try:
            with state.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            database = True
        except Exception:  # noqa: BLE001 - any database failure means not ready
            database = False
        ok = problem is None and database and state.embedder is not None and state.checkpointer is not None
        body = Ready(
            status="ready" if ok else "not_ready", database=database, embedder=state.embedder is not None,
            checkpointer=state.checkpointer is not None, chat=state.ask is not None,
            indexes_loaded=state.cache.loaded(), data_dir=problem is None, reason=problem,
        )
        shown = body if _may_see_details(state, request) else Ready(status=body.status)
        return Response(shown.model_dump(exclude_none=True), status_code=200 if ok else 503)


def _may_see_details(state: State, request: Request) -> bool:
    """Auth is off, or the request carries a live key (of any tenant)."""
    if not state.settings.auth:
        return True
    header = request.headers.get("authorization")
    if not header:
        return False
    try:
        return tenant_for_key(state.engine, bearer_token(header)) is not None
    except Exception:  # noqa: BLE001 - a malformed header or an unreachable database shows no details
        return False
