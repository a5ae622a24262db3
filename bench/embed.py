"""Embedding and BM25 throughput on the attrs sdist: the sift pipeline against the bare libraries.

    python bench/embed.py [--limit N] [--mean]

Prints chunks/s of ``LocalEmbedder.embed_documents`` and of bare ``SentenceTransformer.encode`` on the same
texts in the same run (target: pipeline >= 0.8x bare), and the query speed of ``BM25Index.search`` against
``rank_bm25.BM25Okapi.get_scores`` (target >= 50x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rank_bm25 import BM25Okapi  # noqa: E402

from sift.embed import LocalEmbedder  # noqa: E402
from sift.index.bm25 import BM25Index  # noqa: E402
from sift.tokenize import tokenize  # noqa: E402
from tests.conftest import fetch_sdist  # noqa: E402
from tests.integration.test_bm25_parity import QUERIES  # noqa: E402


def chunk_texts(root: Path, lines_per_chunk: int = 40) -> list[str]:
    """Every .py and .md file of ``root`` cut into ~40-line pieces."""
    out: list[str] = []
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.md")]):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for start in range(0, max(len(lines), 1), lines_per_chunk):
            out.append(f"{path.relative_to(root)}\n" + "\n".join(lines[start : start + lines_per_chunk]))
    return out


def bench_embed(texts: list[str], mean: bool) -> None:
    """Pipeline vs bare encode, each timed once after a shared warm-up."""
    embedder = LocalEmbedder()
    model = embedder.model
    embedder.embed_documents(texts[:32])  # warm-up: first calls allocate and tune kernels
    t = time.perf_counter()
    model.encode(texts, batch_size=embedder.batch_size, normalize_embeddings=True, convert_to_numpy=True)
    bare = time.perf_counter() - t
    t = time.perf_counter()
    embedder.embed_documents(texts)
    ours = time.perf_counter() - t
    print(f"embed: {len(texts)} chunks, batch {embedder.batch_size}, max_seq_length {embedder.max_tokens}")
    print(f"  bare SentenceTransformer.encode: {len(texts) / bare:7.1f} chunks/s ({bare:.2f}s)")
    print(f"  LocalEmbedder (head):           {len(texts) / ours:7.1f} chunks/s ({ours:.2f}s)")
    print(f"  ratio pipeline/bare: {bare / ours:.2f}x (target >= 0.8x)")
    if mean:
        t = time.perf_counter()
        embedder.with_long_text("mean").embed_documents(texts)
        m = time.perf_counter() - t
        print(f"  LocalEmbedder (mean):           {len(texts) / m:7.1f} chunks/s ({m:.2f}s)")


def bench_bm25(corpus: list[list[str]], label: str) -> None:
    """Mean query latency of the sparse index vs BM25Okapi.get_scores on the same tokens."""
    queries = [tokenize(q) for q in QUERIES]
    ref = BM25Okapi(corpus)
    index = BM25Index.build(list(range(len(corpus))), corpus)
    t = time.perf_counter()
    for q in queries:
        ref.get_scores(q)
    ref_s = (time.perf_counter() - t) / len(queries)
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        for q in queries:
            index.search(q, 10)
    ours_s = (time.perf_counter() - t) / reps / len(queries)
    print(
        f"bm25 {label}: {len(corpus)} docs, BM25Okapi.get_scores {ref_s * 1e3:.3f} ms/query, "
        f"BM25Index.search top-10 {ours_s * 1e3:.3f} ms/query, speed-up {ref_s / ours_s:.0f}x"
    )


def main() -> int:
    """Run the benchmarks and print the results."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="embed only the first N chunks (0 = all)")
    parser.add_argument("--mean", action="store_true", help="also time long_text='mean'")
    args = parser.parse_args()
    attrs = fetch_sdist("attrs")
    texts = chunk_texts(attrs)
    bench_bm25([tokenize(t) for t in texts], "attrs 40-line chunks")
    both = chunk_texts(attrs, 10) + chunk_texts(fetch_sdist("marshmallow"), 10)
    bench_bm25([tokenize(t) for t in both], "attrs+marshmallow 10-line chunks")
    bench_embed(texts[: args.limit] if args.limit else texts, args.mean)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
