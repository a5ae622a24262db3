"""Ingest of hostile repositories (tests/hostile.py): every case is skipped with its reason or stored line for line,
and search, DocQL and chat work on what was stored."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import select

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.catalog import get_kb, read_lines
from sift.config import Settings
from sift.db import open_database, visible_in
from sift.db.tables import Chunk, File, Node
from sift.ingest.pipeline import ingest
from sift.ingest.walk import WalkStats, walk
from sift.retrievers.files import read_file_lines
from tests.hostile import (
    ESC,
    HOSTILE_SKIPS,
    HOSTILE_TEXT,
    MAX_FILE_BYTES,
    RLO,
    deep_path,
    make_hostile_repo,
    remove_tree,
)


def _paths(engine, kb: str) -> list[str]:
    ref = get_kb(engine, kb)
    with engine.connect() as conn:
        return sorted(conn.execute(select(File.path).where(File.kb_id == ref.id,
                                                           visible_in(File, ref.generation))).scalars())


def test_ingest_publishes_past_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "good.py").write_text("def good():\n    return 1\n")
    first = ingest(settings, repo, "r", build_index=False)
    assert first["generation"] == 1
    # A bad name appears in an existing kb: the update must still publish.
    with open(os.fsencode(repo) + b"/bad\xffname.py", "wb") as fh:
        fh.write(b"x\n")
    (repo / "more.py").write_text("def more():\n    return 2\n")
    second = ingest(settings, repo, "r", build_index=False)
    assert (second["status"], second["generation"]) == ("published", 2)
    assert second["skipped"] == {"undecodable_name": 1}
    assert _paths(open_database(settings), "r") == ["good.py", "more.py"]


# -- the whole hostile repository, through ingest, search, DocQL and chat --------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, local_embedder):
    """The hostile repository ingested as ``hostile`` (summary, root, settings), served over HTTP."""
    base = tmp_path_factory.mktemp("hostile")
    root = make_hostile_repo(base)
    try:  # the deep tree is removed even when the ingest fails: pytest's own cleanup recurses per level
        settings = ApiSettings(data_dir=base / "data", auth=False, max_file_bytes=MAX_FILE_BYTES)
        summary = ingest(settings, root, "hostile", embedder=local_embedder)
        with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
                httpx.Client(base_url=url, timeout=120) as client:
            yield summary, root, settings, client
    finally:
        remove_tree(base)


def test_hostile_repo_publishes_and_counts_every_skip_reason(hostile) -> None:
    summary, root, _, _ = hostile
    assert (summary["status"], summary["generation"]) == ("published", 1)
    assert set(summary["skipped"]) == set(HOSTILE_SKIPS), summary["skipped"]
    stats = WalkStats()
    kept = {f.path for f in walk(root, max_file_bytes=MAX_FILE_BYTES, stats=stats)}
    reasons = dict(stats.skipped_paths)
    for reason, path in HOSTILE_SKIPS.items():
        assert reasons.get(path) == reason, (path, reasons)
    assert kept == {*HOSTILE_TEXT, deep_path(), ".gitignore"}
    assert summary["files"] == len(kept)


def test_hostile_repo_stored_lines_equal_sed_n_of_the_original(hostile) -> None:
    _, root, settings, _ = hostile
    engine = open_database(settings)
    assert sorted(_paths(engine, "hostile")) == sorted({*HOSTILE_TEXT, deep_path(), ".gitignore"})
    for path in [*HOSTILE_TEXT, ".gitignore"]:
        stored = read_lines(engine, get_kb(engine, "hostile"), path)
        expected = _raw_lines(root / path)
        assert stored == expected, path
        for n, line in enumerate(stored, 1):  # what `sed -n Np` prints, byte for byte
            sed = subprocess.run(["sed", "-n", f"{n}p", str(root / path)], capture_output=True, check=True).stdout
            assert sed == (line + "\n").encode(), (path, n)
    # Definitions after form feeds and U+2028 sit on their real lines.
    lines = _raw_lines(root / "formfeed.py")
    for name in ("second", "Third.method"):
        node = _node(engine, "formfeed.py", name)
        assert lines[node.start_line - 1].lstrip().startswith(f"def {name.split('.')[-1]}"), (name, node)
    heading = _node(engine, "docs/formfeed.md", "After the breaks")
    assert heading.start_line == 9 and _raw_lines(root / "docs/formfeed.md")[8] == "## After the breaks"
    _assert_chunks_are_their_lines(engine, "hostile", root)


def test_hostile_repo_answers_search_docql_and_chat(hostile) -> None:
    _, _, _, client = hostile
    r = client.post("/v1/search", json={"kb": "hostile", "query": "escape sequences cleared"})
    assert r.status_code == 200, r.text
    # The two files hold the same code, so one is the other's copy: both names come back exactly.
    found = {p for h in r.json()["hits"] for p in (h["path"], *(c["path"] for c in h["copies"]))}
    assert found >= {f"esc{ESC}[31mred.py", f"bidi{RLO}txt.py"}
    r = client.post("/v1/docql", json={"kb": "hostile", "query": '$.code.function("at_the_bottom")'})
    assert r.status_code == 200 and list(r.json()["files"]) == [deep_path()], r.text[:500]
    r = client.post("/v1/docql", json={"kb": "hostile", "query": "$.files[?(@.path ~= 'line')]"})
    assert r.status_code == 200 and "new\nline.py" in r.json()["files"], r.text[:500]
    r = client.post("/v1/docql", json={"kb": "hostile", "query": '$.toc[?(@.title == "After the breaks")]'})
    assert r.status_code == 200 and r.json()["total"] == 1, r.text[:500]
    r = client.get("/v1/kbs/hostile/files/formfeed.py", params={"start_line": 8, "end_line": 8})
    assert r.status_code == 200 and r.json()["lines"] == ["def second():"], r.text
    r = client.post("/v1/chat", json={"kb": "hostile", "message": "What does the function after_crlf return?"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["citations"], answer
    for citation in answer["citations"]:  # a path may hold control characters: a client percent-encodes them
        got = client.get(f"/v1/kbs/hostile/files/{quote(citation['path'])}",
                         params={"start_line": citation["start_line"], "end_line": citation["end_line"]})
        assert got.status_code == 200, (citation, got.text)


# -- line fidelity over the dev-set projects and the hostile repository ---------------------------------------


@pytest.mark.parametrize("project", ["attrs_src", "marshmallow_src", "click_src", "hostile"])
def test_stored_lines_are_the_files_split_on_newlines(tmp_path, request, project) -> None:
    root = make_hostile_repo(tmp_path) if project == "hostile" else request.getfixturevalue(project)
    try:
        settings = Settings(data_dir=tmp_path / "data")
        ingest(settings, root, "p", build_index=False)
        engine = open_database(settings)
        ref = get_kb(engine, "p")
        paths = _paths(engine, "p")
        assert len(paths) >= 10
        for path in paths:
            expected = _raw_lines(root / path)
            assert read_lines(engine, ref, path) == expected, path
            assert read_file_lines(engine, "p", path, 1, 50).lines == expected[:50], path
        _assert_chunks_are_their_lines(engine, "p", root)
    finally:
        if project == "hostile":
            remove_tree(root)


def _raw_lines(path: Path) -> list[str]:
    """The file's lines as `sed -n` counts them: its bytes split on b"\\n" (a final newline ends the last line)."""
    data = path.read_bytes()
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    lines = [p.decode("utf-8") for p in parts]
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    return lines


