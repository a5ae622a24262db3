"""Incremental re-ingest and crash safety with the real model, FAISS files and SQLite.

Kill tests run the ingest in a child process whose progress callback SIGKILLs its own process at a chosen
phase — no hooks in the product code — then check that the previous generation still serves and that the next
run succeeds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import select

from sift.catalog import get_kb
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import Chunk, Generation
from sift.errors import Conflict, NotFound
from sift.ingest.locks import kb_lock
from sift.ingest.pipeline import ingest
from sift.models import Filters
from sift.retrievers.base import IndexCache
from sift.retrievers.files import read_file_lines
from sift.retrievers.search import Searcher
from tests.conftest import TINY_FILES


def _repo(root: Path) -> Path:
    for rel, text in TINY_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _search_paths(settings: Settings, embedder, query: str) -> list[str]:
    engine = open_database(settings)
    s = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), embedder)
    try:
        return [h.path for h in s.search(query, Filters(kb="t"), k=10).hits]
    finally:
        s.close()


def test_reingest_touching_one_file_reembeds_only_its_chunks(tmp_path, local_embedder):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    first = ingest(settings, repo, "t", embedder=local_embedder)
    assert first["index"]["embedded"] == first["chunks"]
    auth = repo / "pkg" / "auth.py"
    auth.write_text(auth.read_text().replace('"ok"', '"welcome"'))  # changes only the login function
    second = ingest(settings, repo, "t", embedder=local_embedder)
    assert (second["changed"], second["added"], second["unchanged"]) == (1, 0, 4)
    engine = open_database(settings)
    with engine.connect() as conn:
        auth_chunks = conn.execute(
            select(Chunk.name).where(Chunk.path == "pkg/auth.py", Chunk.text.contains("welcome"))).all()
    # The login function chunk and the file chunk (whose head shows the changed line) are new text; nothing else.
    assert second["index"]["embedded"] == len(auth_chunks) == 2
    assert second["index"]["embedded"] + second["index"]["cached"] + second["index"]["reused"] == \
        second["index"]["chunks_total"]


def test_reingest_deleted_file_leaves_every_index(tmp_path, local_embedder):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    ingest(settings, repo, "t", embedder=local_embedder)
    assert "docs/guide.md" in _search_paths(settings, local_embedder, "rotate the secret every 90 days")
    (repo / "docs" / "guide.md").unlink()
    summary = ingest(settings, repo, "t", embedder=local_embedder)
    assert summary["deleted"] == 1
    assert "docs/guide.md" not in _search_paths(settings, local_embedder, "rotate the secret every 90 days")
    from sift.cli import main

    assert main(["docql", '$.toc[?(@.name == "Rotating secrets")]', "--kb", "t", "--json",
                 "--data-dir", str(settings.data_dir)]) == 0


def test_concurrent_ingest_of_one_kb_fails_clearly(tmp_path, local_embedder):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    with kb_lock(settings.data_dir, "default", "t"), pytest.raises(Conflict, match="another ingest"):
        ingest(settings, repo, "t", embedder=local_embedder)
    assert ingest(settings, repo, "t", embedder=local_embedder)["status"] == "published"


KILLER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from sift.ingest.pipeline import ingest
    from sift.config import Settings
    phase, after = sys.argv[3], int(sys.argv[4])
    def progress(p, done, total):
        if p == phase and done >= after:
            os.kill(os.getpid(), signal.SIGKILL)
    settings = Settings(data_dir=Path(sys.argv[2]), ingest_batch_size=2)
    ingest(settings, Path(sys.argv[1]), "t", progress=progress)
    print("finished without being killed")
""")


