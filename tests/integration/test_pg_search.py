"""The PostgreSQL search backend against the local one on one generation of a real repository (attrs).

attrs is ingested once on a pgvector cluster with the local backend (FAISS + BM25 files); the same generation is
then indexed in PostgreSQL (``build_pg_index``), so both backends rank the very same chunks. BM25, exact vector
and smart rankings must be equal, with and without filters; HNSW must find the exact top 10.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from sqlalchemy import text

from sift.catalog import get_kb
from sift.config import Settings
from sift.db import open_database
from sift.ingest.pg_index import build_pg_index
from sift.ingest.pipeline import ingest
from sift.models import Filters
from sift.retrievers.base import IndexCache, _glob_match
from sift.retrievers.pg_search import TOO_MANY, PgSearchCache, PgVectorChannel, _smart_plan, smart_plans
from sift.retrievers.pg_sql import SMART_PLAN, glob_sql
from sift.retrievers.search import Searcher
from tests.integration.test_bm25_parity import QUERIES

FILTERS = [
    {},
    {"path_glob": "src/attr/*.py"},
    {"path_glob": "*.md"},
    {"path_glob": "docs/"},
    {"path_glob": "src/**/_make.py"},
    {"path_glob": "[!s]*"},
    {"language": "python"},
    {"source_type": "doc"},
    {"source_type": "code", "path_glob": "tests/**"},
]


@pytest.fixture(scope="module")
def both(tmp_path_factory, pgvector_server, attrs_src, local_embedder):
    """(local searcher, postgres searcher, engine) over one generation of attrs."""
    url = pgvector_server.create_database(migrated=True)
    settings = Settings(data_dir=tmp_path_factory.mktemp("pgsearch"), database_url=url)
    ingest(settings, attrs_src, "attrs", embedder=local_embedder)
    engine = open_database(settings)
    kb = get_kb(engine, "attrs")
    stats = build_pg_index(engine, local_embedder, kb.id, kb.generation, None)
    assert stats["chunks_total"] > 500 and stats["embedded"] == 0  # every vector came from the embedding cache
    assert stats["windows"]["count"] > 100 and stats["windows"]["embedded"] == 0
    local = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), local_embedder)
    pg = Searcher(engine, PgSearchCache(engine), local_embedder)
    yield local, pg, engine
    local.close()
    pg.close()
    engine.dispose()


def _ids(hits):
    return [h.chunk_id for h in hits]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_pg_bm25_top10_equals_local_bm25(both, filters):
    local, pg, _ = both
    f = Filters(kb="attrs", **filters)
    compared = 0
    for q in QUERIES:
        ours, theirs = pg.channel("bm25", q, f, 10), local.channel("bm25", q, f, 10)
        assert _ids(ours) == _ids(theirs), q
        assert [h.score for h in ours] == pytest.approx([h.score for h in theirs], rel=1e-12), q
        assert [(h.path, h.start_line, h.end_line, h.node_id) for h in ours] == \
            [(h.path, h.start_line, h.end_line, h.node_id) for h in theirs]
        compared += bool(theirs)
    assert compared >= len(QUERIES) // 2


@pytest.mark.parametrize("filters", FILTERS[:5], ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_pg_smart_equals_local_smart(both, filters):
    local, pg, _ = both
    f = Filters(kb="attrs", **filters)
    for q in QUERIES:
        ours, o_res = pg.smart.search_detailed(q, f, 10)
        theirs, t_res = local.smart.search_detailed(q, f, 10)
        assert (o_res.level, o_res.required) == (t_res.level, t_res.required), q
        assert _ids(ours) == _ids(theirs), q


Bucket = namedtuple("Bucket", "m1 m2 m3 n")
# (histogram of (m1, m2, m3) → chunks, n_terms, k): empty, exact ties at k, every plan chosen, none reaching k.
PLAN_CASES = [
    ([], 1, 10), ([], 3, 10), ([], 2, 0),
    ([Bucket(1, 1, 1, 10)], 1, 10), ([Bucket(1, 1, 1, 9)], 1, 10), ([Bucket(0, 1, 1, 10)], 1, 10),
    ([Bucket(0, 0, 1, 10)], 1, 10), ([Bucket(0, 0, 1, 9), Bucket(0, 1, 1, 1)], 1, 10),
    ([Bucket(2, 2, 2, 3), Bucket(1, 2, 3, 7)], 3, 10), ([Bucket(2, 2, 2, 3), Bucket(1, 2, 3, 7)], 2, 10),
    ([Bucket(0, 1, 2, 6), Bucket(1, 1, 1, 4)], 6, 10), ([Bucket(0, 0, 2, 10)], 4, 10),
    ([Bucket(0, 0, 2, 9)], 4, 10), ([Bucket(0, 0, 1, 900)], 3, 10), ([Bucket(1, 2, 5, 3)], 5, 3),
    ([Bucket(3, 3, 3, 600), Bucket(2, 3, 4, 20)], 4, 10), ([Bucket(0, 1, 1, 1000), Bucket(0, 0, 2, 10)], 2, 10),
]


def _random_plan_cases(n_cases: int = 300) -> list:
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(n_cases):
        n_terms = int(rng.integers(1, 7))
        buckets = []
        for _ in range(int(rng.integers(0, 6))):
            m = sorted(int(x) for x in rng.integers(0, n_terms + 1, size=3))  # m1 <= m2 <= m3, as matches are
            if rng.random() < 0.2:
                rng.shuffle(m)  # and triples real matches never make, to test the rule, not the data
            buckets.append(Bucket(*m, int(rng.choice([1, 3, 9, 10, 11, 500, 1000]))))
        cases.append((buckets, n_terms, int(rng.choice([0, 1, 3, 10, 20, 100]))))
    return cases


def test_pg_smart_plan_sql_equals_smart_plan(both):
    """The plan chosen inside the smart query equals ``_smart_plan`` (SmartMatcher.search's rule) case by case."""
    _, _, engine = both
    sql = text("WITH hist AS (SELECT * FROM unnest(CAST(:m1 AS int[]), CAST(:m2 AS int[]), CAST(:m3 AS int[]), "
               "CAST(:n AS bigint[])) AS h(m1, m2, m3, n))" + SMART_PLAN + "SELECT lvl, req FROM plan")
    cases = PLAN_CASES + _random_plan_cases()
    with engine.connect() as conn:
        for hist, n_terms, k in cases:
            plans = smart_plans(n_terms)
            got = conn.execute(sql, {"m1": [b.m1 for b in hist], "m2": [b.m2 for b in hist],
                                     "m3": [b.m3 for b in hist], "n": [b.n for b in hist], "k": k,
                                     "n_terms": n_terms, "too_many": TOO_MANY,
                                     "plan_levels": [lv for lv, _ in plans],
                                     "plan_required": [r for _, r in plans]}).one()
            assert tuple(got) == _smart_plan(hist, n_terms, k), (hist, n_terms, k)
    chosen = {_smart_plan(hist, n_terms, k) for hist, n_terms, k in cases}
    assert {(1, 1), (2, 1), (3, 1), (3, 2), (3, 4), (3, 5)} <= chosen  # the cases reach every kind of plan


@pytest.mark.parametrize("filters", FILTERS[:5], ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "none")
def test_pg_exact_vectors_equal_local_flat(both, local_embedder, filters):
    local, pg, _ = both
    f = Filters(kb="attrs", **filters)
    for q in QUERIES:
        vec = local_embedder.embed_query(q)
        for index_type in ("all", "function"):
            ours = PgVectorChannel(pg.cache, local_embedder, index_type).search(q, f, 10, query_vec=vec)
            theirs = local._vector(local.cache, local_embedder, index_type).search(q, f, 10, query_vec=vec)
            assert _ids(ours) == _ids(theirs), (q, index_type)
            assert [h.score for h in ours] == pytest.approx([h.score for h in theirs], abs=1e-5)


def test_pg_fused_search_equals_local(both):
    local, pg, _ = both
    for q in QUERIES[:12]:
        ours, theirs = pg.search(q, Filters(kb="attrs"), k=10), local.search(q, Filters(kb="attrs"), k=10)
        assert [(h.path, h.start_line, h.end_line) for h in ours.hits] == \
            [(h.path, h.start_line, h.end_line) for h in theirs.hits], q
        assert ours.snippets == theirs.snippets


def test_pg_hnsw_finds_the_exact_top10(both, local_embedder):
    """HNSW (m=16, ef_construction=64, ef_search=128) against the exact scan on attrs' MiniLM vectors."""
    from sift.db.search_schema import hnsw_index_ddl, hnsw_index_name

    _, pg, engine = both
    kb = get_kb(engine, "attrs")
    with engine.begin() as conn:
        conn.execute(text(hnsw_index_ddl(kb.id, local_embedder.dim)))
        plan = "\n".join(r[0] for r in conn.execute(text(
            "EXPLAIN SELECT chunk_id FROM search_vectors v WHERE v.kb_id = :kb AND v.dim = 384 "
            "ORDER BY v.embedding::vector(384) <#> CAST(:q AS vector(384)) LIMIT 128"),
            {"kb": kb.id, "q": "[" + ",".join(["0.05"] * 384) + "]"}))
    assert hnsw_index_name(kb.id, 384) in plan, plan
    approx = PgVectorChannel(pg.cache, local_embedder, exact=False)
    exact = PgVectorChannel(pg.cache, local_embedder, exact=True)
    recalls = []
    for q in QUERIES:
        vec = local_embedder.embed_query(q)
        want = set(_ids(exact.search(q, Filters(kb="attrs"), 10, query_vec=vec)))
        got = set(_ids(approx.search(q, Filters(kb="attrs"), 10, query_vec=vec)))
        recalls.append(len(want & got) / len(want))
    assert float(np.mean(recalls)) >= 0.95, recalls
    # A filter that leaves few of the graph's candidates still gets k hits (the exact fallback).
    narrow = approx.search("frozen", Filters(kb="attrs", path_glob="*.md"), 10)
    assert len(narrow) == 10 and all(h.path.endswith(".md") for h in narrow)


PATHS = ["README.md", "docs/index.md", "docs/api/attrs.rst", "src/attr/_make.py", "src/attr/__init__.py",
         "src/attrs/__init__.pyi", "tests/test_make.py", "a/b/c/d.txt", "weird name [x].py", "x%_y.py",
         "src/attr/sub/deep.py", "srcfile.py"]
GLOBS = ["*.md", "docs/", "docs", "src/**/*.py", "src/attr/*.py", "**/__init__.py", "[!s]*", "[st]*/*.py",
         "*[x]*", "x%_y.py", "?EADME.md", "src/**", "tests", "a/*/d.txt", "weird name [[]x].py", "*.py[i]",
         "src/attr", "src/*", "d.txt", "_make.py", "*make*"]


@pytest.mark.parametrize("pattern", GLOBS)
def test_pg_glob_condition_matches_glob_match(both, pattern):
    _, _, engine = both
    cond, params = glob_sql(pattern, "p")
    with engine.connect() as conn:
        got = set(conn.execute(text(f"SELECT p FROM unnest(CAST(:paths AS text[])) AS u(p) WHERE {cond}"),
                               {"paths": PATHS, **params}).scalars())
    assert got == {p for p in PATHS if _glob_match(p, pattern)}
