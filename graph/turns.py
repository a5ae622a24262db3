"""One turn at a time per thread, across threads, processes and (on PostgreSQL) API replicas.

A turn reads the thread's checkpoint, runs the graph and writes the next checkpoint; two turns of one thread
running at once would both start from the same checkpoint and the second write would drop the first turn. So a
turn holds its thread's lock from before the graph reads until the turn is recorded:

- on PostgreSQL, a session advisory lock keyed by tenant and thread (every replica shares the database);
- on SQLite (one host), an ``flock`` on ``DATA_DIR/locks/turns/<key>.lock``.

Both are released by the OS or the server when the holder dies. A turn that cannot take the lock within
``wait_s`` gets ``ThreadBusy`` (HTTP 409 with ``Retry-After``), never a silent drop.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
from sqlalchemy import Connection, Engine, func, select

from sift.db import advisory_key, is_postgres
from sift.errors import Conflict

RETRY_AFTER_S = 2
TURN_WAIT_S = 60.0  # the API's default (SIFT_TURN_WAIT_S); ``sift ask --thread`` waits as long
_POLL_S = (0.02, 0.05, 0.1, 0.2)  # growing pauses between tries, then the last one repeated


class ThreadBusy(Conflict):
    """Another turn of the thread is still running; ``retry_after`` (seconds) is when to try again."""

    def __init__(self, thread_id: str, waited_s: float) -> None:
        super().__init__(f"thread {thread_id!r} is still answering another message (waited {waited_s:.0f} s); "
                         f"send this one again after {RETRY_AFTER_S} s", field="thread_id")
        self.retry_after = RETRY_AFTER_S


class TurnLock:
    """The lock of one thread's turns, taken with ``try_acquire`` (never blocks) and given back with ``release``."""

    def __init__(self, engine: Engine, data_dir: Path, tenant: str, thread_id: str) -> None:
        self.engine, self.tenant, self.thread_id = engine, tenant, thread_id
        self.postgres = is_postgres(engine)
        digest = hashlib.blake2b(f"{tenant}\x00{thread_id}".encode(), digest_size=16).hexdigest()
        self.path = data_dir / "locks" / "turns" / f"{digest}.lock"
        self._fd: int | None = None
        self._conn: Connection | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False when another turn holds it."""
        if self.postgres:
            return self._try_advisory()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def _try_advisory(self) -> bool:
        conn = self.engine.connect()
        try:
            got = bool(conn.execute(select(func.pg_try_advisory_lock(self._key()))).scalar())
            conn.commit()
        except BaseException:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def _key(self) -> int:
        return advisory_key("sift", "turn", self.tenant, self.thread_id)

    def release(self) -> None:
        """Give the lock back (a no-op when not held)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops its flock
            self._fd = None
        if self._conn is not None:
            try:
                self._conn.execute(select(func.pg_advisory_unlock(self._key())))
                self._conn.commit()
            finally:
                self._conn.close()  # a closed session drops its advisory locks in any case
                self._conn = None

    def pauses(self, wait_s: float) -> Iterator[float]:
        """Pauses between tries until ``wait_s`` has passed; raises ``ThreadBusy`` then."""
        started = time.monotonic()
        for i in itertools.count():
            left = wait_s - (time.monotonic() - started)
            if left <= 0:
                raise ThreadBusy(self.thread_id, time.monotonic() - started)
            yield min(left, _POLL_S[min(i, len(_POLL_S) - 1)])


@asynccontextmanager
async def thread_turn(engine: Engine, data_dir: Path, tenant: str, thread_id: str,
                      wait_s: float) -> AsyncIterator[TurnLock]:
    """Hold the thread's turn lock (waiting up to ``wait_s`` for the turn before, else ``ThreadBusy``)."""
    lock = TurnLock(engine, data_dir, tenant, thread_id)
    pauses = lock.pauses(wait_s)
    try:  # released even when cancelled while a try that succeeded was still running in its worker thread
        while not await anyio.to_thread.run_sync(lock.try_acquire):
            await anyio.sleep(next(pauses))
        yield lock
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lock.release)


@contextmanager
def thread_turn_sync(engine: Engine, data_dir: Path, tenant: str, thread_id: str, wait_s: float) -> Iterator[None]:
    """``thread_turn`` for callers without an event loop (``sift ask --thread``)."""
    lock = TurnLock(engine, data_dir, tenant, thread_id)
    pauses = lock.pauses(wait_s)
    try:
        while not lock.try_acquire():
            time.sleep(next(pauses))
        yield
    finally:
        lock.release()
