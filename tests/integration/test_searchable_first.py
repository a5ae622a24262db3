"""Searchable first, embedded after: a real `sift ingest` killed with SIGKILL while it embeds a pinned package.

The keyword index is published before the embeddings are computed, so the kill leaves a generation that keyword
search, the file reader and answers serve (saying the vector channel is not ready); the next `sift ingest`
parses nothing again and finishes the embedding, reusing what was embedded before the kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from sift.config import Settings
from sift.db import open_database
from sift.db.tables import EmbeddingCache, Generation, IngestJob, KnowledgeBase
from sift.ingest.jobs import job_view, submit
from tests.sources import fetch_sdist

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from sift.cli import main; sys.exit(main())"
NOT_READY = "vector channel not ready"


@pytest.fixture(scope="module")
def cerberus_src() -> Path:
    return fetch_sdist("cerberus")


def _sift(data: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", CLI, *args, "--data-dir", str(data)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def _json(data: Path, *args: str, timeout: float = 600) -> dict:
    proc = _sift(data, *args)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out)


def _wait_for(predicate: Callable[[], bool], what: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _job(engine: Engine) -> IngestJob:
    with engine.connect() as conn:
        return conn.execute(select(IngestJob).order_by(IngestJob.id.desc()).limit(1)).first()


def _cached(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(EmbeddingCache)).scalar_one())


def test_sigkill_while_embedding_leaves_a_searchable_generation_that_the_next_ingest_completes(tmp_path, cerberus_src):
    data = tmp_path / "data"
    engine = open_database(Settings(data_dir=data))
    child = _sift(data, "ingest", str(cerberus_src), "--kb", "cb", "--json")
    _wait_for(lambda: (job := _job(engine)) is not None and job.ready == "searchable", "the searchable state")
    assert _job(engine).status == "running"
    # The embedding phase: the first vectors are in the embedding cache, the rest are still being computed.
    _wait_for(lambda: _cached(engine) > 0 or child.poll() is not None, "the first embeddings")
    child.send_signal(signal.SIGKILL)
    _, err = child.communicate(timeout=60)
    assert child.returncode == -9, f"the ingest finished before it could be killed: {err[-2000:]}"
    before_kill = _cached(engine)

    with engine.connect() as conn:
        serving = conn.execute(select(KnowledgeBase.current_generation)).scalar_one()
        stats = conn.execute(select(Generation.stats).where(Generation.number == serving)).scalar_one()
    assert serving == 1 and stats["vectors"] is False
    # The job says how far it got: searchable, and (after the kill is noticed) failed, not complete.
    view = job_view(engine, _job(engine).id, "default")
    assert view["ready"] == "searchable" and view["status"] == "failed" and "SIGKILL" in view["error"]

    # Keyword search serves the new generation; the fused search says the vector channel is not ready.
    found = _json(data, "search", "validate the schema of a document", "--kb", "cb", "--format", "json")
    assert found["hits"] and all("vector" not in h["channels"] for h in found["hits"])
    assert any(NOT_READY in r for r in found["degraded_reasons"]), found["degraded_reasons"]
    bm25 = _json(data, "search", "Validator", "--kb", "cb", "--channel", "bm25", "--format", "json")
    assert bm25["hits"] and bm25["degraded_reasons"] == []
    vector_only = _json(data, "search", "Validator", "--kb", "cb", "--channel", "vector", "--format", "json")
    assert vector_only["hits"] == [] and any(NOT_READY in r for r in vector_only["degraded_reasons"])
    answer = _json(data, "ask", "How does the Validator validate a document?", "--kb", "cb", "--json")
    assert answer["citations"], answer["text"]
    assert answer["degraded"] and any(NOT_READY in r for r in answer["degraded_reasons"]), answer["degraded_reasons"]

    # The next ingest parses nothing again and finishes the embedding, reusing what was embedded before the kill.
    summary = _json(data, "ingest", str(cerberus_src), "--kb", "cb", "--json")
    assert summary["status"] == "published" and summary["ready"] == "complete"
    assert (summary["added"], summary["changed"], summary["deleted"]) == (0, 0, 0)
    assert summary["unchanged"] == summary["files"] > 0 and summary["nodes"] == summary["chunks"] == 0
    assert summary["index"]["cached"] + summary["index"]["windows"]["cached"] >= before_kill > 0
    assert summary["index"]["embedded"] + summary["index"]["cached"] == summary["index"]["chunks_total"]
    assert summary["generation"] == serving + 1 and _job(engine).ready == "complete"
    vector = _json(data, "search", "validate the schema of a document", "--kb", "cb", "--channel", "vector",
                   "--format", "json")
    assert vector["hits"] and vector["degraded_reasons"] == []
    fused = _json(data, "search", "validate the schema of a document", "--kb", "cb", "--format", "json")
    assert any("vector" in h["channels"] for h in fused["hits"]) and fused["degraded_reasons"] == []
    engine.dispose()


def test_worker_reports_a_job_searchable_then_complete(tmp_path):
    data = tmp_path / "data"
    engine = open_database(Settings(data_dir=data))
    job_id = submit(engine, "default", "answers", ROOT / "tests" / "fixtures" / "answers_repo")
    worker = _sift(data, "worker", "--once", "--poll", "0.1")
    out, err = worker.communicate(timeout=600)
    assert worker.returncode == 0, err[-2000:]
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(r["job"], r["status"], r["ready"]) for r in lines] == [
        (job_id, "running", "searchable"), (job_id, "succeeded", "complete")]
    assert job_view(engine, job_id, "default")["ready"] == "complete"
    engine.dispose()
