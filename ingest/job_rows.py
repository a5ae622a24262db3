"""An ingest run's row in ``ingest_jobs``: claimed or created when the run starts, its summary when it succeeds, the
error when it fails. The summary (``new_summary``) is the dict the run fills in and the CLI and API report."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select, update
from sqlalchemy.sql.elements import ColumnElement

from sift.catalog import KbRef
from sift.db.tables import IngestJob
from sift.errors import NotFound, from_environment
from sift.ingest.liveness import ProcessId

log = logging.getLogger(__name__)

#: Key of a queued job's ``stats`` under which its per-job options ride until the job succeeds.
OPTIONS_KEY = "options"


class JobCancelled(NotFound):
    """The job a run was started for is gone (its kb was deleted), already ended, or owned by another process."""


def new_summary(kb: KbRef, number: int, job_id: int) -> dict[str, Any]:
    return {
        "kb": kb.name, "tenant": kb.tenant, "job_id": job_id, "generation": number, "status": "running",
        "files": 0, "added": 0, "changed": 0, "unchanged": 0, "deleted": 0, "lines": 0,
        "nodes": 0, "chunks": 0, "skipped": {}, "failures": [], "seconds": 0.0, "ready": None,
    }


def generation_stats(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("files", "added", "changed", "unchanged", "deleted", "nodes", "chunks", "lines", "seconds")
    return {k: summary[k] for k in keys}


def claim_job(conn: Connection, job_id: int, me: ProcessId, claimed_by: str | None = None) -> dict[str, Any]:
    """Take job ``job_id`` for this process: it must be queued, or claimed by this very process (a worker) or by
    ``claimed_by`` (the runner that started this process for it). Returns the job's options; JobCancelled, saying
    what became of the job, when it is not this process's to run."""
    mine = (IngestJob.status == "running") & (IngestJob.host == me.host) & (IngestJob.pid == me.pid)
    if claimed_by is not None:
        mine = mine | ((IngestJob.status == "running") & (IngestJob.worker == claimed_by))
    row = conn.execute(
        update(IngestJob).where(IngestJob.id == job_id, (IngestJob.status == "queued") | mine)
        .values(status="running", **me.values()).returning(IngestJob.stats)
    ).first()
    if row is None:
        raise JobCancelled(_not_ours(conn, job_id))
    stats = row.stats if isinstance(row.stats, dict) else {}
    options = stats.get(OPTIONS_KEY)
    return options if isinstance(options, dict) else {}


def _not_ours(conn: Connection, job_id: int) -> str:
    """What became of a job this process could not take, in words."""
    job = conn.execute(select(IngestJob.status, IngestJob.worker, IngestJob.error)
                       .where(IngestJob.id == job_id)).first()
    if job is None:
        return f"ingest job {job_id} was cancelled: its knowledge base was deleted; nothing was ingested"
    if job.status == "running":
        return f"ingest job {job_id} is being run by {job.worker or 'another process'}; this process left it alone"
    if job.status == "queued":
        return f"ingest job {job_id} is queued and was not claimed for this process; a worker will run it"
    ended = f"{job.status}: {job.error}" if job.error else job.status
    return f"ingest job {job_id} has already ended ({ended}); nothing was ingested by this process"


def start_job(conn: Connection, kb: KbRef, root: Path, number: int, job_id: int | None, me: ProcessId) -> int:
    worker = f"{me.host}:{me.pid}"
    values = dict(status="running", generation=number, started_at=func.now(), heartbeat_at=func.now(),
                  worker=func.coalesce(IngestJob.worker, worker) if job_id is not None else worker, **me.values())
    if job_id is not None:
        conn.execute(update(IngestJob).where(IngestJob.id == job_id).values(**values))
        return job_id
    return conn.execute(
        insert(IngestJob).values(kb_id=kb.id, tenant=kb.tenant, source_path=str(root), **values).returning(IngestJob.id)
    ).scalar_one()


def finish_job(conn: Connection, job_id: int, summary: dict[str, Any], started: float) -> None:
    conn.execute(
        update(IngestJob)
        .where(IngestJob.id == job_id)
        .values(status="succeeded", ready=summary.get("ready"),
                stats={k: v for k, v in summary.items() if k != "failures"},
                failures=summary["failures"][:1000], finished_at=func.now(),
                elapsed_s=round(time.perf_counter() - started, 3), generation=summary["generation"])
    )


def mark_job_failed(engine: Engine, job_id: int, error: str, *, worker: str | None = None) -> bool:
    """Record that a queued or running job ended with an error (a finished job keeps its outcome); with
    ``worker``, only while that worker owns the job. Returns whether the row changed."""
    cond: ColumnElement[bool] = IngestJob.status.in_(("queued", "running"))
    if worker is not None:
        cond = cond & (IngestJob.worker == worker)
    with engine.begin() as conn:
        return conn.execute(
            update(IngestJob).where(IngestJob.id == job_id, cond)
            .values(status="failed", error=error[:4000], finished_at=func.now())
        ).rowcount == 1


def record_failure(engine: Engine, job_id: int, exc: BaseException) -> None:
    """Mark the job failed with the real cause: an environment failure in its own words (disk full, permission,
    a damaged database), anything else by its type. Retried once: a full disk often has room again once the
    failed transaction has rolled back its journal."""
    failure = from_environment(exc)
    reason = failure.message if failure is not None else f"{type(exc).__name__}: {exc}"
    for attempt in range(2):
        try:
            mark_job_failed(engine, job_id, reason)
            return
        except Exception:
            if attempt:
                log.exception("could not record the failure of ingest job %d (%s)", job_id, reason)
            else:
                time.sleep(0.5)
