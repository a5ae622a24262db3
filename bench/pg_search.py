"""The PostgreSQL search backend at scale: vector, BM25 and fused latency, HNSW recall, against local FAISS/BM25.

    python bench/pg_search.py [--sizes 100000 1000000] [--queries 200] [--exact-queries 30] [--faiss-hnsw-max 200000]
                              [--json OUT] [--seed 7] [--data-dir DIR] [--skip-local] [--real-vectors DATA_DIR]

For each size a throwaway pgvector cluster (pgserver's PostgreSQL 16 + pgvector, 127.0.0.1) gets one knowledge
base of that many chunks: generated code-like text (a Zipf vocabulary of words and identifiers, ~60 tokens per
chunk, 10 chunks per file) and clustered synthetic 384-d unit vectors (``bench/vector_scale.py``'s mixture). Rows
are written as ingestion writes them (``ingest.pg_index``), then the HNSW index is built (m=16, ef_construction=64).
Queries go through the real channels (``retrievers.pg_search``) one at a time, as a request issues them:
vector (exact scan and HNSW, ef_search=128), BM25, smart (at k=100, the depth ``Searcher`` asks of it), and fused
search (``Searcher``: bm25 + vector with RRF and the composite score, snippets included; and all three channels
with smart). Local FAISS flat (and HNSW up to ``--faiss-hnsw-max``) and the local BM25 matrix run on the same
vectors and tokens in the same process. Every query runs once through the vector, BM25 and smart channels before
the timed passes. HNSW recall@10 is measured against the exact scan. Server settings: shared_buffers 1GB (2GB at
1M), work_mem 64MB, maintenance_work_mem 2GB for the build.

The cluster is deleted after the run unless ``--data-dir`` keeps it (``DIR/<size>-seed<seed>``): a later run with
the same size and seed starts that cluster, applies any new migrations and times the queries without loading
again (at 1M the load takes about 17 minutes). ``--skip-local`` leaves out the local FAISS and BM25 rows.

``--real-vectors DATA_DIR`` measures HNSW recall on a real corpus: the chunk vectors are the MiniLM vectors every
knowledge base of a sift data directory was indexed with (e.g. ``bench/out/ranker/data``: the train packages and
the dev projects), at most each size of them, and the queries are train questions embedded as sift embeds a
query (through the query adapter). Chunk texts stay synthetic, so only the vector rows speak for that corpus.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DIM, K, DEPTH = 384, 10, 100
CHUNKS_PER_FILE = 10


def vocabulary(rng: np.random.Generator, n_words: int = 40_000) -> list[str]:
    """Words and identifiers: lowercase words, snake_case and CamelCase compounds of them."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    base = ["".join(rng.choice(letters, size=int(rng.integers(3, 9)))) for _ in range(n_words // 2)]
    out = list(base)
    for _ in range(n_words - len(base)):
        a, b = rng.choice(len(base), 2)
        out.append(f"{base[a]}_{base[b]}" if rng.random() < 0.5 else base[a].capitalize() + base[b].capitalize())
    return out


def texts(n: int, words: list[str], rng: np.random.Generator) -> list[str]:
    """``n`` chunk texts of ~40 words (Zipf-distributed word choice, as real corpora have)."""
    ranks = np.minimum(rng.zipf(1.15, size=n * 40), len(words)) - 1
    arr = np.array(words, dtype=object)[ranks].reshape(n, 40)
    return [" ".join(row) for row in arr]


