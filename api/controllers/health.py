"""``GET /health`` (process up) and ``GET /ready`` (database, embedder, checkpointer and indexes loaded)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi import ResponseSpec

from sift.api.schemas import Health, Ready
from sift.api.services import HealthService


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
    def ready(self, health_service: NamedDependency[HealthService], request: Request) -> Response[dict[str, Any]]:
        """200 when the data directory is still there, the database answers and the embedder, checkpointer and index
        cache are loaded. Without a valid key (auth on) the body says only ``ready`` or ``not_ready``."""
        shown, ok = health_service.ready(request.headers.get("authorization"))
        return Response(shown.model_dump(exclude_none=True), status_code=200 if ok else 503)
