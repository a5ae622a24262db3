"""One file's parse is bounded in time and memory and stops at once on SIGTERM.

The pathological file is real input the walk lets through (300 KB, under the 1 MB size limit): a Python call
nested 75,000 deep, ``f(f(f(…)))``, which keeps tree-sitter's query matching busy in C for minutes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from sift.config import Settings
from sift.db import open_database
from sift.db.tables import IngestJob, KnowledgeBase
from sift.ingest import store
from sift.ingest.chunk import CHUNKING, ChunkLimits
from sift.ingest.parse_worker import ParseBounds, ParseLimitExceeded, ParseWorker
from sift.models import SourceType

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from sift.cli import main; sys.exit(main())"
NESTED = "f(" * 100_000 + ")" * 100_000 + "\n"


def _sift(data: Path, marker: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SIFT_INGEST_BATCH_SIZE": "1", "SIFT_TEST_MARKER": marker,
           **(env or {})}
    return subprocess.Popen([sys.executable, "-c", CLI, *args, "--data-dir", str(data)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def _marked(marker: str) -> list[int]:
    """Pids of live processes started with ``SIFT_TEST_MARKER=marker`` (the CLI and any child of it)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if f"SIFT_TEST_MARKER={marker}".encode() in env and state != b"Z":
            pids.append(int(entry))
    return pids


def _wait_for(predicate, timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.md").write_text("# Guide\n\nHow to use it.\n")
    return root


def _visible(engine, kb_name: str) -> tuple[int, set[str]]:  # noqa: ANN001
    with engine.connect() as conn:
        kb = conn.execute(select(KnowledgeBase).where(KnowledgeBase.name == kb_name)).one()
        return kb.current_generation, set(store.visible_files(conn, kb.id, kb.current_generation, CHUNKING))


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the ingest's processes in /proc")
def test_sigterm_during_a_pathological_parse_stops_the_ingest_at_once_and_the_next_run_skips_the_file(tmp_path,
                                                                                                      repo):
    data = tmp_path / "data"
    marker = uuid.uuid4().hex
    first = _sift(data, marker, "ingest", str(repo), "--kb", "k", "--no-index", "--json")
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err[-2000:]
    engine = open_database(Settings(data_dir=data))
    assert _visible(engine, "k") == (1, {"a.py", "b.md"})

    (repo / "c.md").write_text("# More\n\nAnother page.\n")
    (repo / "zz_nested.py").write_text(NESTED)  # walked and parsed last
    child = _sift(data, marker, "ingest", str(repo), "--kb", "k", "--no-index", "--json")

    def parsing_nested() -> bool:
        with engine.connect() as conn:
            job = conn.execute(select(IngestJob).order_by(IngestJob.id.desc())).first()
        return job is not None and job.status == "running" and (job.progress or {}).get("files", 0) >= 3

    _wait_for(parsing_nested, 120, "c.md to be written")  # a.py, b.md unchanged, c.md written: zz_nested.py is next
    time.sleep(2.0)  # well inside zz_nested.py's parse, which takes minutes unbounded
    sent = time.monotonic()
    child.send_signal(signal.SIGTERM)
    try:
        _, err = child.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        pytest.fail("sift ingest went on parsing for 20 s after SIGTERM")
    took = time.monotonic() - sent
    assert child.returncode == 143 and "interrupted by SIGTERM" in err, err[-2000:]
    assert took < 10, took
    _wait_for(lambda: not _marked(marker), 10, "the parsing process to be gone")

    # The generation is what it was: generation 1 serves, with its files; the job says what happened.
    assert _visible(engine, "k") == (1, {"a.py", "b.md"})
    with engine.connect() as conn:
        job = conn.execute(select(IngestJob).order_by(IngestJob.id.desc())).first()
    assert job.status == "failed" and "interrupted by SIGTERM" in job.error and "generation 1 keeps serving" in job.error
    shown = _sift(data, marker, "files", "--kb", "k", "a.py")
    out, err = shown.communicate(timeout=60)
    assert shown.returncode == 0 and "return 1" in out, err[-2000:]

    # With a per-file bound the same repository ingests in bounded time; the file is skipped, saying why.
    bounded = _sift(data, marker, "ingest", str(repo), "--kb", "k", "--no-index", "--json",
                    env={"SIFT_PARSE_TIMEOUT_S": "3"})
    out, err = bounded.communicate(timeout=120)
    assert bounded.returncode == 0, err[-2000:]
    summary = json.loads(out)
    assert summary["status"] == "published" and summary["generation"] == 3  # 2 was the interrupted run's
    assert summary["skipped"].get("parse_limit") == 1
    assert summary["skipped_files"] == [{"path": "zz_nested.py", "reason": "parse_limit",
                                         "detail": "parsing it took longer than 3s"}]
    assert summary["added"] == 1 and summary["unchanged"] == 2
    assert _visible(engine, "k") == (3, {"a.py", "b.md", "c.md"})
    with engine.connect() as conn:
        job = conn.execute(select(IngestJob).order_by(IngestJob.id.desc())).first()
    assert job.status == "succeeded" and job.stats["skipped_files"][0]["path"] == "zz_nested.py"
    engine.dispose()


def test_a_parse_over_the_memory_bound_is_skipped_and_the_next_file_parses():
    with ParseWorker(ChunkLimits(), ParseBounds(seconds=120, max_mb=48)) as worker:
        with pytest.raises(ParseLimitExceeded, match="48 MB"):
            worker.parse("big.md", "".join(f"# heading {i}\n" for i in range(150_000)), "markdown", SourceType.DOC)
        with pytest.raises(ParseLimitExceeded, match="48 MB"):  # tree-sitter cannot allocate: its process dies
            worker.parse("big.py", "x = [" + "1," * 500_000 + "]\n", "python", SourceType.CODE)
        parsed = worker.parse("a.py", "class A:\n    def run(self):\n        return 1\n", "python", SourceType.CODE)
    assert parsed.error is None
    assert [n.qualified_name for n in parsed.tree.nodes] == ["a.py", "a.py::A", "a.py::A.run"]
    assert any(d.name == "A.run" for d in parsed.drafts)
