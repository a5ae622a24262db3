"""Ingest jobs as a queue: any process queues a row in ``ingest_jobs``; worker processes (`sift worker`) claim them.

Claiming is one ``UPDATE … WHERE id = (SELECT … LIMIT 1) RETURNING``: on PostgreSQL the subselect takes the row
``FOR UPDATE SKIP LOCKED`` (workers never wait on each other), on SQLite the statement runs under the database's
single write lock; the outer WHERE re-checks that the row is still claimable, so exactly one worker gets it.

A running job records its process (host, pid, start time) and refreshes ``heartbeat_at`` every few seconds. Only
``queued`` jobs are ever claimed. A ``running`` job whose process is gone (its pid, on its own host) or whose
heartbeat is older than ``stale_after_s`` (seen from another host) is marked ``failed`` with the reason
(``liveness.reap_dead_jobs``, run before every claim) — never re-run behind the user's back: an ingest someone
killed or cancelled stays stopped until it is requested again. The next run of that kb discards what the dead run
left (see ``ingest.pipeline``); the previously published generation keeps serving throughout. The kb lock the
pipeline takes (advisory on PostgreSQL) is the final fence: if another run holds it, the claimant gets Conflict
and hands the job back to the queue. Per-job options (``build_index``) ride in ``stats`` until the job succeeds and
its summary replaces them.

This module is ingestion's public face for the processes that queue, watch and cancel jobs (the API's runner,
``sift worker``): they call it rather than the pipeline's lock or the store's rows. ``check_idle`` refuses a second
ingest while one runs or is about to start, ``job_view`` shows a job, ``delete_kb`` removes a knowledge base with
its jobs, threads and index files under its lock.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, and_, delete, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import ColumnElement

from sift.catalog import get_kb, kb_index_dir
from sift.config import Settings
from sift.db import is_postgres
from sift.db.api_tables import Thread
from sift.db.tables import IngestJob, KnowledgeBase
from sift.errors import Conflict, NotFound, from_environment
from sift.ingest.job_rows import OPTIONS_KEY, JobCancelled, mark_job_failed, record_failure
from sift.ingest.liveness import (
    DEFAULT_STALE_AFTER_S,
    beat,
    current_process,
    db_cutoff,
    reap_dead_jobs,
    signal_name,
)
from sift.ingest.locks import kb_lock
from sift.ingest.pipeline import ingest
from sift.ingest.store import ensure_kb
from sift.names import check_name

if TYPE_CHECKING:  # the embedding module loads when a job builds an index
    from sift.embed import Embedder

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_STALE_AFTER_S", "QUEUED_GRACE", "ClaimedJob", "DeletedKb", "check_idle", "claim_next",
    "default_worker_id", "delete_kb", "heartbeat", "job_view", "mark_job_failed", "release", "run_job",
    "signal_name", "submit", "work",
]  # fmt: skip

#: A queued job whose process has not taken the kb lock yet still blocks a second one for this long.
QUEUED_GRACE = timedelta(minutes=2)


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job this worker now owns."""

    id: int
    kb: str
    tenant: str
    source_path: str
    public: bool
    build_index: bool


def default_worker_id() -> str:
    """``host:pid`` — what the pipeline records for runs without a worker."""
    return f"{socket.gethostname()}:{os.getpid()}"


def submit(engine: Engine, tenant: str, kb: str, path: Path, *, public: bool = False,
           build_index: bool = True, roots: Sequence[Path] = ()) -> int:
    """Queue an ingest of ``path`` into ``kb`` (creating the kb row if needed); returns the job id. With ``roots``,
    the job reads only inside them, whatever ``path`` resolves to when it runs (see ``pipeline.ingest``)."""
    check_name(tenant, "tenant")
    check_name(kb, "knowledge base")
    opts: dict[str, Any] = {}
    if not build_index:
        opts["build_index"] = False
    if roots:
        opts["roots"] = [str(r) for r in roots]
    options = {OPTIONS_KEY: opts} if opts else {}
    for attempt in range(2):
        try:
            with engine.begin() as conn:
                ref = ensure_kb(conn, kb, tenant, Path(path), public)
                return int(conn.execute(
                    insert(IngestJob).values(kb_id=ref.id, tenant=tenant, source_path=str(path), status="queued",
                                             stats=options or None).returning(IngestJob.id)
                ).scalar_one())
        except IntegrityError:  # another replica created the same kb a moment ago
            if attempt:
                raise
    raise AssertionError("unreachable")


