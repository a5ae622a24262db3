"""Readiness: whether the data directory is there, the database answers and the app's resources are loaded."""

from __future__ import annotations

from litestar.datastructures import State
from sqlalchemy import text

from sift.api.auth import bearer_token, tenant_for_key
from sift.api.schemas import Ready


class HealthService:
    """Reads the app's resources as they are now (the lifespan sets them when it opens and clears them as it
    closes), so it holds the state itself rather than a copy of them."""

    def __init__(self, state: State) -> None:
        self.state = state

    def ready(self, authorization: str | None) -> tuple[Ready, bool]:
        """``(body, ready)``: the body in full when the caller may see details (auth off, or a live key of any
        tenant in ``authorization``), else only its status."""
        state = self.state
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
        return (body if self._may_see_details(authorization) else Ready(status=body.status)), ok

    def _may_see_details(self, authorization: str | None) -> bool:
        """Auth is off, or the request carries a live key (of any tenant)."""
        if not self.state.settings.auth:
            return True
        if not authorization:
            return False
        try:
            return tenant_for_key(self.state.engine, bearer_token(authorization)) is not None
        except Exception:  # noqa: BLE001 - a malformed header or an unreachable database shows no details
            return False
