"""Ingest and search with SIFT_SEARCH_BACKEND=postgres: tenants, generations, garbage collection, replicas."""

from __future__ import annotations

import dataclasses
import threading
import time

import httpx
import pytest
from sqlalchemy import text

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.catalog import get_kb
from sift.config import Settings
from sift.db import make_engine, open_database
from sift.db.search_schema import SEARCH_TABLES, pgvector_available, search_schema_ready
from sift.errors import SiftError
from sift.ingest.pg_index import ensure_search_schema
from sift.ingest.pipeline import ingest
from sift.ingest.store import collect_garbage
from sift.models import Filters
from sift.retrievers.backend import make_index_cache
from sift.retrievers.search import Searcher
from tests.conftest import TINY_FILES

SECRET = "def zebra_quartz_ledger():\n    \"\"\"Reconcile the zebra quartz ledger.\"\"\"\n    return 'tenant b'\n"


def _write(root, files):
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    return root


@pytest.fixture
def pg_settings(tmp_path, pgvector_server):
    url = pgvector_server.create_database(migrated=True)
    return Settings(data_dir=tmp_path / "data", database_url=url, search_backend="postgres",
                    index_dir=tmp_path / "no-index-dir")


def _counts(engine, kb_id):
    with engine.connect() as conn:
        return {t: conn.execute(text(f"SELECT count(*) FROM {t} WHERE kb_id = :kb"), {"kb": kb_id}).scalar()
                for t in SEARCH_TABLES}


def test_pg_backend_never_ranks_another_tenants_chunk(tmp_path, pg_settings, local_embedder):
    ours = _write(tmp_path / "ours", TINY_FILES)
    theirs = _write(tmp_path / "theirs", {**TINY_FILES, "pkg/ledger.py": SECRET})
    ingest(pg_settings, ours, "tiny", embedder=local_embedder)
    ingest(pg_settings, theirs, "tiny", tenant="acme", embedder=local_embedder)
    engine = open_database(pg_settings)
    searcher = Searcher(engine, make_index_cache(pg_settings, engine), local_embedder)
    try:
        query = "zebra_quartz_ledger reconcile the zebra quartz ledger"
        # The other tenant's chunk is the best match there, on every channel...
        for channel in ("bm25", "vector", "smart"):
            top = searcher.search(query, Filters(kb="tiny", tenant="acme"), k=3, channels=channel).hits
            assert top[0].path == "pkg/ledger.py", (channel, top)
        # ...and never enters our ranking, however deep it goes, with or without other filters.
        for filters in (Filters(kb="tiny"), Filters(kb="tiny", tenant="default"),
                        Filters(kb="tiny", path_glob="pkg/**"), Filters(kb="tiny", source_type="code")):
            for channel in ("bm25", "vector", "smart", "all"):
                hits = searcher.search(query, filters, k=50, channels=channel).hits
                assert hits or channel in ("bm25", "smart")
                assert all(h.path != "pkg/ledger.py" for h in hits), (channel, filters)
    finally:
        searcher.close()
    assert not (tmp_path / "no-index-dir").exists()  # nothing was written for the local backend


def _paths(channel, query, bundle):
    return {h.path for h in channel.search(query, Filters(kb="tiny"), 50, bundle=bundle)}


