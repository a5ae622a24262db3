"""Garbage collection's promise: the previously serving generation survives the next publish, whatever numbers
abandoned runs used in between; `sift kb gc` clears what killed runs left."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from sift.catalog import generation_dir, get_kb
from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import File, Generation
from sift.ingest import store
from sift.ingest.locks import kb_lock
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


def _repo(root: Path) -> Path:
    for rel, text in TINY_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _generations(engine) -> dict[int, str]:  # noqa: ANN001
    with engine.connect() as conn:
        return dict(conn.execute(select(Generation.number, Generation.status)).all())


def _abandon_a_run(engine, settings: Settings) -> int:  # noqa: ANN001
    """Start a generation and its half-built index folder, as a run killed mid-build leaves them."""
    kb = get_kb(engine, "t")
    with engine.begin() as conn:
        number = store.next_generation(conn, kb)
    partial = generation_dir(settings.resolved_index_dir(), kb.id, 0).parent / f".g{number}.building-999999"
    partial.mkdir(parents=True)
    (partial / "file.faiss").write_bytes(b"half")
    return number


def test_gc_keeps_the_previously_serving_generation_across_abandoned_ones(tmp_path, local_embedder):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    engine = open_database(settings)
    ingest(settings, repo, "t", embedder=local_embedder)  # generation 1 serves
    kb = get_kb(engine, "t")
    assert [_abandon_a_run(engine, settings) for _ in range(2)] == [2, 3]
    (repo / "README.md").write_text("# Tiny, changed\n")
    summary = ingest(settings, repo, "t", embedder=local_embedder)
    assert summary["generation"] == 4
    index_root = settings.resolved_index_dir()
    # Generation 1 served until a moment ago: its index and its README version stay for in-flight requests.
    assert _generations(engine) == {1: "retired", 4: "published"}
    assert generation_dir(index_root, kb.id, 1).is_dir() and generation_dir(index_root, kb.id, 4).is_dir()
    with engine.connect() as conn:
        readme = conn.execute(select(File.gen_from, File.gen_to).where(File.path == "README.md")).all()
    assert sorted(readme, key=lambda r: r[0]) == [(1, 4), (4, None)]
    # The next publish retires 4 and drops 1: only the generation before the serving one is kept.
    (repo / "README.md").write_text("# Tiny, changed again\n")
    assert ingest(settings, repo, "t", embedder=local_embedder)["generation"] == 5
    assert _generations(engine) == {4: "retired", 5: "published"}
    assert not generation_dir(index_root, kb.id, 1).exists()


def test_kb_gc_clears_dead_builders_and_generations_stuck_in_building(tmp_path, capsys):
    settings = Settings(data_dir=tmp_path / "data")
    repo = _repo(tmp_path / "repo")
    engine = open_database(settings)
    ingest(settings, repo, "t", build_index=False)
    stuck = _abandon_a_run(engine, settings)
    assert _generations(engine) == {1: "published", stuck: "building"}
    data = ["--data-dir", str(settings.data_dir)]
    with kb_lock(settings.data_dir, "default", "t"):  # a live ingest: nothing of it may go
        assert main(["kb", "gc", "t", *data]) == 1
    assert "another ingest" in capsys.readouterr().err
    assert _generations(engine)[stuck] == "building"
    assert main(["kb", "gc", "t", *data]) == 0
    out = capsys.readouterr().out
    assert "abandoned 1 generations stuck in building" in out and "removed 1 half-built" in out, out
    assert _generations(engine) == {1: "published", stuck: "abandoned"}
    leftovers = [p for p in settings.resolved_index_dir().rglob("*") if ".building-" in p.name]
    assert leftovers == []
    assert get_kb(engine, "t").generation == 1
