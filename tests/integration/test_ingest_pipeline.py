"""Ingestion pipeline end to end on real files, real tree-sitter grammars and a real SQLite database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from sift.catalog import get_kb
from sift.cli import main
from sift.config import Settings
from sift.db import open_database, visible_in
from sift.db.tables import Chunk, File, Generation, IngestJob, Node
from sift.ingest.pipeline import ingest


def _settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


def _visible(engine, kb: str, table=File):
    ref = get_kb(engine, kb)
    with engine.connect() as conn:
        if table is File:
            return conn.execute(select(File).where(File.kb_id == ref.id, visible_in(File, ref.generation))).all()
        return conn.execute(
            select(table).join(File, table.file_id == File.id).where(File.kb_id == ref.id,
                                                                      visible_in(File, ref.generation))
        ).all()


def test_ingest_tiny_repo_builds_trees_and_chunks(tiny_repo, tmp_path):
    settings = _settings(tmp_path)
    summary = ingest(settings, tiny_repo, "tiny", build_index=False)
    assert summary["status"] == "published"
    assert summary["generation"] == 1
    assert summary["skipped"].get("ignored") == 1  # ignored.py
    engine = open_database(settings)
    paths = sorted(r.path for r in _visible(engine, "tiny"))
    assert paths == [".gitignore", "README.md", "docs/guide.md", "pkg/__init__.py", "pkg/auth.py"]
    nodes = {n.qualified_name: n for n in _visible(engine, "tiny", Node)}
    method = nodes["pkg/auth.py::AuthService.validate_token"]
    assert (method.kind, method.start_line, method.end_line) == ("method", 12, 14)
    parent = next(n for n in nodes.values() if n.id == method.parent_id)
    assert parent.name == "AuthService"
    heading = next(n for n in nodes.values() if n.kind == "heading" and n.name == "Rotating secrets")
    assert heading.level == 3 and heading.start_line == 13
    chunks = _visible(engine, "tiny", Chunk)
    kinds = {c.kind for c in chunks}
    assert kinds == {"file", "function", "doc"}
    func_chunk = next(c for c in chunks if c.kind == "function" and c.name == "AuthService.validate_token")
    assert func_chunk.node_id == method.id and func_chunk.tenant == "default" and func_chunk.source_type == "code"
    doc = next(c for c in chunks if c.kind == "doc" and c.heading_path == "Guide > Authentication")
    assert "# not a heading" in doc.text  # the fenced code stays inside its section


def test_ingest_reingest_unchanged_is_noop_and_changes_make_new_generation(tiny_repo, tmp_path):
    settings = _settings(tmp_path)
    ingest(settings, tiny_repo, "tiny", build_index=False)
    again = ingest(settings, tiny_repo, "tiny", build_index=False)
    assert again["status"] == "unchanged" and again["generation"] == 1
    (tiny_repo / "pkg" / "auth.py").write_text("def only():\n    return 1\n")
    (tiny_repo / "README.md").unlink()
    third = ingest(settings, tiny_repo, "tiny", build_index=False)
    assert (third["generation"], third["changed"], third["deleted"], third["unchanged"]) == (2, 1, 1, 3)
    engine = open_database(settings)
    paths = {r.path for r in _visible(engine, "tiny")}
    assert "README.md" not in paths
    names = {n.name for n in _visible(engine, "tiny", Node)}
    assert "only" in names and "AuthService" not in names


def test_files_cut_by_an_older_chunker_are_chunked_again(tiny_repo, tmp_path):
    # An upgrade that changes chunk boundaries reaches an existing knowledge base at its next ingest, even for
    # files whose content did not change; after that, an unchanged repository is a no-op again.
    from sqlalchemy import update

    from sift.ingest.chunk import CHUNKING

    settings = _settings(tmp_path)
    first = ingest(settings, tiny_repo, "tiny", build_index=False)
    engine = open_database(settings)
    assert {r.chunking for r in _visible(engine, "tiny")} == {CHUNKING}
    stale = sorted(r.path for r in _visible(engine, "tiny"))[:2]
    with engine.begin() as conn:
        conn.execute(update(File).where(File.path.in_(stale)).values(chunking=CHUNKING - 1))
    again = ingest(settings, tiny_repo, "tiny", build_index=False)
    assert (again["generation"], again["changed"], again["unchanged"]) == (2, len(stale), first["files"] - len(stale))
    assert {r.chunking for r in _visible(engine, "tiny")} == {CHUNKING}
    assert ingest(settings, tiny_repo, "tiny", build_index=False)["status"] == "unchanged"


def test_ingest_leftovers_of_a_crashed_run_are_discarded(tiny_repo, tmp_path):
    settings = _settings(tmp_path)
    ingest(settings, tiny_repo, "tiny", build_index=False)
    engine = open_database(settings)
    kb = get_kb(engine, "tiny")
    # Simulate a run that died after writing generation 2 rows and closing a file version.
    with engine.begin() as conn:
        fid = conn.execute(select(File.id).where(File.kb_id == kb.id, File.path == "README.md")).scalar()
        conn.execute(File.__table__.update().where(File.id == fid).values(gen_to=2))
        conn.execute(File.__table__.insert().values(
            kb_id=kb.id, gen_from=2, path="ghost.py", language="python", source_type="code", content_hash="x",
            size_bytes=1, line_count=1, parser="text", content="x"))
        conn.execute(Generation.__table__.insert().values(kb_id=kb.id, number=2, status="building"))
    assert {r.path for r in _visible(engine, "tiny")} >= {"README.md"}  # generation 1 still whole
    summary = ingest(settings, tiny_repo, "tiny", build_index=False)
    assert summary["status"] == "unchanged"
    paths = {r.path for r in _visible(engine, "tiny")}
    assert "README.md" in paths and "ghost.py" not in paths
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).where(File.path == "ghost.py")).scalar() == 0


def _write(root: Path, rel: str, data: bytes | str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode())


def test_ingest_bad_inputs_are_skipped_or_recorded_not_fatal(tmp_path):
    repo = tmp_path / "repo"
    _write(repo, "ok.py", "def fine():\n    return 1\n")
    _write(repo, "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    _write(repo, "blob.dat", b"abc\x00def")
    _write(repo, "latin.txt", b"caf\xe9 cr\xe8me \xff\xfe")
    _write(repo, "huge.py", "x = 1\n" * 50_000)
    _write(repo, "broken.py", "def broken(:\n    return )))\nclass\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    (repo / "escape.txt").symlink_to(outside)
    settings = _settings(tmp_path).model_copy(update={"max_file_bytes": 100_000})
    summary = ingest(settings, repo, "bad", build_index=False)
    assert summary["skipped"] == {"binary": 2, "symlink_outside": 1, "too_large": 1, "undecodable": 1}
    engine = open_database(settings)
    files = {r.path: r for r in _visible(engine, "bad")}
    assert set(files) == {"ok.py", "broken.py"}
    # Broken syntax is still ingested (tree-sitter recovers, or it is stored as flat text) and searchable.
    assert "return )))" in files["broken.py"].content
    chunks = [c for c in _visible(engine, "bad", Chunk) if c.path == "broken.py"]
    assert chunks and any("broken" in c.text for c in chunks)
    assert "top secret" not in "".join(f.content for f in files.values())


def test_ingest_empty_repo_publishes_empty_generation(tmp_path):
    repo = tmp_path / "empty"
    repo.mkdir()
    summary = ingest(_settings(tmp_path), repo, "empty", build_index=False)
    assert (summary["files"], summary["chunks"], summary["status"]) == (0, 0, "published")


def test_cli_ingest_missing_path_is_user_error(tmp_path, capsys):
    code = main(["ingest", str(tmp_path / "nope"), "--kb", "x", "--data-dir", str(tmp_path / "d")])
    assert code == 1
    assert "does not exist" in capsys.readouterr().err


def test_cli_console_script_exit_codes(tiny_repo, tmp_path):
    env = {**os.environ, "SIFT_DATA_DIR": str(tmp_path / "d")}
    exe = Path(sys.executable).with_name("sift")
    bad = subprocess.run([str(exe), "ingest", str(tmp_path / "missing"), "--kb", "t"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr
    ok = subprocess.run([str(exe), "ingest", str(tiny_repo), "--kb", "t", "--no-index", "--json"], env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    summary = json.loads(ok.stdout)
    assert summary["files"] == 5 and summary["nodes"] > 5
    with open_database(Settings(data_dir=tmp_path / "d")).connect() as conn:
        job = conn.execute(select(IngestJob)).one()
    assert job.status == "succeeded" and job.stats["files"] == 5


@pytest.mark.parametrize(
    ("path", "start", "end", "expected_code", "expected_err"),
    [
        ("pkg/auth.py", "12", "14", 0, ""),
        ("../secret.txt", None, None, 1, "leaves the repository root"),
        ("/etc/passwd", None, None, 1, "is absolute"),
        ("pkg/missing.py", None, None, 1, "is not in knowledge base"),
        ("pkg/auth.py", "500", None, 1, "past the end"),
        ("pkg/auth.py", "10", "5", 1, "before start_line"),
    ],
)
def test_cli_files_prints_lines_and_rejects_bad_paths(tiny_repo, tmp_path, capsys, path, start, end,
                                                      expected_code, expected_err):
    data = str(tmp_path / "d")
    assert main(["ingest", str(tiny_repo), "--kb", "t", "--no-index", "--data-dir", data]) == 0
    capsys.readouterr()
    argv = ["files", "--kb", "t", path, "--data-dir", data]
    if start:
        argv += ["--start", start]
    if end:
        argv += ["--end", end]
    assert main(argv) == expected_code
    out = capsys.readouterr()
    assert expected_err in out.err
    if expected_code == 0:
        assert out.out.splitlines()[0].startswith("12  ") and "def validate_token" in out.out


def test_cli_files_unknown_kb_is_clear_error(tmp_path, capsys):
    assert main(["files", "--kb", "nope", "a.py", "--data-dir", str(tmp_path / "d")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_ingest_past_the_text_budget_reads_the_texts_in_a_second_walk(tiny_repo, tmp_path, monkeypatch):
    """Texts that do not fit in the listing's budget are read again as the parse goes: the same rows result."""
    import sift.ingest.listing as listing

    # two knowledge bases: on PostgreSQL both data directories share the test's database
    kept = ingest(Settings(data_dir=tmp_path / "kept"), tiny_repo, "kept", build_index=False)
    monkeypatch.setattr(listing, "TEXT_BUDGET_CHARS", 0)
    streamed = ingest(Settings(data_dir=tmp_path / "streamed"), tiny_repo, "streamed", build_index=False)
    assert {k: streamed[k] for k in ("files", "added", "lines", "nodes", "chunks", "skipped")} == {
        k: kept[k] for k in ("files", "added", "lines", "nodes", "chunks", "skipped")}
    rows = [sorted((c.path, c.start_line, c.content_hash) for c in _visible(open_database(Settings(data_dir=d)),
                                                                            d.name, Chunk))
            for d in (tmp_path / "kept", tmp_path / "streamed")]
    assert rows[0] == rows[1] and rows[0]
