"""Vector index scale: flat vs HNSW vs IVF on synthetic 384-d embeddings (all-MiniLM-L6-v2's width).

    python bench/vector_scale.py [--sizes 100000 1000000] [--queries 200] [--hnsw-max 200000] [--json OUT]

For each size: build time, resident memory added by the index, single-query latency (p50/p95, k=10, one thread
per query as the vector channel issues them) and recall@10 of the approximate indexes against exact flat search.
The vectors are clustered (2,000 Gaussian centres on the unit sphere plus noise, normalised), which is closer to
real embeddings than uniform noise; queries are fresh draws from the same mixture. HNSW uses the parameters of
``sift.index.vector`` (M=32, efConstruction=80, efSearch=128); its build is the slow part, so sizes above
``--hnsw-max`` are skipped (say so in the output) unless raised.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sift.index.vector import HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH, HNSW_M  # noqa: E402

DIM = 384
K = 10


def clustered(n: int, rng: np.random.Generator, centres: np.ndarray, noise: float = 0.6) -> np.ndarray:
    """``n`` unit vectors drawn around random centres, built in slices to bound temporary memory."""
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        pick = centres[rng.integers(0, len(centres), m)]
        block = pick + rng.standard_normal((m, DIM), dtype=np.float32) * (noise / np.sqrt(DIM))
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + m] = block
    return out


def latency(index: faiss.Index, queries: np.ndarray) -> tuple[np.ndarray, dict[str, float]]:
    """Top-K ids per query and p50/p95/mean milliseconds of one-query searches."""
    ids = np.empty((len(queries), K), dtype=np.int64)
    times = []
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        _, found = index.search(q[None, :], K)
        times.append((time.perf_counter() - t0) * 1000)
        ids[i] = found[0]
    t = np.array(times)
    return ids, {"p50_ms": round(float(np.percentile(t, 50)), 3), "p95_ms": round(float(np.percentile(t, 95)), 3),
                 "mean_ms": round(float(t.mean()), 3)}


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean fraction of the exact top-K that the approximate search returned."""
    return round(float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth, strict=True)])), 4)


def build(kind: str, data: np.ndarray, nprobe: int = 16) -> tuple[faiss.Index, dict[str, Any]]:
    """Build one index over ``data``; returns it with build seconds and its size (serialised = in memory)."""
    t0 = time.perf_counter()
    if kind == "flat":
        index = faiss.IndexFlatIP(DIM)
        index.add(data)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(DIM, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.add(data)
        index.hnsw.efSearch = HNSW_EF_SEARCH
    elif kind.startswith("ivf"):
        nlist = int(4 * np.sqrt(len(data)))
        quantizer = faiss.IndexFlatIP(DIM)
        index = faiss.IndexIVFFlat(quantizer, DIM, nlist, faiss.METRIC_INNER_PRODUCT)
        sample = data[np.random.default_rng(1).choice(len(data), min(len(data), 40 * nlist), replace=False)]
        index.train(sample)
        index.add(data)
        index.nprobe = nprobe
    else:
        raise ValueError(kind)
    seconds = time.perf_counter() - t0
    size = faiss.serialize_index(index).nbytes
    return index, {"build_s": round(seconds, 2), "memory_mb": round(size / 2**20, 1)}


def run(sizes: list[int], n_queries: int, hnsw_max: int, ivf_nprobes: list[int],
        noise: float = 0.6) -> list[dict[str, Any]]:
    """Measure every index kind at every size; returns one row per (size, kind)."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((2000, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rows: list[dict[str, Any]] = []
    for n in sizes:
        data = clustered(n, rng, centres, noise)
        queries = clustered(n_queries, rng, centres, noise)
        flat, info = build("flat", data)
        truth, lat = latency(flat, queries)
        rows.append({"n": n, "kind": "flat", **info, **lat, "recall@10": 1.0})
        print(json.dumps(rows[-1]), flush=True)
        del flat
        for nprobe in ivf_nprobes:
            ivf, info = build("ivf", data, nprobe)
            found, lat = latency(ivf, queries)
            rows.append({"n": n, "kind": f"ivf(nlist={ivf.nlist},nprobe={nprobe})", **info, **lat,
                         "recall@10": recall(found, truth)})
            print(json.dumps(rows[-1]), flush=True)
            del ivf
        if n <= hnsw_max:
            hnsw, info = build("hnsw", data)
            found, lat = latency(hnsw, queries)
            rows.append({"n": n, "kind": f"hnsw(M={HNSW_M},ef={HNSW_EF_SEARCH})", **info, **lat,
                         "recall@10": recall(found, truth)})
            del hnsw
        else:
            rows.append({"n": n, "kind": "hnsw", "skipped": f"build above --hnsw-max {hnsw_max}"})
        print(json.dumps(rows[-1]), flush=True)
        del data
    return rows


def main() -> None:
    """Parse arguments, run, print (and optionally save) the table."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--hnsw-max", type=int, default=200_000, help="skip HNSW builds above this many vectors")
    p.add_argument("--nprobe", type=int, nargs="+", default=[8, 32], help="IVF lists probed per query")
    p.add_argument("--noise", type=float, default=0.6,
                   help="spread around the centres (0.6: tight topical clusters; 3+: close to uniform noise)")
    p.add_argument("--threads", type=int, default=None, help="FAISS threads (default: all cores)")
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args()
    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    t0 = time.perf_counter()
    rows = run(args.sizes, args.queries, args.hnsw_max, args.nprobe, args.noise)
    print(f"\n{'n':>9} {'kind':<28} {'build s':>8} {'mem MB':>8} {'p50 ms':>8} {'p95 ms':>8} {'recall@10':>9}")
    for r in rows:
        if "skipped" in r:
            print(f"{r['n']:>9} {r['kind']:<28} skipped: {r['skipped']}")
            continue
        print(f"{r['n']:>9} {r['kind']:<28} {r['build_s']:>8} {r['memory_mb']:>8} {r['p50_ms']:>8} "
              f"{r['p95_ms']:>8} {r['recall@10']:>9}")
    print(f"total {time.perf_counter() - t0:.0f}s, noise {args.noise}, {os.cpu_count()} cores, "
          f"faiss {faiss.__version__}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