def percentiles(values: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    ms = sorted(v * 1000 for v in values)
    return statistics.median(ms), float(np.percentile(ms, 95))


def batches(n: int, rng: np.random.Generator, words: list[str]) -> Any:
    """(first chunk id, texts) in batches of 20,000; the same size and seed give the same texts."""
    batch = 20_000
    for start in range(0, n, batch):
        yield start + 1, texts(min(batch, n - start), words, rng)


def chunk_path(cid: int) -> str:
    """The file path of chunk ``cid`` (``CHUNKS_PER_FILE`` chunks per file)."""
    fid = (cid - 1) // CHUNKS_PER_FILE + 1
    return f"src/pkg{fid % 97}/mod{fid}.py"


def chunk_tokens(cid: int, body: str) -> list[str]:
    """The BM25 tokens of a chunk, as ingestion makes them: path, name, then the text."""
    from sift.tokenize import tokenize

    return tokenize(f"{chunk_path(cid)} | {body.split(' ', 1)[0]}\n{body}")


def load(engine: Any, n: int, rng: np.random.Generator, words: list[str], vectors: np.ndarray) -> tuple[int, list]:
    """Write a knowledge base of ``n`` chunks as generation 1; returns (kb id, token lists)."""
    from sqlalchemy import text

    from sift.db.search_schema import vector_literal
    from sift.ingest.pg_index import _copy, _write_stats, _write_terms
    from sift.tokenize import tokenize

    with engine.begin() as conn:
        kb = conn.execute(text("INSERT INTO knowledge_bases (name, tenant, root_path, public, current_generation, "
                               "created_at, updated_at) VALUES ('synthetic', 'default', '/synthetic', false, 0, "
                               "now(), now()) RETURNING id")).scalar_one()
        conn.execute(text("INSERT INTO generations (kb_id, number, status, created_at) "
                          "VALUES (:kb, 1, 'building', now())"), {"kb": kb})
    tokens_all: list[list[str]] = []
    for first, body in batches(n, rng, words):
        files, chunks, docs, postings, names, vecs = [], [], [], [], [], []
        for i, chunk_text in enumerate(body):
            cid = first + i
            fid = (cid - 1) // CHUNKS_PER_FILE + 1
            path = chunk_path(cid)
            if (cid - 1) % CHUNKS_PER_FILE == 0:
                files.append((fid, kb, 1, path, "python", "code", f"{fid:064x}", 100, 100, "synthetic", ""))
            name = chunk_text.split(" ", 1)[0]
            toks = chunk_tokens(cid, chunk_text)
            tokens_all.append(toks)
            chunks.append((cid, kb, "default", fid, None, "function", "code", path, "python", name, name,
                           1 + 10 * ((cid - 1) % CHUNKS_PER_FILE), 10 + 10 * ((cid - 1) % CHUNKS_PER_FILE),
                           False, f"{cid:064x}", chunk_text))
            docs.append((cid, fid, kb, len(toks)))
            postings.extend((kb, t, cid, fid, tf, len(toks)) for t, tf in Counter(toks).items())
            names.extend((kb, t, cid, fid) for t in set(tokenize(name)))
            vecs.append((cid, "synthetic", kb, fid, "function", DIM, vector_literal(vectors[cid - 1])))
        with engine.begin() as conn, conn.connection.driver_connection.cursor() as cur:
            _copy(cur, "files (id, kb_id, gen_from, path, language, source_type, content_hash, size_bytes, "
                       "line_count, parser, content)", files)
            _copy(cur, "chunks (id, kb_id, tenant, file_id, node_id, kind, source_type, path, language, name, symbol, "
                       "start_line, end_line, public, content_hash, text)", chunks)
            _copy(cur, "search_docs (chunk_id, file_id, kb_id, doc_len)", docs)
            _copy(cur, "search_postings (kb_id, term, chunk_id, file_id, tf, doc_len)", postings)
            _copy(cur, "search_names (kb_id, term, chunk_id, file_id)", names)
            _copy(cur, "search_vectors (chunk_id, model_id, kb_id, file_id, kind, dim, embedding)", vecs)
        print(f"  loaded {first + len(body) - 1}/{n} chunks", flush=True)
    with engine.begin() as conn:
        _write_terms(conn, kb, 1, None)
        _write_stats(conn, kb, 1, "synthetic", DIM, "hnsw")
        conn.execute(text("UPDATE generations SET status = 'published' WHERE kb_id = :kb"), {"kb": kb})
        conn.execute(text("UPDATE knowledge_bases SET current_generation = 1 WHERE id = :kb"), {"kb": kb})
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("files", "chunks", "search_docs", "search_postings", "search_names", "search_vectors",
                      "search_terms"):
            conn.execute(text(f"VACUUM ANALYZE {table}"))
    return kb, tokens_all


def real_corpus(data_dir: Path, n: int, n_queries: int) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Up to ``n`` chunk vectors of every knowledge base a sift data directory serves (as indexed, every chunk
    kind), and ``n_queries`` train questions (``tests/.cache/train``, every k-th) embedded as sift embeds a query."""
    import sqlite3

    from sift.catalog import generation_dir
    from sift.config import Settings
    from sift.embed import LocalEmbedder
    from sift.index.generation import load_indexes
    from tests.sources import CACHE

    db = sqlite3.connect(data_dir / "sift.db")
    parts = []
    # Not the train packages' inverse-cloze copies (lab/train/cloze.py): near-twins of their packages' vectors.
    for kb_id, gen in db.execute("SELECT id, current_generation FROM knowledge_bases WHERE name NOT LIKE 'cloze-%' "
                                 "ORDER BY id"):
        loaded = load_indexes(generation_dir(Settings(data_dir=data_dir).resolved_index_dir(), kb_id, gen))
        parts += [index.vectors_for(index.ids) for _, index in sorted(loaded.vectors.items()) if len(index)]
    vectors = np.ascontiguousarray(np.vstack(parts)[:n], dtype=np.float32)
    questions = [json.loads(line)["query"] for path in sorted((CACHE / "train").glob("*.jsonl"))
                 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = questions[:: max(1, len(questions) // n_queries)][:n_queries]
    return vectors, picked, LocalEmbedder().embed_queries(picked)


class _QueryVectors:
    """An embedder that answers each benchmark query with its precomputed vector."""

    model_id, dim = "synthetic", DIM

    def __init__(self, by_query: dict[str, np.ndarray]) -> None:
        self.by_query = by_query

    def embed_query(self, query: str) -> np.ndarray:
        return self.by_query[query]


def timed(fn: Any, items: list[Any]) -> tuple[list[float], list[Any]]:
    """Per-item latency and result."""
    lat, out = [], []
    for item in items:
        t0 = time.perf_counter()
        out.append(fn(item))
        lat.append(time.perf_counter() - t0)
    return lat, out


def run_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Everything for one corpus size; prints a table and returns the rows."""
    import faiss
    from sqlalchemy import text

    import tests.pg as pg
    from bench.vector_scale import clustered
    from sift.config import Settings
    from sift.db import open_database, upgrade
    from sift.db.search_schema import hnsw_index_ddl
    from sift.index.bm25 import BM25Index
    from sift.index.vector import VectorIndex
    from sift.models import Filters
    from sift.retrievers.pg_search import PgBM25Channel, PgSearchCache, PgSmartChannel, PgVectorChannel
    from sift.retrievers.search import Searcher
    from sift.tokenize import tokenize

    rng = np.random.default_rng(args.seed)
    centres = rng.standard_normal((2000, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = clustered(n, rng, centres)
    qvecs = clustered(args.queries, rng, centres)
    words = vocabulary(rng)
    mid = words[50:5000]  # neither the commonest words nor unseen ones
    queries = [" ".join(rng.choice(mid, size=int(rng.integers(2, 6)))) for _ in range(args.queries)]
    if args.real_vectors:  # MiniLM vectors of real chunks, asked by real questions (their texts stay synthetic)
        vectors, queries, qvecs = real_corpus(args.real_vectors, n, args.queries)
        n = len(vectors)
    pg.SERVER_OPTIONS.update(shared_buffers="2GB" if n >= 500_000 else "1GB", maintenance_work_mem="2GB",
                             max_parallel_maintenance_workers="1", work_mem="64MB")
    keep = args.data_dir / f"{n}-seed{args.seed}" if args.data_dir else None
    meta_path = keep / "bench.json" if keep else None
    meta = json.loads(meta_path.read_text()) if meta_path and meta_path.exists() else None
    if keep and meta is None and (keep / "data").exists():
        raise SystemExit(f"{keep} holds a cluster whose load did not finish: remove it and run again")
    server = pg.PgServer(pg.pgvector_bin_dir(), root=keep).start()
    row: dict[str, Any] = {"chunks": n}
    try:
        if meta is None:
            url = server.create_database("bench", migrated=True)
            engine = open_database(Settings(database_url=url))
            t0 = time.perf_counter()
            kb, tokens = load(engine, n, rng, words, vectors)
            row["load_s"] = round(time.perf_counter() - t0, 1)
            t0 = time.perf_counter()
            with engine.begin() as conn:
                conn.execute(text(hnsw_index_ddl(kb, DIM)))
            row["hnsw_build_s"] = round(time.perf_counter() - t0, 1)
            if meta_path:
                meta_path.write_text(json.dumps({"chunks": n, "seed": args.seed, "kb": kb, "load_s": row["load_s"],
                                                 "hnsw_build_s": row["hnsw_build_s"]}))
        else:  # the kept cluster of this size and seed: bring its schema to the head, skip the load
            url = server.url("bench")
            upgrade(url)
            engine = open_database(Settings(database_url=url))
            kb = meta["kb"]
            row.update(reused=str(keep), load_s=meta["load_s"], hnsw_build_s=meta["hnsw_build_s"])
            # The texts are drawn again (same seed, same order) for the local BM25; the database is not touched.
            tokens = [] if args.skip_local else [chunk_tokens(first + i, body) for first, batch in
                                                 batches(n, rng, words) for i, body in enumerate(batch)]
        with engine.connect() as conn:
            row["db_mb"] = round(conn.execute(text("SELECT pg_database_size(current_database())")).scalar() / 2**20)
        print(f"  rows {row['load_s']} s, HNSW build {row['hnsw_build_s']} s, database {row['db_mb']} MB"
              + (f" (kept in {keep})" if keep else ""), flush=True)
        cache = PgSearchCache(engine)
        f = Filters(kb="synthetic")
        embedder = _QueryVectors(dict(zip(queries, qvecs, strict=True)))
        exact = PgVectorChannel(cache, embedder, exact=True)
        approx = PgVectorChannel(cache, embedder, exact=False)
        bm25 = PgBM25Channel(cache)
        smart = PgSmartChannel(cache)
        searcher = Searcher(engine, cache, embedder)
        # Every query once through each channel first, so a kept cluster just started (cold shared buffers) and one
        # just loaded time the same steady state: each query's postings and graph pages read at least once.
        for q in queries:
            approx.search(q, f, DEPTH), bm25.search(q, f, DEPTH), smart.search(q, f, DEPTH)
        lat = {}
        lat["pg vector exact"], want = timed(lambda q: exact.search(q, f, K), queries[: args.exact_queries])
        lat["pg vector hnsw"], got = timed(lambda q: approx.search(q, f, K), queries)
        recall = [len({h.chunk_id for h in w} & {h.chunk_id for h in g}) / K for w, g in zip(want, got, strict=False)]
        row["hnsw_recall@10"] = round(float(np.mean(recall)), 4)
        lat["pg vector hnsw k=100"], _ = timed(lambda q: approx.search(q, f, DEPTH), queries)
        lat["pg bm25 k=100"], _ = timed(lambda q: bm25.search(q, f, DEPTH), queries)
        lat["pg smart k=100"], _ = timed(lambda q: smart.search(q, f, DEPTH), queries)  # the depth Searcher asks
        lat["pg fused bm25+vector"], _ = timed(lambda q: searcher.search(q, f, K, channels=("bm25", "vector")), queries)
        lat["pg fused all three"], _ = timed(lambda q: searcher.search(q, f, K), queries)
        searcher.close()
        # Local indexes over the same vectors and tokens, in this process.
        if not args.skip_local:
            ids = np.arange(1, n + 1)
            flat = VectorIndex.build(ids, vectors, "flat")
            lat["faiss flat"], _ = timed(lambda v: flat.search(v, K), list(qvecs))
            flat = None  # free its memory before the HNSW build
            if n <= args.faiss_hnsw_max:
                t0 = time.perf_counter()
                hnsw = VectorIndex.build(ids, vectors, "hnsw")
                row["faiss_hnsw_build_s"] = round(time.perf_counter() - t0, 1)
                lat["faiss hnsw"], _ = timed(lambda v: hnsw.search(v, K), list(qvecs))
            local_bm25 = BM25Index.build(ids, tokens)
            lat["local bm25 k=100"], _ = timed(lambda q: local_bm25.search(tokenize(q), DEPTH), queries)
            row["faiss_threads"] = faiss.omp_get_max_threads()
        engine.dispose()
    finally:
        server.stop()
    row["latency_ms"] = {name: [round(x, 2) for x in percentiles(v)] for name, v in lat.items()}
    print(f"\n{n:,} chunks  (HNSW recall@10 vs exact {row['hnsw_recall@10']})")
    for name, (p50, p95) in row["latency_ms"].items():
        print(f"  {name:<24} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms")
    return row


def main() -> None:
    """Parse arguments and run every size."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--exact-queries", type=int, default=30, help="exact scans (slow at 1M) for recall and latency")
    ap.add_argument("--faiss-hnsw-max", type=int, default=200_000)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--seed", type=int, default=7, help="seed of the corpus, vectors and queries")
    ap.add_argument("--data-dir", type=Path, help="keep each size's loaded cluster in DIR/<size>-seed<seed>; a "
                    "later run with the same size and seed reuses it and only times queries")
    ap.add_argument("--skip-local", action="store_true", help="time PostgreSQL only (no local FAISS and BM25)")
    ap.add_argument("--real-vectors", type=Path, metavar="DATA_DIR",
                    help="use the MiniLM chunk vectors of a sift data directory (at most each size of them) and "
                         "embedded train questions instead of synthetic vectors, for HNSW recall on a real corpus")
    args = ap.parse_args()
    rows = [run_size(n, args) for n in args.sizes]
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
