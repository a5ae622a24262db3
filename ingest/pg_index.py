"""Write side of the PostgreSQL search backend: postings, names, vectors and statistics of one generation.

``build_pg_index`` is what ``ingest.index.build_indexes`` is to the local backend, without files: it writes rows
for the chunks of the new generation that have none yet (a chunk row never changes, so unchanged files cost
nothing), computes the generation's document frequencies and statistics, and creates the knowledge base's HNSW
index on first use. Nothing it writes is visible to readers of the serving generation, so publishing stays the
one short transaction of ``ingest.store.publish``. Tables: ``sift.db.search_schema``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Row, text

from sift.db import is_postgres
from sift.db.search_schema import (
    VECTOR_TABLES,
    VISIBLE,
    create_search_schema,
    hnsw_index_ddl,
    pgvector_available,
    search_schema_ready,
    vector_literal,
)
from sift.embed import Embedder, EmbeddingCache, embed_with_cache
from sift.errors import SiftError
from sift.ingest.chunk import WINDOW_CHARS, WINDOW_KINDS, embedding_text, text_hash, window_texts
from sift.tokenize import tokenize

log = logging.getLogger(__name__)

#: progress(phase, done, total): "embed" while writing rows, "index" while computing statistics.
Progress = Callable[[str, int, int], None]
#: Rows written before the planner statistics of the search tables are refreshed (ANALYZE).
ANALYZE_AFTER_ROWS = 20_000
#: Memory for an HNSW build: pgvector builds the graph in memory when it fits (much faster than on disk).
HNSW_BUILD_MEMORY = "1GB"

def ensure_search_schema(engine: Engine) -> None:
    """Create the search tables when they are missing; a clear error when this database cannot hold them."""
    if not is_postgres(engine):
        raise SiftError("SIFT_SEARCH_BACKEND=postgres needs SIFT_DATABASE_URL to point at PostgreSQL "
                        "(with the pgvector extension); use SIFT_SEARCH_BACKEND=local on SQLite")
    with engine.begin() as conn:
        if search_schema_ready(conn):
            return
        if not pgvector_available(conn):
            raise SiftError("SIFT_SEARCH_BACKEND=postgres needs the pgvector extension on the PostgreSQL server "
                            "(https://github.com/pgvector/pgvector, e.g. the postgresql-16-pgvector package); "
                            "install it or use SIFT_SEARCH_BACKEND=local")
        create_search_schema(conn)


def has_pg_index(engine: Engine, kb_id: int, generation: int) -> bool:
    """True when ``generation`` of the knowledge base has its PostgreSQL search rows and statistics."""
    if not is_postgres(engine):
        return False
    with engine.connect() as conn:
        if not search_schema_ready(conn):
            return False
        return conn.execute(text("SELECT 1 FROM search_stats WHERE kb_id = :kb AND generation = :gen "
                                 "AND window_chars = :wc"),
                            {"kb": kb_id, "gen": generation, "wc": WINDOW_CHARS}).first() is not None


def build_pg_index(
    engine: Engine,
    embedder: Embedder,
    kb_id: int,
    generation: int,
    previous: int | None,
    *,
    vector_kind: str = "flat",
    progress: Progress | None = None,
    batch_size: int = 1000,
) -> dict[str, Any]:
    """Write the search rows and statistics of ``generation`` (``previous``: the serving one, or None)."""
    ensure_search_schema(engine)
    started = time.perf_counter()
    model_id, dim = embedder.model_id, int(embedder.dim)
    cache = EmbeddingCache(engine)
    counts = Counter[str]()
    t_embed = 0.0
    backfill = previous is not None and not has_pg_index(engine, kb_id, previous)  # indexed before windows
    total = _count_missing(engine, kb_id, generation, model_id, backfill)
    for rows in _missing_batches(engine, kb_id, generation, model_id, batch_size, backfill):
        t0 = time.perf_counter()
        with engine.begin() as conn:
            t_embed += _write_rows(conn, rows, kb_id, model_id, dim, embedder, cache, counts)
        counts["batches"] += 1
        if progress:
            progress("embed", counts["docs"] + counts["vectors_only"], total)
        log.debug("kb %d: batch of %d chunks in %.2fs", kb_id, len(rows), time.perf_counter() - t0)
    t_stats = time.perf_counter()
    with engine.begin() as conn:
        incremental = _write_terms(conn, kb_id, generation, previous)
        stats = _write_stats(conn, kb_id, generation, model_id, dim, vector_kind)
    if progress:
        progress("index", 1, 2)
    if counts["postings"] + counts["vectors"] >= ANALYZE_AFTER_ROWS:
        _analyze(engine)
    t_hnsw = time.perf_counter()
    if vector_kind == "hnsw":
        _build_hnsw(engine, kb_id, dim)
    if progress:
        progress("index", 2, 2)
    elapsed = time.perf_counter() - started
    out = {
        "backend": "postgres", "chunks_total": stats["n_docs"], "terms": stats["n_terms"],
        "new_chunks": counts["docs"], "postings": counts["postings"], "vectors": counts["vectors"],
        "windows": {"count": counts["windows"], "embedded": counts["windows_computed"],
                    "cached": counts["windows_cached"]},
        "embedded": counts["computed"], "cached": counts["cached"], "model_id": model_id, "dim": dim,
        "vector_kind": vector_kind, "df": "incremental" if incremental else "full",
        "seconds": {"rows": round(t_stats - started - t_embed, 3), "embed": round(t_embed, 3),
                    "stats": round(t_hnsw - t_stats, 3), "hnsw": round(time.perf_counter() - t_hnsw, 3),
                    "total": round(elapsed, 3)},
    }
    log.info("kb %d generation %d indexed in PostgreSQL: %s", kb_id, generation, out)
    return out


def _analyze(engine: Engine) -> None:
    """Fresh planner statistics for the search tables, after a write large enough to change their plans."""
    with engine.begin() as conn:
        for table in ("search_postings", "search_names", "search_docs", "search_vectors", "search_windows",
                      "search_terms"):
            conn.execute(text(f"ANALYZE {table}"))


def _build_hnsw(engine: Engine, kb_id: int, dim: int) -> None:
    """The knowledge base's HNSW indexes on its vector tables, built with ``HNSW_BUILD_MEMORY`` of work memory."""
    with engine.begin() as conn:
        conn.execute(text(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'"))
        for table in VECTOR_TABLES:
            conn.execute(text(hnsw_index_ddl(kb_id, dim, table=table)))


# A chunk that may have windows (``window_texts``) and has none for the model. Windows are written with a chunk's
# vector; this finds the chunks of a generation indexed before windows existed (``backfill``).
_NO_WINDOWS = (
    f"(c.kind IN ({', '.join(repr(str(k)) for k in WINDOW_KINDS)}) AND length(c.text) >= {int(WINDOW_CHARS)} "
    "AND NOT EXISTS (SELECT 1 FROM search_windows w WHERE w.chunk_id = c.id AND w.model_id = :model))"
)


def _need_windows(backfill: bool) -> str:
    return f"(v.chunk_id IS NULL OR {_NO_WINDOWS})" if backfill else "v.chunk_id IS NULL"


def _missing_sql(select_cols: str, backfill: bool = False) -> str:
    """Chunks visible in the generation that lack their search rows or their vector for the model (with
    ``backfill``, or their windows)."""
    return (
        f"SELECT {select_cols} FROM chunks c JOIN files f ON f.id = c.file_id "
        "LEFT JOIN search_docs d ON d.chunk_id = c.id "
        "LEFT JOIN search_vectors v ON v.chunk_id = c.id AND v.model_id = :model "
        f"WHERE {VISIBLE} AND (d.chunk_id IS NULL OR {_need_windows(backfill)})"
    )


def _count_missing(engine: Engine, kb_id: int, generation: int, model_id: str, backfill: bool) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text(_missing_sql("count(*)", backfill)),
                                {"kb": kb_id, "gen": generation, "model": model_id}).scalar_one())