def check_idle(engine: Engine, data_dir: Path, tenant: str, kb: str) -> None:
    """Conflict while an ingest of ``kb`` runs (it holds the kb lock) or a job queued within ``QUEUED_GRACE`` has
    not started yet."""
    with kb_lock(data_dir, tenant, kb):
        pass  # raises Conflict while a job holds it
    since = datetime.now(UTC).replace(tzinfo=None) - QUEUED_GRACE
    with engine.connect() as conn:
        waiting = conn.execute(
            select(IngestJob.id).join(KnowledgeBase, KnowledgeBase.id == IngestJob.kb_id)
            .where(KnowledgeBase.name == kb, KnowledgeBase.tenant == tenant, IngestJob.status == "queued",
                   IngestJob.created_at >= since)
        ).first()
    if waiting is not None:
        raise Conflict(f"ingest job {waiting.id} of knowledge base {kb!r} is about to start; wait for it "
                       f"(GET /v1/jobs/{waiting.id})")


def job_view(engine: Engine, job_id: int, tenant: str, owned: frozenset[int] = frozenset()) -> dict[str, Any]:
    """A job of ``tenant`` as the API shows it (NotFound for anyone else's); a dead running job shows as failed,
    unless it is one of ``owned``, whose watcher records the signal that ended it."""
    if job_id not in owned:
        reap_dead_jobs(engine, job_id=job_id)
    with engine.connect() as conn:
        row = conn.execute(
            select(IngestJob, KnowledgeBase.name.label("kb_name"))
            .join(KnowledgeBase, KnowledgeBase.id == IngestJob.kb_id)
            .where(IngestJob.id == job_id, IngestJob.tenant == tenant)
        ).first()
    if row is None:
        raise NotFound(f"ingest job {job_id} does not exist", field="job_id")
    job = row
    return {
        "id": job.id, "kb": row.kb_name, "status": job.status, "ready": job.ready, "source_path": job.source_path,
        "generation": job.generation, "progress": job.progress, "result": job.stats,
        "failures": len(job.failures or []), "error": job.error, "created_at": job.created_at,
        "started_at": job.started_at, "finished_at": job.finished_at, "elapsed_s": job.elapsed_s,
    }


@dataclass(frozen=True, slots=True)
class DeletedKb:
    """What went with a deleted knowledge base: its threads' checkpointer keys (whose state the caller deletes) and
    the jobs that had not finished."""

    checkpoints: list[str]
    pending_jobs: list[int]


def delete_kb(engine: Engine, data_dir: Path, index_root: Path, tenant: str, kb: str) -> DeletedKb:
    """Delete a knowledge base's rows (its jobs, threads and itself) under its lock, then its index files;
    Conflict while an ingest runs, NotFound when it is not the tenant's."""
    ref = get_kb(engine, kb, tenant)
    with kb_lock(data_dir, tenant, kb), engine.begin() as conn:
        checkpoints = conn.execute(
            select(Thread.checkpoint_id).where(Thread.tenant == tenant, Thread.kb == kb)
        ).scalars().all()
        # Queued jobs are cancelled: with their rows gone, a subprocess still starting stops before the kb.
        pending = conn.execute(select(IngestJob.id).where(
            IngestJob.kb_id == ref.id, IngestJob.status.in_(("queued", "running")))).scalars().all()
        conn.execute(delete(IngestJob).where(IngestJob.kb_id == ref.id))
        conn.execute(delete(Thread).where(Thread.tenant == tenant, Thread.kb == kb))
        conn.execute(delete(KnowledgeBase).where(KnowledgeBase.id == ref.id))
    shutil.rmtree(kb_index_dir(index_root, ref.id), ignore_errors=True)
    return DeletedKb(list(checkpoints), list(pending))


def _claimable(cutoff: ColumnElement[Any]) -> ColumnElement[bool]:
    """Queued, and no other job of its kb is running with a fresh heartbeat."""
    other = aliased(IngestJob, name="other_job")
    kb_busy = exists().where(other.kb_id == IngestJob.kb_id, other.id != IngestJob.id, other.status == "running",
                             other.heartbeat_at >= cutoff)
    return and_(IngestJob.status == "queued", ~kb_busy)