def test_pg_backend_generations_and_gc(tmp_path, pg_settings, local_embedder):
    repo = _write(tmp_path / "tiny", TINY_FILES)
    first = ingest(pg_settings, repo, "tiny", embedder=local_embedder)
    assert first["status"] == "published" and first["index"]["df"] == "full"
    assert ingest(pg_settings, repo, "tiny", embedder=local_embedder)["status"] == "unchanged"
    (repo / "pkg" / "auth.py").write_text(TINY_FILES["pkg/auth.py"].replace("compare_digest", "constant_time_eq"))
    (repo / "docs" / "guide.md").unlink()
    second = ingest(pg_settings, repo, "tiny", embedder=local_embedder)
    assert second["index"]["df"] == "incremental" and second["index"]["new_chunks"] > 0
    engine = open_database(pg_settings)
    kb = get_kb(engine, "tiny")
    searcher = Searcher(engine, make_index_cache(pg_settings, engine), local_embedder)
    try:
        hits = searcher.search("constant_time_eq", Filters(kb="tiny"), k=5, channels="bm25").hits
        assert hits and hits[0].path == "pkg/auth.py"
        gone = searcher.search("rotate the secret every 90 days", Filters(kb="tiny"), k=20, channels="all").hits
        assert gone and all(h.path != "docs/guide.md" for h in gone)
        # Incremental document frequencies equal a count over the generation's visible postings.
        with engine.connect() as conn:
            recount = dict(conn.execute(text(
                "SELECT p.term, count(*) FROM search_postings p JOIN files f ON f.id = p.file_id WHERE f.kb_id = :kb "
                "AND f.gen_from <= :g AND (f.gen_to IS NULL OR f.gen_to > :g) GROUP BY p.term"),
                {"kb": kb.id, "g": kb.generation}).all())
            stored = dict(conn.execute(text("SELECT term, df FROM search_terms WHERE kb_id = :kb AND generation = :g"),
                                       {"kb": kb.id, "g": kb.generation}).all())
        assert stored == recount
        # Each generation ranks only its own file versions: the first still has the old auth.py and the guide, not
        # the second's new auth.py; the second the reverse. With and without filters on files.
        old, new = searcher.cache._load(dataclasses.replace(kb, generation=first["generation"])), searcher.cache._load(kb)
        for bundle in (old, new):
            with engine.connect() as conn:
                visible = set(conn.execute(text(
                    "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.kb_id = :kb "
                    "AND f.gen_from <= :g AND (f.gen_to IS NULL OR f.gen_to > :g)"),
                    {"kb": kb.id, "g": bundle.kb.generation}).scalars())
            for filters in (Filters(kb="tiny"), Filters(kb="tiny", language="python"), Filters(kb="tiny", path_glob="*")):
                for channel in (searcher.bm25, searcher.smart):
                    for query in ("compare_digest", "constant_time_eq", "rotate the secret", "validate the token"):
                        hits = channel.search(query, filters, 50, bundle=bundle)
                        assert {h.chunk_id for h in hits} <= visible, (channel.name, query, filters)
        assert "pkg/auth.py" in _paths(searcher.bm25, "compare_digest", old)
        assert "pkg/auth.py" not in _paths(searcher.bm25, "compare_digest", new)
        assert "pkg/auth.py" not in _paths(searcher.bm25, "constant_time_eq", old)
        for channel in (searcher.bm25, searcher.smart):
            assert "docs/guide.md" in _paths(channel, "rotate the secret", old)
            assert "docs/guide.md" not in _paths(channel, "rotate the secret", new)
    finally:
        searcher.close()
    before = _counts(engine, kb.id)
    with engine.begin() as conn:
        collect_garbage(conn, kb.id, kb.generation, pg_settings.resolved_index_dir(), grace_s=0)
    after = _counts(engine, kb.id)
    with engine.connect() as conn:
        live = conn.execute(text("SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.kb_id = :kb"),
                            {"kb": kb.id}).scalar()
        gens = conn.execute(text("SELECT DISTINCT generation FROM search_terms WHERE kb_id = :kb"),
                            {"kb": kb.id}).scalars().all()
    assert after["search_docs"] == after["search_vectors"] == live < before["search_docs"]
    assert after["search_postings"] < before["search_postings"]
    assert gens == [kb.generation] and after["search_stats"] == 1


def test_pg_search_schema_needs_pgvector(pg_url):
    """On any PostgreSQL the migration succeeds; without pgvector it leaves the search tables out and the
    postgres backend says what is missing."""
    engine = open_database(Settings(database_url=pg_url))
    with engine.connect() as conn:
        available, ready = pgvector_available(conn), search_schema_ready(conn)
    assert ready == available
    if available:
        ensure_search_schema(engine)
    else:
        with pytest.raises(SiftError, match="pgvector"):
            ensure_search_schema(engine)


