"""Retrieval speed, for ``bench/retrieval.py``: BM25 against ``rank_bm25.BM25Okapi`` on the same corpus (query
time and top-10 agreement), and warm fused-search latency on a synthetic 2,000-file repository.

Run through ``python bench/retrieval.py --latency`` or ``--bm25-corpus [ROOT]``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "retrieval"


def compare_bm25(index, corpus: list[list[str]], ids: list[int], queries: list[str], label: str) -> None:
    """Time ``index.search`` against ``BM25Okapi.get_scores`` on the same corpus; print the ratio and agreement."""
    from rank_bm25 import BM25Okapi

    from sift.tokenize import tokenize

    ref = BM25Okapi(corpus)
    toks = [tokenize(q) for q in queries]
    t0 = time.perf_counter()
    ours = [index.search(t, 10) for t in toks]
    t_ours = (time.perf_counter() - t0) / len(toks)
    t0 = time.perf_counter()
    theirs = [ref.get_scores(t) for t in toks]
    t_ref = (time.perf_counter() - t0) / len(toks)
    same = 0
    for o, sc in zip(ours, theirs, strict=True):
        order = sorted(np.flatnonzero(sc > 0), key=lambda i: (-sc[i], ids[i]))[:10]
        same += [c for c, _ in o] == [ids[i] for i in order]
    print(f"\nBM25 on {label}: ours {t_ours * 1000:.3f} ms/query, BM25Okapi.get_scores {t_ref * 1000:.3f} ms/query"
          f" = {t_ref / t_ours:.0f}x faster; identical top-10 on {same}/{len(toks)}")


def bm25_speed(searcher, filters, queries: list[str]) -> None:
    """Our BM25 against BM25Okapi.get_scores on a knowledge base's chunks; top-10 agreement."""
    from sqlalchemy import select

    from sift.db.tables import Chunk
    from sift.ingest.chunk import embedding_text
    from sift.tokenize import tokenize

    bm25 = searcher.cache.get(filters.kb).indexes.bm25
    ids = [int(i) for i in bm25.ids]
    with searcher.engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(select(Chunk).where(Chunk.id.in_(ids))).all()}
    corpus = [tokenize(embedding_text(rows[i].kind, rows[i].path, rows[i].name, rows[i].heading_path, rows[i].text))
              for i in ids]
    compare_bm25(bm25, corpus, ids, queries, f"{len(ids)} chunks of kb {filters.kb}")


def run_bm25_corpus(root: Path, queries: list[str]) -> None:
    """BM25 against BM25Okapi on a large real corpus: every chunk of ``root`` (default: CPython's stdlib).

    Walk, parse and chunk in memory exactly as ingestion does (no database, no embeddings), then time the same
    queries on both scorers and check that their top-10 ids agree.
    """
    from sift.index.bm25 import BM25Index
    from sift.ingest.chunk import chunk_tree, embedding_text
    from sift.ingest.parsers import ParserRegistry
    from sift.ingest.walk import walk
    from sift.languages import classify
    from sift.text import split_lines
    from sift.tokenize import tokenize

    registry, corpus, files = ParserRegistry(), [], 0
    for f in walk(root):
        files += 1
        language, source_type = classify(f.path)
        tree, _ = registry.parse(f.path, f.text, language, source_type)
        for c in chunk_tree(tree, split_lines(f.text)):
            corpus.append(tokenize(embedding_text(c.kind, f.path, c.name, c.heading_path, c.text)))
    ids = list(range(1, len(corpus) + 1))
    compare_bm25(BM25Index.build(ids, corpus), corpus, ids, queries,
                  f"{root} ({files} files, {len(corpus)} chunks)")


def run_latency(n_files: int = 2000) -> None:
    """Warm fused-search latency on a synthetic repository of ``n_files`` files (BM25 speed there too)."""
    import importlib.util

    from sift.config import Settings
    from sift.db import open_database
    from sift.embed import LocalEmbedder
    from sift.ingest.pipeline import ingest
    from sift.models import Filters
    from sift.retrievers.base import IndexCache
    from sift.retrievers.search import Searcher

    spec = importlib.util.spec_from_file_location("bench_docql", HERE / "docql.py")
    gen = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    repo = OUT / f"synthetic-{n_files}"
    if not repo.exists():
        gen.generate(repo, n_files)
    embedder = LocalEmbedder()
    settings = Settings(data_dir=OUT / "data")
    t0 = time.perf_counter()
    s = ingest(settings, repo, "synthetic", embedder=embedder)
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\ningest synthetic: {s['files']} files {s['chunks']} chunks {s['status']} ({time.perf_counter() - t0:.0f}s, "
          f"peak RSS so far {rss:.0f} MB)")
    engine = open_database(settings)
    searcher = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), embedder)
    filters = Filters(kb="synthetic")
    queries = [q for q in gen.QUERIES if not q.startswith("$")] or ["validate request", "helper function"]
    queries = [q.split('"')[1] if '"' in q else q for q in queries]
    queries += ["where is the request validated", "how are handlers registered", "configuration of the guide",
                "Handler.validate", "helper that checks a request", "installation steps"]
    searcher.search(queries[0], filters, k=10)
    bundle = searcher.cache.get("synthetic")
    windows = dict(bundle.indexes.windows)
    lat: list[float] = []
    bare: list[float] = []  # the same searches without the windows of long chunks, interleaved query by query
    unfolded: list[float] = []  # and without folding copies of a definition into one hit
    fold = searcher.fold_copies
    for _ in range(3):
        for q in queries:
            for times, view, folds in ((lat, windows, True), (bare, {}, True), (unfolded, windows, False)):
                bundle.indexes.windows = view
                searcher.fold_copies = fold if folds else (lambda hits, _bundle: hits)  # type: ignore[method-assign]
                t0 = time.perf_counter()
                searcher.search(q, filters, k=10)
                times.append(time.perf_counter() - t0)
    bundle.indexes.windows = windows
    searcher.fold_copies = fold  # type: ignore[method-assign]
    n_chunks = len(bundle.chunks)
    n_windows = sum(len(w) for w in windows.values())
    p95, p95_bare = np.percentile(lat, 95) * 1000, np.percentile(bare, 95) * 1000
    print(f"fused search on {n_chunks} chunks and {n_windows} windows: p50 {statistics.median(lat) * 1000:.1f} ms, "
          f"p95 {p95:.1f} ms over {len(lat)} queries (target p95 < 150 ms); without the windows, interleaved: "
          f"p50 {statistics.median(bare) * 1000:.1f} ms, p95 {p95_bare:.1f} ms ({p95 / p95_bare:.2f}x)")
    p95_unfolded = np.percentile(unfolded, 95) * 1000
    print(f"without folding copies, interleaved: p50 {statistics.median(unfolded) * 1000:.1f} ms, "
          f"p95 {p95_unfolded:.1f} ms ({p95 / p95_unfolded:.2f}x)")
    bm25_speed(searcher, filters, queries)
    searcher.close()