def _missing_batches(engine: Engine, kb_id: int, generation: int, model_id: str,
                     batch_size: int, backfill: bool) -> Iterator[Sequence[Row]]:
    cols = ("c.id, c.file_id, c.kind, c.path, c.name, c.symbol, c.heading_path, c.content_hash, c.text, "
            f"d.chunk_id IS NULL AS need_terms, v.chunk_id IS NULL AS need_vector, "
            f"{_need_windows(backfill)} AS need_windows")
    # A server-side cursor on its own connection: each batch is written in its own short transaction meanwhile.
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=batch_size).execute(
            text(_missing_sql(cols, backfill) + " ORDER BY c.id"), {"kb": kb_id, "gen": generation, "model": model_id})
        yield from result.partitions()


def _write_rows(conn: Connection, rows: Sequence[Row], kb_id: int, model_id: str, dim: int, embedder: Embedder,
                cache: EmbeddingCache, counts: Counter[str]) -> float:
    """COPY one batch's postings, names, documents and vectors; returns the seconds spent embedding."""
    docs: list[tuple[Any, ...]] = []
    postings: list[tuple[Any, ...]] = []
    names: list[tuple[Any, ...]] = []
    todo: list[tuple[Row, str]] = []
    for r in rows:
        body = embedding_text(r.kind, r.path, r.name, r.heading_path, r.text)
        if r.need_terms:
            tokens = tokenize(body)
            docs.append((r.id, r.file_id, kb_id, len(tokens)))
            postings.extend((kb_id, term, r.id, r.file_id, tf, len(tokens)) for term, tf in Counter(tokens).items())
            names.extend((kb_id, term, r.id, r.file_id) for term in set(tokenize(r.symbol)))
        if r.need_vector:
            todo.append((r, body))
    t0 = time.perf_counter()
    vectors: list[tuple[Any, ...]] = []
    if todo:
        items = [(r.content_hash, body) for r, body in todo]
        by_hash, cached, computed = embed_with_cache(embedder, cache, items)
        counts["cached"] += cached
        counts["computed"] += computed
        vectors = [(r.id, model_id, kb_id, r.file_id, r.kind, dim, vector_literal(by_hash[r.content_hash]))
                   for r, _ in todo]
    parts = [(r, n, text_hash(t), t) for r in rows if r.need_windows
             for n, t in enumerate(window_texts(r.kind, r.path, r.name, r.text), 1)]
    windows: list[tuple[Any, ...]] = []
    if parts:
        by_hash, cached, computed = embed_with_cache(embedder, cache, [(h, t) for _, _, h, t in parts])
        counts["windows_cached"] += cached
        counts["windows_computed"] += computed
        windows = [(r.id, model_id, n, kb_id, r.file_id, r.kind, dim, vector_literal(by_hash[h]))
                   for r, n, h, _ in parts]
    seconds = time.perf_counter() - t0
    raw: Any = conn.connection.driver_connection  # psycopg's connection: COPY is not in the DB-API
    with raw.cursor() as cur:  # COPY: several times faster than INSERT for these narrow rows
        _copy(cur, "search_docs (chunk_id, file_id, kb_id, doc_len)", docs)
        _copy(cur, "search_postings (kb_id, term, chunk_id, file_id, tf, doc_len)", postings)
        _copy(cur, "search_names (kb_id, term, chunk_id, file_id)", names)
        _copy(cur, "search_vectors (chunk_id, model_id, kb_id, file_id, kind, dim, embedding)", vectors)
        _copy(cur, "search_windows (chunk_id, model_id, part, kb_id, file_id, kind, dim, embedding)", windows)
    counts["docs"] += len(docs)
    counts["vectors_only"] += len(rows) - len(docs)
    counts["postings"] += len(postings)
    counts["vectors"] += len(vectors)
    counts["windows"] += len(windows)
    return seconds