def _node(engine, path: str, name: str):  # noqa: ANN001, ANN202
    ref = get_kb(engine, "hostile")
    with engine.connect() as conn:
        return conn.execute(select(Node).join(File, Node.file_id == File.id).where(
            File.kb_id == ref.id, Node.path == path,
            (Node.name == name) | Node.qualified_name.endswith(f"::{name}"))).one()


def _assert_chunks_are_their_lines(engine, kb: str, root: Path) -> None:  # noqa: ANN001
    """Every function and doc chunk holds exactly its lines; every line count matches the file."""
    ref = get_kb(engine, kb)
    with engine.connect() as conn:
        files = {r.path: r.line_count for r in conn.execute(
            select(File.path, File.line_count).where(File.kb_id == ref.id, visible_in(File, ref.generation)))}
        chunks = conn.execute(select(Chunk.path, Chunk.kind, Chunk.start_line, Chunk.end_line, Chunk.text).join(
            File, Chunk.file_id == File.id).where(File.kb_id == ref.id, visible_in(File, ref.generation))).all()
    lines = {path: _raw_lines(root / path) for path in files}
    for path, count in files.items():
        assert count == len(lines[path]), path
    checked = 0
    for c in chunks:
        if c.kind == "file":
            continue
        exact = "\n".join(lines[c.path][c.start_line - 1 : c.end_line])
        assert c.text == exact or c.text.endswith("# (continued)\n" + exact), (c.path, c.start_line, c.end_line)
        checked += 1
    assert checked >= 5
