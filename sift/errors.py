"""One small exception hierarchy; the API maps it to HTTP status codes in one place."""

from __future__ import annotations

import errno


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


class VectorsNotReady(IndexNotReady):
    """The serving generation is searchable by keyword, but its vectors are still being computed."""


class IndexDamaged(IndexNotReady):
    """A generation's index files are missing, truncated or corrupt (the message says which and how to rebuild)."""


class ModelMissing(SiftError):
    """The local embedding model's files are not installed (the message names the command that installs them)."""

    status = 503


class UpstreamError(SiftError):
    """A configured remote service (LLM, embeddings) failed after retries."""

    status = 502


class EnvironmentFailure(SiftError):
    """The machine or its files failed, not the request or sift: disk full, permission denied, a damaged database.
    The message says what to fix; running the same command again afterwards is safe."""

    status = 503


class DiskFull(EnvironmentFailure):
    """A write failed for lack of space (or quota, or a file size limit)."""


class AccessDenied(EnvironmentFailure):
    """The operating system refused access to a file or directory sift needs."""


class StorageDamaged(EnvironmentFailure):
    """The database file is not a database or is malformed."""


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_DENIED = {errno.EACCES, errno.EPERM, errno.EROFS}


def from_environment(exc: BaseException) -> EnvironmentFailure | None:
    """``exc`` (or the error it wraps) as an EnvironmentFailure when the machine caused it, else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _classify(current)
        if found is not None:
            return found
        current = getattr(current, "orig", None) or current.__cause__ or current.__context__
    return None


def _classify(exc: BaseException) -> EnvironmentFailure | None:
    if isinstance(exc, EnvironmentFailure):
        return exc
    if isinstance(exc, OSError) and exc.errno is not None:
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in _FULL:
            return DiskFull(f"no space left to write{where}: {exc.strerror}; free disk space (or raise the quota) "
                            "and run it again: nothing half-written is served")
        if exc.errno in _DENIED:
            return AccessDenied(f"permission denied{where}: {exc.strerror}; give the user running sift access to "
                                "it (or choose another SIFT_DATA_DIR) and run it again")
        return None
    module = type(exc).__module__
    if module not in ("sqlite3", "_sqlite3"):
        return None
    text = str(exc).lower()
    if "disk is full" in text or "database or disk is full" in text:
        return DiskFull("the database's disk is full; free disk space and run it again: nothing half-written "
                        "is served")
    if "readonly database" in text or "unable to open database" in text:
        return AccessDenied(f"the database cannot be written or opened ({exc}); check the permissions of "
                            "SIFT_DATA_DIR and sift.db, and run it again")
    if "not a database" in text or "malformed" in text:
        return StorageDamaged(f"the database file is damaged ({exc}); restore sift.db from a backup, or move it "
                              "aside and ingest your repositories again")
    if "disk i/o error" in text:
        return StorageDamaged(f"the database could not be read or written ({exc}); check the disk (and that "
                              "SIFT_DATA_DIR still exists), then run it again")
    return None
