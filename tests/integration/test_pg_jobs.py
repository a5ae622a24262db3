"""Ingest jobs claimed by workers, on SQLite and PostgreSQL: exclusive claims, stale re-claims, real worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from sift.config import Settings
from sift.db import make_engine, open_database
from sift.db.tables import Generation, IngestJob, KnowledgeBase
from sift.ingest.jobs import claim_next, heartbeat, release, submit
from sift.ingest.pipeline import ingest
from sift.ingest.store import visible_files

ROOT = Path(__file__).resolve().parents[2]
WORKER = "import sys; from sift.cli import main; sys.exit(main())"


def _worker(data_dir: Path, *args: str, batch: int | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if batch:
        env["SIFT_INGEST_BATCH_SIZE"] = str(batch)
    return subprocess.Popen([sys.executable, "-c", WORKER, "worker", "--data-dir", str(data_dir), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def _job(engine, job_id: int):  # noqa: ANN001, ANN202 - small row helper
    with engine.connect() as conn:
        return conn.execute(select(IngestJob).where(IngestJob.id == job_id)).one()


def _wait_for(predicate, timeout: float = 60.0, what: str = "condition") -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    ("setup", "stale_after_s", "claimable", "final"),
    [
        ("queued", 60.0, True, "running"),
        ("fresh-running", 60.0, False, "running"),
        # another host's job without a heartbeat for longer than the limit (a cutoff in the future: every
        # heartbeat is older than it) is failed, never re-run
        ("stale-running-elsewhere", -3600.0, False, "failed"),
        ("dead-pid-running-here", 60.0, False, "failed"),  # its process is gone: no need to wait for staleness
        ("succeeded", -3600.0, False, "succeeded"),
        ("failed", -3600.0, False, "failed"),
    ],
)
def test_claim_next_takes_only_queued_jobs_and_fails_dead_ones(
    any_database: str, tiny_repo: Path, setup: str, stale_after_s: float, claimable: bool, final: str
) -> None:
    engine = make_engine(any_database)
    open_database(Settings(data_dir=tiny_repo.parent / "data"))
    job_id = submit(engine, "default", "t", tiny_repo, build_index=False)
    if setup != "queued":
        assert claim_next(engine, "first", 60.0) is not None
        values = {"status": "running" if "running" in setup else setup, "started_at": func.now()}
        if setup == "stale-running-elsewhere":
            values["host"] = "another-host"
        if setup == "dead-pid-running-here":
            values["pid"] = _dead_pid()
        with engine.begin() as conn:  # as the pipeline does when it starts the run
            conn.execute(update(IngestJob).where(IngestJob.id == job_id).values(**values))
    job = claim_next(engine, "second", stale_after_s)
    assert (job is not None) == claimable
    row = _job(engine, job_id)
    assert row.status == final
    if job is not None:
        assert (job.id, job.kb, job.build_index) == (job_id, "t", False)
        assert (row.worker, row.pid) == ("second", os.getpid())
        assert claim_next(engine, "third", 60.0) is None
    if "dead" in setup or "stale" in setup:
        assert ("is gone" if "pid" in setup else "no heartbeat") in row.error
    engine.dispose()


def test_release_requeues_a_fresh_claim_and_heartbeat_stops_after_it(any_database: str, tiny_repo: Path) -> None:
    engine = make_engine(any_database)
    open_database(Settings(data_dir=tiny_repo.parent / "data"))
    job_id = submit(engine, "default", "t", tiny_repo)
    job = claim_next(engine, "w1")
    assert job is not None and job.build_index and heartbeat(engine, job_id)
    release(engine, job, "w1")
    row = _job(engine, job_id)
    assert (row.status, row.worker) == ("queued", None)
    assert not heartbeat(engine, job_id)
    assert claim_next(engine, "w2").id == job_id
    engine.dispose()


def test_jobs_fifty_submitted_concurrently_each_run_once_by_two_workers(
    any_database: str, tiny_repo: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    open_database(Settings(data_dir=data)).dispose()
    replicas = [make_engine(any_database) for _ in range(2)]
    kbs = [f"k{i % 45}" for i in range(50)]  # five kbs get two jobs each
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda i: submit(replicas[i % 2], "default", kbs[i], tiny_repo, build_index=False),
                            range(50)))
    assert len(set(ids)) == 50
    workers = [_worker(data, "--once", "--poll", "0.1", "--worker-id", f"w{n}") for n in range(2)]
    outputs = [w.communicate(timeout=240) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in outputs]
    results = [json.loads(line) for out, _ in outputs for line in out.splitlines() if line.strip()]
    done = [r["job"] for r in results if r["status"] == "succeeded"]
    assert sorted(done) == sorted(ids)  # every job exactly once
    assert not [r for r in results if r["status"] == "failed"]
    with replicas[0].connect() as conn:
        statuses = conn.execute(select(IngestJob.status, func.count()).group_by(IngestJob.status)).all()
        generations = dict(conn.execute(select(KnowledgeBase.name, KnowledgeBase.current_generation)).all())
    assert statuses == [("succeeded", 50)]
    assert set(generations) == set(kbs) and set(generations.values()) == {1}
    for engine in replicas:
        engine.dispose()


def test_jobs_killed_worker_is_failed_not_rerun_and_the_old_generation_serves(
    any_database: str, tiny_repo: Path, attrs_src: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    engine = open_database(settings)
    ingest(settings, tiny_repo, "kb", engine=engine, build_index=False)
    old_files = set(visible_files(engine.connect(), 1, 1))
    job_id = submit(engine, "default", "kb", attrs_src, build_index=False)

    doomed = _worker(data, "--stale-after", "2", "--poll", "0.1", "--worker-id", "doomed", batch=2)
    _wait_for(lambda: (_job(engine, job_id).progress or {}).get("files", 0) >= 4, what="the first batches")
    doomed.send_signal(signal.SIGKILL)
    doomed.communicate()
    assert _job(engine, job_id).status == "running"  # SIGKILL leaves no chance to record anything

    def serving() -> tuple[int, set[str]]:
        with engine.connect() as conn:
            gen = conn.execute(select(KnowledgeBase.current_generation)).scalar_one()
            return gen, set(visible_files(conn, 1, gen))

    # Another worker fails the dead job (its pid is gone) and runs nothing: a killed ingest is not re-run.
    other = _worker(data, "--once", "--stale-after", "2", "--poll", "0.1", "--worker-id", "other")
    out, err = other.communicate(timeout=120)
    assert other.returncode == 0 and out.strip() == "", err[-2000:]
    row = _job(engine, job_id)
    assert row.status == "failed" and f"process {doomed.pid} on" in row.error and "is gone" in row.error
    assert serving() == (1, old_files)

    # Asking again runs it: the new run discards what the killed one left and publishes.
    again = submit(engine, "default", "kb", attrs_src, build_index=False)
    assert again > job_id
    rescuer = _worker(data, "--once", "--poll", "0.1", "--worker-id", "rescuer")
    out, err = rescuer.communicate(timeout=240)
    (result,) = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert (result["job"], result["status"]) == (again, "succeeded"), err[-2000:]
    assert _job(engine, job_id).status == "failed"
    gen, files = serving()
    assert gen == result["generation"] > 2 and "src/attr/__init__.py" in files
    with engine.connect() as conn:
        generations = dict(conn.execute(select(Generation.number, Generation.status)).all())
    # What the killed run had started (2) was abandoned and collected; the previously serving 1 is kept.
    assert generations == {1: "retired", result["generation"]: "published"}
    engine.dispose()
