"""Both databases: migrations, the ingest pipeline's row writes and locks, and replicas swapping generations."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, inspect, select

from sift.catalog import get_kb
from sift.config import Settings
from sift.db import make_engine, migrations_dir, open_database, upgrade
from sift.db.tables import Base, Chunk, File, KnowledgeBase, Node
from sift.errors import Conflict
from sift.ingest.locks import ingest_lock
from sift.ingest.pipeline import ingest
from sift.models import display_name
from sift.retrievers.base import IndexCache


def test_migrations_build_the_declared_schema(any_database: str) -> None:
    engine = make_engine(any_database)
    upgrade(any_database)
    with engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diffs == []
        tables = set(inspect(conn).get_table_names())
    assert {t.name for t in Base.metadata.sorted_tables} <= tables
    upgrade(any_database)  # at head already: a no-op
    engine.dispose()


def test_chunk_identity_migration_backfills_what_ingestion_writes(any_database: str, tiny_repo: Path,
                                                                 tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    settings = Settings(data_dir=tmp_path / "data", function_chunk_max_lines=3)  # long definitions come in parts
    (tiny_repo / "settings.py").write_text("import os\n\nA = 1\nB = 2\nC = os.sep\nD = 4\n\n\ndef f():\n    return A\n")
    engine = open_database(settings)
    ingest(settings, tiny_repo, "tiny", engine=engine, build_index=False)
    cols = (Chunk.id, Chunk.kind, Chunk.name, Chunk.symbol, Chunk.part, Chunk.module_code)
    with engine.connect() as conn:
        written = conn.execute(select(*cols).order_by(Chunk.id)).all()
    assert any(r.part == 2 for r in written) and any(r.module_code for r in written)
    assert all(r.name == display_name(r.symbol, r.part, r.module_code) for r in written)
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("sqlalchemy.url", any_database.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    command.downgrade(cfg, "0005_generation_leases")  # a database from before the identity columns
    with engine.connect() as conn:
        assert "symbol" not in {c["name"] for c in inspect(conn).get_columns("chunks")}
    upgrade(any_database)
    with engine.connect() as conn:
        assert conn.execute(select(*cols).order_by(Chunk.id)).all() == written
    engine.dispose()


def test_ingest_round_trips_json_booleans_and_timestamps(any_database: str, tiny_repo: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    engine = open_database(settings)
    summary = ingest(settings, tiny_repo, "tiny", engine=engine, public=True, build_index=False)
    assert summary["status"] == "published"
    with engine.connect() as conn:
        kb = conn.execute(select(KnowledgeBase)).one()
        metas = [m for m in conn.execute(select(Node.meta)).scalars() if m is not None]
    assert kb.public is True and kb.current_generation == 1 and kb.created_at is not None
    assert all(isinstance(m, dict) for m in metas)
    assert any(block["lang"] == "python" for m in metas for block in m.get("codeblocks", []))
    engine.dispose()


def _ingest_many(settings: Settings, repo: Path, kbs: list[str]) -> list[BaseException]:
    errors: list[BaseException] = []

    def one(kb: str) -> None:
        try:
            ingest(settings, repo, kb, build_index=False)
        except BaseException as exc:  # collected and asserted on in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(kb,)) for kb in kbs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_concurrent_ingests_of_different_kbs_get_distinct_node_ids(
    any_database: str, tiny_repo: Path, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data", ingest_batch_size=1)
    engine = open_database(settings)
    assert _ingest_many(settings, tiny_repo, [f"kb{i}" for i in range(4)]) == []
    with engine.connect() as conn:
        per_kb = dict(conn.execute(select(Node.kb_id, func.count()).group_by(Node.kb_id)).all())
        nodes = conn.execute(select(Node.id, Node.file_id, Node.parent_id)).all()
    assert len(per_kb) == 4 and len(set(per_kb.values())) == 1
    by_id = {n.id: n for n in nodes}
    assert len(by_id) == len(nodes)
    assert all(by_id[n.parent_id].file_id == n.file_id for n in nodes if n.parent_id is not None)
    engine.dispose()


def test_ingest_lock_holds_across_hosts_on_postgres(pg_url: str, tiny_repo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIFT_DATABASE_URL", pg_url)
    host_a, host_b = Settings(data_dir=tmp_path / "a"), Settings(data_dir=tmp_path / "b")
    engine = open_database(host_a)
    with ingest_lock(engine, host_a.data_dir, "default", "t"), pytest.raises(Conflict, match="another ingest"):
        ingest(host_b, tiny_repo, "t", build_index=False)
    assert ingest(host_b, tiny_repo, "t", build_index=False)["status"] == "published"
    engine.dispose()


def test_index_cache_replicas_both_switch_to_a_new_generation(
    any_database: str, tiny_repo: Path, tmp_path: Path, local_embedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    writer = open_database(settings)
    ingest(settings, tiny_repo, "tiny", engine=writer, embedder=local_embedder)
    replicas = [IndexCache(make_engine(any_database), settings.resolved_index_dir()) for _ in range(2)]
    assert [r.get("tiny").kb.generation for r in replicas] == [1, 1]
    before = [r.get("tiny") for r in replicas]

    (tiny_repo / "pkg" / "extra.py").write_text('def rotate_keys() -> None:\n    """Rotate keys."""\n')
    assert ingest(settings, tiny_repo, "tiny", engine=writer, embedder=local_embedder)["generation"] == 2
    after = [r.get("tiny") for r in replicas]
    assert [b.kb.generation for b in after] == [2, 2]
    assert all(a is not b for a, b in zip(after, before, strict=True))
    assert all("pkg/extra.py" in set(b.chunks.path.tolist()) for b in after)
    assert get_kb(writer, "tiny").generation == 2
    with writer.connect() as conn:
        assert conn.execute(select(func.count()).select_from(File).where(File.path == "pkg/extra.py")).scalar() == 1
    for r in replicas:
        r.engine.dispose()
    writer.dispose()