def _copy(cur: Any, target: str, rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    with cur.copy(f"COPY {target} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _write_terms(conn: Connection, kb_id: int, generation: int, previous: int | None) -> bool:
    """Document frequencies of ``generation``: the previous generation's plus added minus closed chunks when it
    has them, else counted over every visible posting. Returns True when computed incrementally."""
    params = {"kb": kb_id, "gen": generation, "prev": previous}
    conn.execute(text("DELETE FROM search_terms WHERE kb_id = :kb AND generation = :gen"), params)
    has_previous = previous is not None and conn.execute(
        text("SELECT 1 FROM search_stats WHERE kb_id = :kb AND generation = :prev"), params).first() is not None
    if has_previous:
        conn.execute(text(
            "INSERT INTO search_terms (kb_id, generation, term, df) "
            "SELECT :kb, :gen, term, sum(d) FROM ("
            "  SELECT term, df AS d FROM search_terms WHERE kb_id = :kb AND generation = :prev"
            "  UNION ALL SELECT p.term, count(*) FROM search_postings p JOIN files f ON f.id = p.file_id"
            "    WHERE p.kb_id = :kb AND f.kb_id = :kb AND f.gen_from = :gen GROUP BY p.term"
            "  UNION ALL SELECT p.term, -count(*) FROM search_postings p JOIN files f ON f.id = p.file_id"
            "    WHERE p.kb_id = :kb AND f.kb_id = :kb AND f.gen_to = :gen GROUP BY p.term"
            ") x GROUP BY term HAVING sum(d) > 0"), params)
        return True
    conn.execute(text(
        "INSERT INTO search_terms (kb_id, generation, term, df) "
        "SELECT :kb, :gen, p.term, count(*) FROM search_postings p JOIN files f ON f.id = p.file_id "
        f"WHERE p.kb_id = :kb AND {VISIBLE} GROUP BY p.term"), params)
    return False


def _write_stats(conn: Connection, kb_id: int, generation: int, model_id: str, dim: int,
                 vector_kind: str) -> dict[str, Any]:
    params = {"kb": kb_id, "gen": generation}
    sizes: Any = conn.execute(text(
        "SELECT count(*), coalesce(sum(d.doc_len), 0) FROM search_docs d JOIN files f ON f.id = d.file_id "
        f"WHERE d.kb_id = :kb AND {VISIBLE}"), params).one()
    n_docs, total_len = int(sizes[0]), int(sizes[1])
    # rank_bm25's idf floor is epsilon × the mean idf over the whole vocabulary (sift.index.bm25.idf_okapi).
    vocab: Any = conn.execute(text(
        "SELECT count(*), coalesce(sum(ln(:n - df + 0.5::float8) - ln(df + 0.5::float8)), 0) FROM search_terms "
        "WHERE kb_id = :kb AND generation = :gen"), {**params, "n": float(n_docs)}).one()
    n_terms, idf_sum = int(vocab[0]), float(vocab[1])
    conn.execute(text("DELETE FROM search_stats WHERE kb_id = :kb AND generation = :gen"), params)
    conn.execute(text(
        "INSERT INTO search_stats (kb_id, generation, n_docs, total_len, n_terms, idf_sum, model_id, dim, "
        "vector_kind, window_chars) VALUES (:kb, :gen, :n, :total, :terms, :idf, :model, :dim, :kind, :wc)"),
        {**params, "n": n_docs, "total": total_len, "terms": n_terms, "idf": idf_sum, "model": model_id,
         "dim": dim, "kind": vector_kind, "wc": WINDOW_CHARS})
    return {"n_docs": n_docs, "total_len": total_len, "n_terms": n_terms}


def drop_unused_vectors(conn: Connection, kb_id: int) -> int:
    """Delete a knowledge base's vectors of models no remaining generation uses (after a model change)."""
    if not search_schema_ready(conn):
        return 0
    return sum(conn.execute(text(
        f"DELETE FROM {table} v WHERE v.kb_id = :kb AND NOT EXISTS "
        "(SELECT 1 FROM search_stats s WHERE s.kb_id = :kb AND s.model_id = v.model_id)"), {"kb": kb_id}).rowcount
        for table in VECTOR_TABLES)
