"""Span metrics of fused search's order and of its first candidates reordered by the cross-encoder.

Both orders go through fusion's own deduplication (``sift.retrievers.fusion``), as the product's do, and are
scored like ``lab/train/ranker_fit.scored_metrics``: span@1, span@3 and span MRR over the first ten.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _flags(order: list, gold: list) -> list[bool]:
    return [any(h.path == p and h.start_line <= e and s <= h.end_line for p, s, e in gold) for h in order]


def fused_top(candidates: list[dict], limit: int) -> list:
    """The first ``limit`` of fused search's deduplicated order, each with its index into ``candidates``."""
    from sift.retrievers.fusion import _Candidate, dedup_overlaps, sort_hits

    cands = [_Candidate(c["fused"], c["path"], c["start"], c["end"], c["kind"], (), i)  # type: ignore[arg-type]
             for i, c in enumerate(candidates)]
    return sort_hits(dedup_overlaps(sort_hits(cands)))[:limit]


def rank_metrics(scored: Sequence[tuple[dict, np.ndarray]], top: int) -> dict[str, float]:
    """Fused against reranked span@1, span@3 and MRR, and how often a gold span is in the first ``top`` at all."""
    sums = dict.fromkeys(("fused@1", "fused@3", "fusedMRR", "rerank@1", "rerank@3", "rerankMRR", "reach"), 0.0)
    for g, ce in scored:
        first = fused_top(g["candidates"], top)
        reranked = sorted(first, key=lambda h: (-float(ce[h.hit]), -h.score, h.path, h.start_line))
        for name, order in (("fused", first[:10]), ("rerank", reranked[:10])):
            flags = _flags(order, g["gold"])
            sums[f"{name}@1"] += any(flags[:1])
            sums[f"{name}@3"] += any(flags[:3])
            sums[f"{name}MRR"] += next((1.0 / r for r, f in enumerate(flags, 1) if f), 0.0)
        sums["reach"] += any(_flags(first, g["gold"]))
    n = max(len(scored), 1)
    return {k: round(v / n, 4) for k, v in sums.items()}
