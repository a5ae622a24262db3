"""Pieces of the front door: where the default data directory is found, the plain progress lines written where
stderr is no terminal, and the ingest summary's wording."""

from __future__ import annotations

import io
from pathlib import Path

from sift.cli.ingest import format_summary
from sift.cli.progress import ProgressLines
from sift.config import Settings, find_data_dir


def test_the_nearest_sift_folder_up_the_tree_is_the_data_directory(tmp_path: Path, monkeypatch) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_data_dir(deep) == deep / ".sift"  # none anywhere: ./.sift, made by the first ingest
    (tmp_path / "a" / ".sift").mkdir()
    assert find_data_dir(deep) == tmp_path / "a" / ".sift"
    (tmp_path / "a" / "b" / ".sift").write_text("a file, not a data directory")
    assert find_data_dir(deep) == tmp_path / "a" / ".sift"
    (deep / ".sift").mkdir()
    assert find_data_dir(deep) == deep / ".sift"
    monkeypatch.chdir(tmp_path / "a" / "b")
    monkeypatch.delenv("SIFT_DATA_DIR", raising=False)
    assert Settings().data_dir == tmp_path / "a" / ".sift"
    monkeypatch.setenv("SIFT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert Settings().data_dir == tmp_path / "elsewhere"  # the environment wins over the walk up


def test_progress_lines_come_every_interval_with_rate_and_time_left() -> None:
    now = [0.0]
    out = io.StringIO()
    lines = ProgressLines("ingest", interval=10, out=out, clock=lambda: now[0])
    for t, step, done, total, unit in [(1, "parse", 10, 100, "files"), (9, "parse", 90, 100, "files"),
                                       (12, "embed", 0, 400, "chunks"), (22, "embed", 100, 400, "chunks"),
                                       (25, "embed", 130, 400, "chunks"), (32, "embed", 200, 400, "chunks")]:
        now[0] = t
        lines.update(step, done, total, unit)
    assert out.getvalue().splitlines() == [
        "ingest: embed 0/400 chunks (0 s in this step)",  # the first line ten seconds in: none for the parse
        "ingest: embed 100/400 chunks, 10 chunks/s, about 30 s left (10 s in this step)",
        "ingest: embed 200/400 chunks, 10 chunks/s, about 20 s left (20 s in this step)",
    ]


def test_ingest_summaries_say_what_the_kb_holds() -> None:
    base = {"kb": "k", "tenant": "default", "generation": 1, "status": "published", "files": 37, "added": 37,
            "changed": 0, "deleted": 0, "unchanged": 0, "nodes": 312, "chunks": 365, "skipped": {},
            "failures": [], "seconds": 97.2}
    totals = {"files": 37, "nodes": 312, "chunks": 365}
    first = format_summary(base, totals)
    assert "1 min 37 s (0.38 files/s)" in first and "the kb now holds 37 files, 312 nodes, 365 chunks" in first
    again = format_summary({**base, "status": "unchanged", "added": 0, "unchanged": 37, "nodes": 0, "chunks": 0,
                            "seconds": 0.6}, totals)
    assert again == ("kb k unchanged: no file changed since generation 1, which still serves 37 files, 312 nodes, "
                     "365 chunks (checked 37 files in 0.6 s, skipped: none)")