def claim_next(engine: Engine, worker_id: str, stale_after_s: float = DEFAULT_STALE_AFTER_S) -> ClaimedJob | None:
    """Take the oldest queued job for ``worker_id`` (after failing dead running jobs); None if none is claimable."""
    reap_dead_jobs(engine, stale_after_s=stale_after_s)
    cutoff = db_cutoff(engine, stale_after_s)
    pick = select(IngestJob.id).where(_claimable(cutoff)).order_by(IngestJob.id).limit(1)
    if is_postgres(engine):
        pick = pick.with_for_update(of=IngestJob, skip_locked=True)
    stmt = (
        update(IngestJob)
        .where(IngestJob.id == pick.scalar_subquery(), _claimable(cutoff))
        .values(status="running", worker=worker_id, heartbeat_at=func.now(), error=None, **current_process().values())
        .returning(IngestJob.id, IngestJob.kb_id, IngestJob.tenant, IngestJob.source_path, IngestJob.stats)
    )
    with engine.begin() as conn:
        row = conn.execute(stmt).first()
        if row is None:
            return None
        kb = conn.execute(select(KnowledgeBase.name, KnowledgeBase.public).where(KnowledgeBase.id == row.kb_id)).one()
    options = (row.stats or {}).get(OPTIONS_KEY, {}) if isinstance(row.stats, dict) else {}
    return ClaimedJob(row.id, kb.name, row.tenant, row.source_path, bool(kb.public),
                      bool(options.get("build_index", True)))


def heartbeat(engine: Engine, job_id: int) -> bool:
    """Refresh a running job's heartbeat; False when the job is no longer running."""
    return beat(engine, job_id)


def release(engine: Engine, job: ClaimedJob, worker_id: str) -> None:
    """Hand a claimed job back to the queue (its kb is busy with another run)."""
    values: dict[str, Any] = {"heartbeat_at": func.now(), "status": "queued", "worker": None, "started_at": None,
                              "generation": None, "host": None, "pid": None, "pid_started": None}
    with engine.begin() as conn:
        conn.execute(update(IngestJob).where(IngestJob.id == job.id, IngestJob.worker == worker_id,
                                             IngestJob.status == "running").values(**values))


def run_job(settings: Settings, engine: Engine, job: ClaimedJob, worker_id: str, *,
            stale_after_s: float = DEFAULT_STALE_AFTER_S, embedder: Embedder | None = None,
            on_searchable: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Run a claimed job through the pipeline; returns ``{"job", "kb", "status", "ready", ...}`` (status succeeded,
    failed, cancelled or released; ready complete when its vectors are published). ``on_searchable`` is told
    ``{..., "status": "running", "ready": "searchable"}`` when its keyword index is published, before embedding."""
    result: dict[str, Any] = {"job": job.id, "kb": job.kb, "tenant": job.tenant, "worker": worker_id}

    def progress(phase: str, done: int, total: int | None) -> None:
        if phase == "searchable" and on_searchable is not None:
            on_searchable({**result, "status": "running", "ready": "searchable"})

    try:
        summary = ingest(settings, Path(job.source_path), job.kb, tenant=job.tenant, public=job.public,
                         engine=engine, embedder=embedder, build_index=job.build_index, job_id=job.id,
                         heartbeat_s=max(0.2, stale_after_s / 4), progress=progress)
    except JobCancelled as exc:
        return {**result, "status": "cancelled", "error": exc.message}
    except Conflict:
        release(engine, job, worker_id)
        return {**result, "status": "released"}
    except Exception as exc:
        failure = from_environment(exc)
        if failure is None:
            log.exception("ingest job %d failed", job.id)
        record_failure(engine, job.id, exc)
        return {**result, "status": "failed", "error": failure.message if failure else str(exc)}
    return {**result, "status": "succeeded", "generation": summary["generation"], "outcome": summary["status"],
            "ready": summary.get("ready")}


def work(settings: Settings, engine: Engine, worker_id: str, *, once: bool = False, poll_s: float = 1.0,
         stale_after_s: float = DEFAULT_STALE_AFTER_S, stop: threading.Event | None = None,
         on_result: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Claim and run jobs until ``stop`` is set (or, with ``once``, until none is claimable); returns jobs run."""
    stop = stop or threading.Event()
    embedder = None
    ran = 0
    while not stop.is_set():
        job = claim_next(engine, worker_id, stale_after_s)
        if job is None:
            if once:
                break
            stop.wait(poll_s)
            continue
        if job.build_index and embedder is None:
            from sift.embed import make_embedder

            embedder = make_embedder(settings)
        result = run_job(settings, engine, job, worker_id, stale_after_s=stale_after_s, embedder=embedder,
                         on_searchable=on_result)
        if result["status"] == "released":
            stop.wait(poll_s)  # its kb is busy elsewhere; give that run time before asking again
        else:
            ran += 1
        if on_result:
            on_result(result)
    return ran
