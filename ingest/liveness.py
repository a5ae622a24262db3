"""Is the process running an ingest job still alive? The heartbeat that lets other hosts tell, and signals.

A job records the process that runs it: host name, pid and the pid's start time (``/proc/<pid>/stat`` field 22,
clock ticks since boot), so a pid reused by an unrelated process after a reboot or a wrap-around does not pass for
the dead one. On the job's own host that identity decides at once; from another host only the heartbeat can:
a running job whose heartbeat is older than the stale limit is presumed dead.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select, update
from sqlalchemy.sql.elements import ColumnElement

from sift.db import is_postgres
from sift.db.tables import IngestJob

log = logging.getLogger(__name__)

#: Seconds between heartbeats of a running job; well under every stale limit in use.
HEARTBEAT_S = 10.0
#: A running job whose heartbeat is older than this, on a host that cannot check its pid, is presumed dead.
DEFAULT_STALE_AFTER_S = 120.0


@dataclass(frozen=True, slots=True)
class ProcessId:
    """Where a job runs: host, pid and the pid's start time (None where /proc is not available)."""

    host: str
    pid: int
    started: int | None

    def values(self) -> dict[str, Any]:
        """Column values of ``ingest_jobs`` for this process."""
        return {"host": self.host, "pid": self.pid, "pid_started": self.started}

    def __str__(self) -> str:
        return f"process {self.pid} on {self.host}"


def _start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot, or None when /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; fields after its last ')' are plain.
    fields = stat[stat.rindex(b")") + 2 :].split()
    return int(fields[19])


def current_process() -> ProcessId:
    """The identity of this process."""
    pid = os.getpid()
    return ProcessId(socket.gethostname(), pid, _start_ticks(pid))


def is_gone(host: str | None, pid: int | None, started: int | None) -> bool | None:
    """True when the recorded process is certainly dead, False when it is alive, None when this host cannot tell."""
    if host is None or pid is None or host != socket.gethostname():
        return None
    if os.path.isdir("/proc/self"):
        if not os.path.isdir(f"/proc/{pid}"):
            return True
        now = _start_ticks(pid)
        if now is None:
            return True  # exited between the two looks
        # A changed start time: the pid now belongs to another process. An exited process its parent has not
        # waited for yet (a zombie) counts as alive: the parent (the API's job runner) knows the signal that
        # ended it and records that; a parent that is gone hands it to init, which reaps it at once.
        return started is not None and now != started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def signal_name(returncode: int) -> str | None:
    """``SIGKILL`` for a subprocess return code of -9 (killed by a signal), else None."""
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def beat(engine: Engine, job_id: int) -> bool:
    """Refresh a running job's heartbeat; False when the job is no longer running."""
    with engine.begin() as conn:
        done = conn.execute(
            update(IngestJob).where(IngestJob.id == job_id, IngestJob.status == "running")
            .values(heartbeat_at=func.now())
        )
    return done.rowcount == 1


class Interrupted(BaseException):
    """SIGTERM or SIGINT arrived during an ingest (a BaseException, so no ``except Exception`` swallows it)."""

    def __init__(self, signame: str) -> None:
        super().__init__(f"interrupted by {signame}")
        self.signame = signame


class StopRequest:
    """Set by SIGTERM/SIGINT; the pipeline calls :meth:`check` between files and batches.

    Raising from the signal handler itself could interrupt a database transaction half-way (leaving SQLite's write
    lock to a connection nobody closes), so the first signal only asks; a second one stops at once.
    """

    def __init__(self) -> None:
        self.signame: str | None = None

    def request(self, signame: str) -> None:
        """Record the first signal; raise on the second (the user insists)."""
        if self.signame is not None:
            raise Interrupted(signame)
        self.signame = signame

    def check(self) -> None:
        """Raise :class:`Interrupted` when a signal has asked the run to stop."""
        if self.signame is not None:
            raise Interrupted(self.signame)


@contextmanager
def interrupt_on_signals() -> Iterator[StopRequest]:
    """Route SIGTERM and SIGINT to a :class:`StopRequest` while the block runs (main thread only)."""
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, _frame: object) -> None:
        stop.request(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Heartbeat:
    """A daemon thread that refreshes one job's heartbeat every ``interval_s`` until stopped."""

    def __init__(self, engine: Engine, job_id: int, interval_s: float = HEARTBEAT_S) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, args=(engine, job_id, interval_s), daemon=True,
                                        name=f"sift-heartbeat-{job_id}")

    def _beat(self, engine: Engine, job_id: int, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                if not beat(engine, job_id):
                    return
            except Exception:  # a database hiccup must not kill the job; the next beat retries
                log.exception("heartbeat of ingest job %d failed", job_id)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def db_cutoff(engine: Engine, stale_after_s: float) -> ColumnElement[Any]:
    """The database clock minus ``stale_after_s`` (one clock for every host)."""
    if is_postgres(engine):
        return func.now() - func.make_interval(0, 0, 0, 0, 0, 0, float(stale_after_s))
    return func.datetime("now", f"{-float(stale_after_s):+.3f} seconds")


def reap_dead_jobs(engine: Engine, *, kb_id: int | None = None, job_id: int | None = None,
                   stale_after_s: float = DEFAULT_STALE_AFTER_S) -> list[int]:
    """Mark ``running`` jobs whose process is dead as failed, saying why; returns their ids.

    Dead means: on this host, the recorded pid is gone or belongs to another process now; on any other host,
    no heartbeat for ``stale_after_s``. A dead job is never re-run: running it again takes a new request.
    """
    stale = (IngestJob.heartbeat_at.is_(None)) | (IngestJob.heartbeat_at < db_cutoff(engine, stale_after_s))
    stmt = select(IngestJob.id, IngestJob.host, IngestJob.pid, IngestJob.pid_started, IngestJob.worker,
                  stale.label("stale")).where(IngestJob.status == "running")
    if kb_id is not None:
        stmt = stmt.where(IngestJob.kb_id == kb_id)
    if job_id is not None:
        stmt = stmt.where(IngestJob.id == job_id)
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
    reaped = []
    for row in rows:
        gone = is_gone(row.host, row.pid, row.pid_started)
        if gone:
            reason = (f"process {row.pid} on {row.host} is gone without recording how it ended: a signal it cannot "
                      "catch ended it (SIGKILL, e.g. from the out-of-memory killer) or it crashed; its output says "
                      "which. Run the ingest again")
        elif gone is None and row.stale:
            reason = (f"no heartbeat from {row.worker or row.host or 'its worker'} for over {stale_after_s:.0f}s: "
                      "its process is presumed dead; run the ingest again")
        else:
            continue
        with engine.begin() as conn:
            done = conn.execute(update(IngestJob).where(IngestJob.id == row.id, IngestJob.status == "running")
                                .values(status="failed", error=reason, finished_at=func.now())).rowcount
        if done:
            log.warning("ingest job %d marked failed: %s", row.id, reason)
            reaped.append(row.id)
    return reaped