@pytest.mark.parametrize(("phase", "after"), [("parse", 4), ("embed", 1), ("index", 1)])
def test_sigkill_mid_ingest_leaves_a_generation_serving(tmp_path, local_embedder, phase, after):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    ingest(settings, repo, "t", embedder=local_embedder)
    before = _search_paths(settings, local_embedder, "where is the token validated")
    # Change the repository: a new file, a changed one and a deleted one.
    (repo / "pkg" / "extra.py").write_text("def brand_new_helper():\n    return 'validated token cache'\n")
    (repo / "pkg" / "auth.py").write_text("def replaced():\n    return 1\n")
    (repo / "README.md").unlink()
    child = subprocess.run([sys.executable, "-c", KILLER, str(repo), str(settings.data_dir), phase, str(after)],
                           capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[2])
    assert child.returncode == -9, child.stderr[-2000:]
    engine = open_database(settings)
    kb = get_kb(engine, "t")
    if phase == "parse":
        assert kb.generation == 1
        # Generation 1 serves exactly as before: same search results, same file text, the deleted file still there.
        assert _search_paths(settings, local_embedder, "where is the token validated") == before
        assert "validate_token" in "\n".join(read_file_lines(engine, "t", "pkg/auth.py").lines)
        assert read_file_lines(engine, "t", "README.md").lines[0] == "# Tiny"
    else:
        # Killed after the keyword index was published: generation 2 serves the new content by keyword.
        assert kb.generation == 2
        assert "pkg/extra.py" in _search_paths(settings, local_embedder, "brand_new_helper validated token cache")
        assert "def replaced" in "\n".join(read_file_lines(engine, "t", "pkg/auth.py").lines)
        with pytest.raises(NotFound):
            read_file_lines(engine, "t", "README.md")
    # The next run cleans up and publishes.
    summary = ingest(settings, repo, "t", embedder=local_embedder)
    assert summary["status"] == "published" and summary["generation"] >= 2 and summary["ready"] == "complete"
    assert "pkg/extra.py" in _search_paths(settings, local_embedder, "brand new helper validated token cache")
    with engine.connect() as conn:
        statuses = dict(conn.execute(select(Generation.number, Generation.status)).all())
    assert statuses[summary["generation"]] == "published"
    index_root = settings.resolved_index_dir()
    leftovers = [p.name for p in index_root.rglob("*") if p.is_dir() and ".building-" in p.name]
    assert leftovers == []


def _versions(engine, path: str) -> list[tuple[int, int | None]]:
    from sift.db.tables import File

    with engine.connect() as conn:
        return sorted(conn.execute(select(File.gen_from, File.gen_to).where(File.path == path)).all())


def test_gc_keeps_a_generation_while_a_replica_leases_it(tmp_path):
    from datetime import timedelta

    from sift.catalog import touch_lease, utcnow
    from sift.ingest.store import collect_garbage

    settings = Settings(data_dir=tmp_path / "data", generation_grace_s=60)
    repo = _repo(tmp_path / "repo")
    engine = open_database(settings)
    readme = repo / "README.md"
    ingest(settings, repo, "t", build_index=False)  # generation 1
    kb = get_kb(engine, "t")
    with engine.begin() as conn:
        touch_lease(conn, kb.id, 1, "replica-a")  # a replica still serving generation 1
    for n in (2, 3):
        readme.write_text(f"# Tiny {n}\n")
        ingest(settings, repo, "t", build_index=False)
    # README.md's first version (only in generation 1) survives two publishes: its lease is fresh.
    assert _versions(engine, "README.md") == [(1, 2), (2, 3), (3, None)]
    with engine.begin() as conn:
        touch_lease(conn, kb.id, 1, "replica-a", now=utcnow() - timedelta(seconds=120))  # unused for 2 minutes
        collect_garbage(conn, kb.id, 3, settings.resolved_index_dir(), settings.generation_grace_s)
    assert _versions(engine, "README.md") == [(3, None)]


def test_gc_without_leases_keeps_only_the_previous_generation(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    engine = open_database(settings)
    for n in (1, 2, 3):
        (repo / "README.md").write_text(f"# Tiny {n}\n")
        ingest(settings, repo, "t", build_index=False)
    assert _versions(engine, "README.md") == [(2, 3), (3, None)]


def test_index_cache_leases_the_generation_it_serves(tmp_path, local_embedder):
    from sift.db.tables import GenerationLease

    settings = Settings(data_dir=tmp_path / "data")
    ingest(settings, _repo(tmp_path / "repo"), "t", embedder=local_embedder)
    engine = open_database(settings)
    cache = IndexCache(engine, settings.resolved_index_dir())
    cache.get("t")
    with engine.connect() as conn:
        leases = conn.execute(select(GenerationLease.generation, GenerationLease.replica)).all()
    assert leases == [(1, cache.replica)]
