"""Fused-search latency under the hand ranker weights and the active (fitted) ones, in one run.

Both weight sets score the same features, so they cost the same by construction; this measures it. The queries
run warm on the synthetic 2,000-file repository that ``bench/retrieval.py --latency`` ingests into
``bench/out/retrieval`` (run that once first), in rounds that alternate which weights go first, so machine load
falls on both alike.

    python bench/ranker_latency.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

QUERIES = ("where is the request validated", "how are handlers registered", "configuration of the guide",
           "Handler.validate", "helper that checks a request", "installation steps", "parse the config file",
           "what happens when a request fails", "render the page template", "retry a failed job")


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> int:
    """Time every query under both weight sets, alternating their order per round; print p50/p95 and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()

    import sift.retrievers.fusion as fusion
    from sift.config import Settings
    from sift.db import open_database
    from sift.embed import LocalEmbedder
    from sift.models import Filters
    from sift.retrievers.base import IndexCache
    from sift.retrievers.ranker import HAND_WEIGHTS, RankerWeights, active_weights
    from sift.retrievers.search import Searcher

    settings = Settings(data_dir=HERE / "out" / "retrieval" / "data")
    engine = open_database(settings)
    searcher = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), LocalEmbedder())
    filters = Filters(kb="synthetic")
    weights = {"hand": RankerWeights(HAND_WEIGHTS), "active": active_weights()}
    for q in QUERIES:  # warm: indexes loaded, every query's embedding cached alike
        searcher.search(q, filters, k=10)
    times: dict[str, list[float]] = {name: [] for name in weights}
    for rnd in range(args.rounds):
        order = list(weights) if rnd % 2 == 0 else list(reversed(weights))
        for name in order:
            fusion.active_weights = lambda w=weights[name]: w  # what fuse() falls back to
            for q in QUERIES:
                t0 = time.perf_counter()
                searcher.search(q, filters, k=10)
                times[name].append((time.perf_counter() - t0) * 1000)
    searcher.close()
    for name, values in times.items():
        print(f"{name:7s} ({weights[name].source}): {len(values)} searches, p50 {_percentile(values, 50):.1f} ms, "
              f"p95 {_percentile(values, 95):.1f} ms")
    ratio = _percentile(times["active"], 95) / _percentile(times["hand"], 95)
    print(f"p95 active / hand = {ratio:.2f} (target <= 1.2); load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
