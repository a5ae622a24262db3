"""Interrupted and cancelled ingest jobs: every end is recorded with its cause, and nothing is re-run unasked.

Real processes receive real signals: ``sift ingest`` from the CLI and from the API, and ``sift worker`` afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import delete, select

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import IngestJob, KnowledgeBase
from sift.ingest.job_rows import JobCancelled
from sift.ingest.jobs import claim_next, submit
from sift.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from sift.cli import main; sys.exit(main())"


def _sift(data: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "SIFT_INGEST_BATCH_SIZE": "2"}
    return subprocess.Popen([sys.executable, "-c", CLI, *args, "--data-dir", str(data)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def _jobs(engine) -> list:  # noqa: ANN001
    with engine.connect() as conn:
        return conn.execute(select(IngestJob).order_by(IngestJob.id)).all()


def _wait_for(predicate, timeout: float = 120.0, what: str = "condition") -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _parsing(engine) -> bool:  # noqa: ANN001
    jobs = _jobs(engine)
    return bool(jobs) and jobs[-1].status == "running" and (jobs[-1].progress or {}).get("files", 0) >= 4


def _worker_runs_nothing(data: Path) -> None:
    worker = _sift(data, "worker", "--once", "--poll", "0.1")
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0 and out.strip() == "", err[-2000:]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGKILL, -9)])
def test_cli_ingest_stopped_by_a_signal_is_failed_naming_it_and_never_rerun(tmp_path, attrs_src, sig, code):
    data = tmp_path / "data"
    engine = open_database(Settings(data_dir=data))
    child = _sift(data, "ingest", str(attrs_src), "--kb", "a", "--no-index", "--json")
    _wait_for(lambda: _parsing(engine), what="the first batches")
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    assert child.returncode == code, err[-2000:]
    (job,) = _jobs(engine)
    if sig == signal.SIGKILL:
        assert job.status == "running"  # nothing can run after SIGKILL; the next look recognises it
        _worker_runs_nothing(data)
        (job,) = _jobs(engine)
        assert job.status == "failed" and f"process {child.pid} on" in job.error and "is gone" in job.error
        assert "SIGKILL" in job.error
    else:
        assert job.status == "failed" and f"interrupted by {sig.name}" in job.error, job.error
        assert f"interrupted by {sig.name}" in err
        _worker_runs_nothing(data)
    assert _jobs(engine)[0].status == "failed" and len(_jobs(engine)) == 1
    with engine.connect() as conn:
        assert conn.execute(select(KnowledgeBase.current_generation)).scalar_one() == 0
    engine.dispose()


def test_pipeline_refuses_a_job_whose_kb_was_deleted_and_does_not_recreate_it(tmp_path, tiny_repo):
    settings = Settings(data_dir=tmp_path / "data")
    engine = open_database(settings)
    job_id = submit(engine, "default", "gone", tiny_repo, build_index=False)
    with engine.begin() as conn:  # what DELETE /v1/kbs/gone does while the job waits
        conn.execute(delete(KnowledgeBase).where(KnowledgeBase.name == "gone"))
    with pytest.raises(JobCancelled, match=f"ingest job {job_id} was cancelled"):
        ingest(settings, tiny_repo, "gone", engine=engine, build_index=False, job_id=job_id)
    with engine.connect() as conn:
        assert conn.execute(select(KnowledgeBase.id)).all() == []
        assert conn.execute(select(IngestJob.id)).all() == []
    assert submit(engine, "default", "gone", tiny_repo, build_index=False) > job_id  # ids are never reused
    engine.dispose()


@pytest.fixture
def api(tmp_path, local_embedder, attrs_src):
    repos = tmp_path / "repos"
    (repos / "small").mkdir(parents=True)
    (repos / "small" / "a.py").write_text("def a():\n    return 1\n")
    settings = ApiSettings(data_dir=tmp_path / "data", auth=False, allowed_roots=[repos, attrs_src.parent],
                           ingest_batch_size=2)
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        yield client, app, repos
        app.state.jobs.wait(timeout=120)


def _wait_job(client: httpx.Client, job_id: int, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while (job := client.get(f"/v1/jobs/{job_id}").json())["status"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline, f"job {job_id} did not finish"
        time.sleep(0.1)
    return job


@pytest.mark.parametrize(("sig", "reason"), [(signal.SIGKILL, "killed: SIGKILL"),
                                             (signal.SIGTERM, "interrupted by SIGTERM"),
                                             (signal.SIGINT, "interrupted by SIGINT")])
def test_api_job_stopped_by_a_signal_reports_the_signal(api, attrs_src, sig, reason):
    client, app, _ = api
    r = client.post("/v1/kbs", json={"name": "attrs", "path": str(attrs_src)})
    assert r.status_code == 202, r.text
    job_id = r.json()["job"]["id"]
    engine = app.state.engine
    _wait_for(lambda: _parsing(engine), what="the first batches")
    os.kill(_jobs(engine)[-1].pid, sig)
    job = _wait_job(client, job_id)
    assert job["status"] == "failed" and job["error"].startswith(reason), job["error"]
    assert "Loading" not in job["error"]
    assert client.get("/v1/kbs/attrs").json()["generation"] == 0


def test_api_deleting_a_kb_cancels_its_queued_job_for_good(api):
    client, app, repos = api
    r = client.post("/v1/kbs", json={"name": "small", "path": str(repos / "small")})
    assert r.status_code == 202, r.text
    job_id = r.json()["job"]["id"]
    assert client.delete("/v1/kbs/small").status_code == 204  # before the subprocess got going
    app.state.jobs.wait(timeout=120)
    time.sleep(1.0)
    assert client.get("/v1/kbs/small").status_code == 404
    assert client.get(f"/v1/jobs/{job_id}").status_code == 404
    with app.state.engine.connect() as conn:
        assert conn.execute(select(KnowledgeBase.name)).scalars().all() == []
    r = client.post("/v1/kbs", json={"name": "small", "path": str(repos / "small")})
    assert r.status_code == 202 and r.json()["job"]["id"] > job_id  # the deleted job's id is not handed out again
    assert _wait_job(client, r.json()["job"]["id"])["status"] == "succeeded"
    assert client.get("/v1/kbs/small").json()["generation"] == 1


def test_api_jobs_beside_a_running_worker_each_run_once_by_one_owner(tmp_path, local_embedder):
    """`sift serve` plus `sift worker` on one database: every queued job is claimed once, by the server's runner or
    by the worker; none is ever reported failed, and all of them succeed."""
    repos = tmp_path / "repos"
    for name in ("k1", "k2", "k3"):
        (repos / name).mkdir(parents=True)
        for i in range(150):
            (repos / name / f"m{i}.py").write_text(f"def {name}_{i}(x):\n    return x + {i}\n")
    data = tmp_path / "data"
    settings = ApiSettings(data_dir=data, auth=False, allowed_roots=[repos])
    app = create_app(settings, embedder=local_embedder)
    worker = _sift(data, "worker", "--poll", "0.05")
    try:
        with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
            ids = []
            for name in ("k1", "k2", "k3"):
                r = client.post("/v1/kbs", json={"name": name, "path": str(repos / name)})
                assert r.status_code == 202, r.text
                ids.append(r.json()["job"]["id"])
            seen: dict[int, list[str]] = {job_id: [] for job_id in ids}
            deadline = time.monotonic() + 240
            while not all(s and s[-1] == "succeeded" for s in seen.values()):
                assert time.monotonic() < deadline, seen
                for job_id in ids:
                    job = client.get(f"/v1/jobs/{job_id}").json()
                    assert job["status"] != "failed", job["error"]
                    seen[job_id].append(job["status"])
                time.sleep(0.02)
            app.state.jobs.wait(timeout=120)
            for name in ("k1", "k2", "k3"):
                assert client.get(f"/v1/kbs/{name}").json()["generation"] == 1
            rows = _jobs(app.state.engine)
            assert len(rows) == 3 and {r.status for r in rows} == {"succeeded"}
            assert all(r.worker and r.error is None for r in rows)
    finally:
        worker.send_signal(signal.SIGTERM)
        out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err[-2000:]
    # What the worker says it ran agrees with the rows: nothing released, failed or cancelled. Besides each job's
    # last line, a job says once that its generation is searchable while its vectors are computed.
    said = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert {s["status"] for s in said if s.get("ready") != "searchable"} <= {"succeeded"}, out
    assert all(s["status"] == "running" for s in said if s.get("ready") == "searchable"), out


def test_a_process_that_cannot_take_a_job_says_who_has_it_and_leaves_it_alone(tmp_path, tiny_repo):
    data = tmp_path / "data"
    engine = open_database(Settings(data_dir=data))
    job_id = submit(engine, "default", "tiny", tiny_repo, build_index=False)
    assert claim_next(engine, "worker-7").id == job_id  # this (live) process owns it now
    child = _sift(data, "ingest", str(tiny_repo), "--kb", "tiny", "--no-index", "--job-id", str(job_id))
    _, err = child.communicate(timeout=120)
    assert child.returncode == 1 and f"ingest job {job_id} is being run by worker-7" in err, err[-2000:]
    (job,) = _jobs(engine)
    assert job.status == "running" and job.worker == "worker-7" and job.error is None
    engine.dispose()
