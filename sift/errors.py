"""One small exception hierarchy; the API maps it to HTTP status codes in one place."""

from __future__ import annotations


class SiftError(Exception):
    """Base class: a problem the user can act on. ``status`` is the HTTP status the API answers with."""

    status = 500

    def __init__(self, message: str, *, field: str | None = None, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.position = position


class InvalidQuery(SiftError):
    """The request or query is malformed; ``position`` (1-based column) points at the problem when known."""

    status = 400


class OutsideRoot(InvalidQuery):
    """A path escapes the knowledge base's root (``..``, absolute paths, symlinks)."""


class NotFound(SiftError):
    """A knowledge base, file, thread or job does not exist (or is not visible to this tenant)."""

    status = 404


class KbNotFound(NotFound):
    """The knowledge base does not exist in the database looked in (the CLI names that data directory)."""


class Conflict(SiftError):
    """The operation clashes with one already running (e.g. two ingests of one knowledge base)."""

    status = 409


class IndexNotReady(SiftError):
    """The knowledge base has no published index generation yet."""

    status = 503


class ModelMissing(SiftError):
    """The local embedding model's files are not installed (the message names the command that installs them)."""

    status = 503


class UpstreamError(SiftError):
    """A configured remote service (LLM, embeddings) failed after retries."""

    status = 502