def test_pg_backend_refuses_sqlite(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with pytest.raises(SiftError, match="PostgreSQL"):
        ensure_search_schema(engine)


def _top_path_within(url: str, query: str, want: str, seconds: float) -> str | None:
    """The top BM25 hit's path, asked again until it is ``want`` or ``seconds`` have passed."""
    deadline, path = time.monotonic() + seconds, None
    with httpx.Client(timeout=60) as http:
        while True:
            r = http.post(f"{url}/v1/search", json={"kb": "tiny", "query": query, "k": 3, "channels": "bm25"})
            assert r.status_code == 200, r.text
            path = r.json()["hits"][0]["path"] if r.json()["hits"] else None
            if path == want or time.monotonic() > deadline:
                return path
            time.sleep(0.05)


def test_pg_two_replicas_without_index_dir_serve_through_a_publish(tmp_path, pgvector_server, local_embedder):
    """Two API replicas share one database and no index directory; an ingest publishes while both answer."""
    url = pgvector_server.create_database(migrated=True)
    repo = _write(tmp_path / "tiny", TINY_FILES)
    shared = {"database_url": url, "search_backend": "postgres", "auth": False}
    a = ApiSettings(data_dir=tmp_path / "replica-a", **shared)
    b = ApiSettings(data_dir=tmp_path / "replica-b", **shared)
    ingest(Settings(data_dir=tmp_path / "worker", **{k: v for k, v in shared.items() if k != "auth"}), repo, "tiny",
           embedder=local_embedder)
    errors: list[str] = []
    answered = [0, 0]
    stop = threading.Event()

    def load(url: str, slot: int) -> None:
        with httpx.Client(timeout=60) as http:
            while not stop.is_set():
                r = http.post(f"{url}/v1/search", json={"kb": "tiny", "query": "where is the token validated", "k": 5})
                if r.status_code != 200 or not r.json()["hits"]:
                    errors.append(f"{r.status_code} {r.text[:200]}")
                answered[slot] += 1

    with serve_in_thread(create_app(a, embedder=local_embedder)) as url_a, \
            serve_in_thread(create_app(b, embedder=local_embedder)) as url_b:
        clients = [threading.Thread(target=load, args=(u, i)) for i, u in enumerate((url_a, url_b))]
        for t in clients:
            t.start()
        try:
            (repo / "pkg" / "rotate.py").write_text("def rotate_keyring_now():\n    return 'rotated'\n")
            published = ingest(Settings(data_dir=tmp_path / "worker", database_url=url, search_backend="postgres"),
                               repo, "tiny", embedder=local_embedder)
            # The new generation is searched without a reload, once the replica's remembered (tenant, kb) →
            # generation lookup expires (PgSearchCache ref_ttl_s=0.5 in the app).
            for u in (url_a, url_b):
                assert _top_path_within(u, "rotate_keyring_now", "pkg/rotate.py", seconds=2.0) == "pkg/rotate.py"
        finally:
            stop.set()
            for t in clients:
                t.join(timeout=60)
    assert published["status"] == "published" and published["generation"] == 2
    assert errors == [] and min(answered) > 0, (errors[:3], answered)
    for replica in ("replica-a", "replica-b"):
        assert not (tmp_path / replica / "indexes").exists()


LONG_DOC = "# Operations\n\n" + "".join(
    f"Step {i} of the nightly job copies the day's logs to the archive and checks their size.\n" for i in range(20))


def test_pg_backend_writes_windows_and_backfills_a_generation_indexed_before_them(tmp_path, pg_settings,
                                                                                  local_embedder):
    repo = _write(tmp_path / "tiny", {**TINY_FILES, "docs/ops.md": LONG_DOC})
    first = ingest(pg_settings, repo, "tiny", embedder=local_embedder)
    engine = open_database(pg_settings)
    kb = get_kb(engine, "tiny")
    count = _counts(engine, kb.id)["search_windows"]
    assert count >= 2 and first["index"]["windows"]["count"] == count
    assert ingest(pg_settings, repo, "tiny", embedder=local_embedder)["status"] == "unchanged"
    with engine.begin() as conn:  # as a generation indexed before windows existed (migration 0012) looks
        conn.execute(text("DELETE FROM search_windows WHERE kb_id = :kb"), {"kb": kb.id})
        conn.execute(text("UPDATE search_stats SET window_chars = NULL WHERE kb_id = :kb"), {"kb": kb.id})
    second = ingest(pg_settings, repo, "tiny", embedder=local_embedder)
    assert second["status"] == "published" and second["generation"] == first["generation"] + 1
    assert second["index"]["windows"] == {"count": count, "embedded": 0, "cached": count}
    assert second["index"]["embedded"] == 0
    assert _counts(engine, kb.id)["search_windows"] == count
    assert ingest(pg_settings, repo, "tiny", embedder=local_embedder)["status"] == "unchanged"
