"""The locks that make one ingest of a knowledge base at a time: a file lock per kb on this host and, on PostgreSQL,
a session advisory lock that holds across hosts. The OS releases both when the process dies (it closes the file and
the connection), so a killed run never leaves a knowledge base locked.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, func, select

from sift.db import advisory_key, is_postgres
from sift.errors import Conflict
from sift.names import check_name


@contextmanager
def kb_lock(data_dir: Path, tenant: str, kb: str) -> Iterator[None]:
    """An exclusive, crash-safe lock per knowledge base (released by the OS when the process dies)."""
    check_name(tenant, "tenant")
    check_name(kb, "knowledge base")
    lock_dir = data_dir / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"{tenant}__{kb}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise Conflict(
                f"another ingest of knowledge base {kb!r} is running; wait for it to finish and run this again"
            ) from exc
        yield
    finally:
        os.close(fd)


@contextmanager
def ingest_lock(engine: Engine, data_dir: Path, tenant: str, kb: str) -> Iterator[None]:
    """The per-kb file lock and, on PostgreSQL, a session advisory lock that holds across hosts.

    Both are released when the process dies (the OS closes the file and the connection). Conflict when either
    is taken.
    """
    with kb_lock(data_dir, tenant, kb):
        if not is_postgres(engine):
            yield
            return
        key = advisory_key("sift", "ingest", tenant, kb)
        with engine.connect() as conn:
            got = conn.execute(select(func.pg_try_advisory_lock(key))).scalar()
            conn.commit()
            if not got:
                raise Conflict(
                    f"another ingest of knowledge base {kb!r} is running; wait for it to finish and run this again"
                )
            try:
                yield
            finally:
                conn.execute(select(func.pg_advisory_unlock(key)))
                conn.commit()
