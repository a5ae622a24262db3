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
    run_jobs: bool = Field(
        default=True,
        description="Claim and run queued ingest jobs in this process (a subprocess each), beside any `sift worker`; "
                    "off (SIFT_RUN_JOBS=0) when only workers should run them.",
    )
    ingest_timeout_s: float = Field(default=3600.0, description="An ingest subprocess running longer is killed.")
    embed_threads: int = Field(
        default=1, ge=1, le=256,
        description="Threads of the local model's forward pass. Requests run side by side, so one thread each "
                    "uses the cores better than a thread team per batch (and a team that spins while it waits).",
    )
    chat_concurrency: int = Field(
        default=4, ge=1, le=256,
        description="Chat graph runs (`/v1/chat`, `/v1/chat/stream`) at once per process; more wait in arrival order.",
    )
    sse_keepalive_s: float = Field(
        default=15.0, gt=0, le=300,
        description="A `: keep-alive` comment goes out on a chat stream quiet this long, so proxies keep it open.",
    )
    turn_wait_s: float = Field(
        default=60.0, gt=0, le=3600,
        description="A chat turn waits this long for the turn before it on the same thread (turns of one thread run "
                    "one at a time), then answers 409 with `Retry-After`.",
    )
    search_concurrency: int = Field(
        default=4, ge=1, le=64,
        description="Searches (`/v1/search`) computed at once per process; more wait in arrival order. A few at a "
                    "time keep CPU-bound requests from slowing each other down (and still fill an embedding batch).",
    )


def api_settings(settings: Settings) -> ApiSettings:
    """``settings`` as ApiSettings (API fields keep their defaults unless ``settings`` already has them)."""
    if isinstance(settings, ApiSettings):
        return settings
    return ApiSettings(**settings.model_dump())
