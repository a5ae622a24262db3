"""Settings of the REST service: everything in ``sift.config.Settings`` plus auth, body limit and ingest roots."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from sift.config import Settings


class ApiSettings(Settings):
    """``Settings`` with the API's own fields (env ``SIFT_AUTH``, ``SIFT_MAX_BODY_BYTES``, ``SIFT_ALLOWED_ROOTS``)."""

    auth: bool = Field(default=True, description="Require `Authorization: Bearer <key>`; off only on loopback.")
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, description="Largest accepted request body.")
    allowed_roots: list[Path] = Field(
        default_factory=list,
        description="Server-side directories ingest jobs may read (JSON list in SIFT_ALLOWED_ROOTS); empty = none.",
    )
    ingest_timeout_s: float = Field(default=3600.0, description="An ingest subprocess running longer is killed.")


def api_settings(settings: Settings) -> ApiSettings:
    """``settings`` as ApiSettings (API fields keep their defaults unless ``settings`` already has them)."""
    if isinstance(settings, ApiSettings):
        return settings
    return ApiSettings(**settings.model_dump())
