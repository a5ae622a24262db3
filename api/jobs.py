"""Ingest jobs started from the API: the request only queues a row; one owner claims it.

Owners are ``sift worker`` processes and, unless ``SIFT_RUN_JOBS`` is off, this process's own runner: a thread
that claims queued jobs with the same atomic claim the workers use (``ingest.jobs.claim_next``) and runs each in
a subprocess, ``sift ingest --job-id N --claimed-by RUNNER``. Whoever's claim succeeds owns the job; nobody else
touches it. The pipeline marks it running and succeeded (or failed, naming the exception or the SIGTERM/SIGINT
that stopped it), and a watcher thread here marks a job it owns failed when its subprocess ends without recording
an end itself: ``killed: SIGKILL`` when a signal killed it, else the error lines of its log. Deleting a kb cancels
its jobs: their subprocesses are terminated, and a subprocess that starts late finds its job gone and stops before
touching the kb (the serving generation is untouched either way).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

from sqlalchemy import Engine, select

from sift.api.settings import ApiSettings
from sift.config import Settings
from sift.db.tables import IngestJob
from sift.errors import OutsideRoot
from sift.ingest.jobs import (
    ClaimedJob,
    check_idle,
    claim_next,
    default_worker_id,
    mark_job_failed,
    signal_name,
    submit,
)

log = logging.getLogger(__name__)

_CLI = "import sys; from sift.cli import main; sys.exit(main())"
_ERROR_TAIL = 4000


def confine_path(path: str, roots: list[Path]) -> Path:
    """The resolved directory ``path`` if it lies inside one of ``roots`` (symlinks resolved), else OutsideRoot."""
    if not roots:
        raise OutsideRoot("ingesting server-side paths is disabled; configure SIFT_ALLOWED_ROOTS", field="path")
    if not path or "\x00" in path:
        raise OutsideRoot("path is empty or contains a NUL byte", field="path")
    raw = Path(path)
    if not raw.is_absolute():
        raise OutsideRoot(f"{path!r} is relative; give an absolute path under an allowed root", field="path")
    resolved = raw.resolve()
    if not any(resolved.is_relative_to(root.resolve()) for root in roots):
        allowed = ", ".join(str(r) for r in roots)
        raise OutsideRoot(f"{path!r} is outside the allowed roots ({allowed})", field="path")
    if not resolved.is_dir():
        raise OutsideRoot(f"{path!r} is not an existing directory", field="path")
    return resolved


def settings_env(settings: Settings) -> dict[str, str]:
    """``SIFT_*`` variables that reproduce ``settings`` (its base fields) in a child process."""
    env = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if value is not None:
            env[f"SIFT_{name.upper()}"] = str(value)
    return env


class JobRunner:
    """Queues ingest jobs and, unless ``settings.run_jobs`` is off, claims and runs queued jobs in subprocesses
    (one runner per process, made in the lifespan; :meth:`close` stops it)."""

    def __init__(self, settings: ApiSettings, engine: Engine, poll_s: float = 2.0) -> None:
        self.settings = settings
        self.engine = engine
        self.log_dir = settings.data_dir / "logs"
        self.worker_id = f"{default_worker_id()}:api"
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._poll_s = poll_s
        self._thread: threading.Thread | None = None
        if settings.run_jobs:
            self._thread = threading.Thread(target=self._run, daemon=True, name="sift-job-runner")
            self._thread.start()

    def start(self, tenant: str, kb: str, path: Path, public: bool = False, roots: list[Path] | None = None) -> int:
        """Queue an ingest of ``path`` into ``kb``, confined to ``roots`` when it runs; Conflict when one is
        already queued or running."""
        check_idle(self.engine, self.settings.data_dir, tenant, kb)
        job_id = submit(self.engine, tenant, kb, path, public=public, roots=roots or ())
        self._wake.set()
        return job_id

    def close(self) -> None:
        """Stop claiming jobs (the subprocesses already started run on)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                job = claim_next(self.engine, self.worker_id) if self._anything_queued() else None
            except Exception:  # a database hiccup must not end the runner; the next poll retries
                log.exception("claiming an ingest job failed")
                job = None
            if job is None:
                self._wake.wait(self._poll_s)
                self._wake.clear()
                continue
            try:
                self._spawn(job)
            except OSError as exc:
                mark_job_failed(self.engine, job.id, f"could not start the ingest process: {exc}",
                                worker=self.worker_id)

    def _anything_queued(self) -> bool:
        """A read before the claim's write: an idle server polls without taking the database's write lock."""
        with self.engine.connect() as conn:
            return conn.execute(select(IngestJob.id).where(IngestJob.status == "queued").limit(1)).first() is not None

    def _spawn(self, job: ClaimedJob) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-c", _CLI, "ingest", job.source_path, "--kb", job.kb, "--tenant", job.tenant,
               "--job-id", str(job.id), "--claimed-by", self.worker_id, "--data-dir", str(self.settings.data_dir),
               "--json"]
        if job.public:
            cmd.append("--public")
        if not job.build_index:
            cmd.append("--no-index")
        env = {**os.environ, **settings_env(self.settings), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        log_path = self.log_dir / f"ingest-{job.id}.log"
        with open(log_path, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=env, start_new_session=True)
        self._procs[job.id] = proc
        log.info("ingest job %d started as pid %d", job.id, proc.pid)
        threading.Thread(target=self._watch, args=(job.id, proc, log_path), daemon=True,
                         name=f"sift-job-{job.id}").start()

    def owned(self) -> frozenset[int]:
        """Ids of the jobs whose subprocess this runner watches (it records how they end, signal included)."""
        return frozenset(self._procs)

    def _watch(self, job_id: int, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        try:
            self._record_end(job_id, proc, log_path)
        finally:
            self._procs.pop(job_id, None)

    def _record_end(self, job_id: int, proc: subprocess.Popen[bytes], log_path: Path) -> None:
        try:
            rc = proc.wait(timeout=self.settings.ingest_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            mark_job_failed(self.engine, job_id, f"ingest took longer than {self.settings.ingest_timeout_s:.0f}s",
                            worker=self.worker_id)
            return
        status = self._status(job_id)
        log.info("ingest job %d exited with %d (%s)", job_id, rc, status)
        if status in ("queued", "running"):  # the process ended without recording how
            killed, stopped = signal_name(rc), signal_name(128 - rc) if rc > 128 else None
            reason = (f"killed: {killed}" if killed else f"interrupted by {stopped}" if stopped
                      else _tail(log_path) or f"ingest exited with code {rc}")
            mark_job_failed(self.engine, job_id, reason, worker=self.worker_id)

    def cancel(self, job_ids: list[int]) -> None:
        """Terminate the subprocesses of ``job_ids`` (their kb is being deleted)."""
        for job_id in job_ids:
            proc = self._procs.get(job_id)
            if proc is not None and proc.poll() is None:
                log.info("cancelling ingest job %d (pid %d)", job_id, proc.pid)
                proc.terminate()

    def _status(self, job_id: int) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(IngestJob.status).where(IngestJob.id == job_id)).scalar()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the subprocesses started by this runner (used at shutdown by tests and the bench)."""
        for proc in list(self._procs.values()):
            proc.wait(timeout=timeout)


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return "\n".join(errors[-5:] or lines[-5:])[-_ERROR_TAIL:]

