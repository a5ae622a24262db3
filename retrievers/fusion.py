"""Fusion of channel rankings: the ranker's score, dedup by id and overlapping lines, later parts of one place
moved down (for a list of places), grouping by file.

Pure functions, no I/O; ties break deterministically by score, then path, then start line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sift.models import Hit
from sift.retrievers.ranker import RankerWeights, active_weights, candidate_key, features, pool
from sift.retrievers.ranker import rrf as rrf  # fusion's RRF is the ranker's (re-exported for callers)
from sift.retrievers.ranker import scores as ranker_scores


@dataclass(slots=True)
class _Candidate:
    """A fused candidate before it becomes a Hit (cheap to copy while scoring and deduplicating)."""

    score: float
    path: str
    start_line: int
    end_line: int
    kind: str
    channels: tuple[str, ...]
    hit: Hit


# A ranked span: the public Hit, or the cheaper candidate fuse() sorts and deduplicates before building Hits.
S = TypeVar("S", Hit, _Candidate)


def _replace(obj: S, channels: tuple[str, ...], score: float | None = None) -> S:
    new_score = obj.score if score is None else score
    if isinstance(obj, Hit):
        return obj.model_copy(update={"score": new_score, "channels": channels})
    # the constructor, not dataclasses.replace: dedup calls this per overlap
    return _Candidate(new_score, obj.path, obj.start_line, obj.end_line, obj.kind, channels, obj.hit)


def fuse(
    rankings: Sequence[Sequence[Hit]],
    query_tokens: Iterable[str] = (),
    identifiers: Iterable[str] = (),
    weights: RankerWeights | None = None,
    limit: int | None = None,
    names: Sequence[str] | None = None,
    forms: frozenset[str] = frozenset(),
    spread_parts: bool = False,
) -> list[Hit]:
    """Pool the channels' rankings, score every candidate with the ranker, dedup; hits ranked 1..n.

    ``weights`` default to the active ones (``ranker.active_weights``); ``names`` are the channels of
    ``rankings`` (default: each ranking's own channel); ``forms`` are the question's (``question.QuestionShape.forms``).
    ``limit`` caps how many Hits are built (the ranking and dedup still see every candidate). ``spread_parts``
    moves later parts of a place already listed down (``later_parts_down``), for a list of distinct places.
    """
    p = pool(rankings, names)
    if not p.keys:
        return []
    qt, ids = set(query_tokens), {i.lower() for i in identifiers}
    scored = ranker_scores(features(p, qt, ids, forms), weights or active_weights())
    candidates = [
        _Candidate(float(score), h.path, h.start_line, h.end_line, h.kind, tuple(sorted(p.channels[key])), h)
        for key, h, score in zip(p.keys, p.hits, scored, strict=True)
    ]
    kept = sort_hits(dedup_overlaps(sort_hits(candidates)))
    if spread_parts:
        kept = later_parts_down(kept)
    return [
        c.hit.model_copy(update={"score": c.score, "channel": "fused", "channels": c.channels, "rank": rank,
                                 "start_line": c.start_line, "end_line": c.end_line})
        for rank, c in enumerate(kept[:limit] if limit is not None else kept, 1)
    ]


# How many places a later part of a definition or section moves down in fused search's list. A long function or
# docs section is several chunks (``ChunkIdentity.part``) that share its words, so they rank side by side and can
# fill the first places with one answer. Chosen on the dev and spent sets (``lab/NOTEBOOK.md``, "Later parts
# of one place"). The graph keeps fusion's order: its writer reads a place's parts together.
LATER_PART_DEPTH = 3


def later_parts_down(hits: Sequence[S], depth: int | None = None) -> list[S]:
    """``hits`` (best first) with each hit of a place already listed (same file and symbol: another part of one
    definition or section, or another chunk of that file's module code) moved ``depth`` places down
    (default ``LATER_PART_DEPTH``).

    A hit scoring at least the one it now follows gets the float just below that one's score, so the scores
    stay in rank order and a later ``sort_hits`` keeps this order. Hits of distinct places keep their order.
    """
    depth = LATER_PART_DEPTH if depth is None else depth
    if depth <= 0 or len(hits) < 2:
        return list(hits)
    seen: set[tuple[str, str]] = set()
    slots: list[tuple[float, int]] = []
    for i, h in enumerate(hits):
        place = (h.path, _symbol(h))
        slots.append((i + depth + 0.5 if place in seen else float(i), i))
        seen.add(place)
    if len(seen) == len(hits):  # every hit a place of its own: nothing moves
        return list(hits)
    out: list[S] = []
    for _, i in sorted(slots):
        h = hits[i]
        if out and h.score >= out[-1].score:
            h = _replace(h, h.channels, score=math.nextafter(out[-1].score, -math.inf))
        out.append(h)
    return out


def _symbol(h: S) -> str:
    return h.symbol if isinstance(h, Hit) else h.hit.symbol


def sort_hits(hits: Iterable[S]) -> list[S]:
    """Score descending, then path, then start line: the deterministic order everywhere."""
    return sorted(hits, key=lambda h: (-h.score, h.path, h.start_line, h.end_line))


def overlaps(a: S, b: S) -> bool:
    """Same file and intersecting line ranges."""
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def dedup_overlaps(hits: Sequence[S], tighter_ratio: float = 0.7) -> list[S]:
    """Drop hits overlapping a better one in the same file, keeping the tighter, better-scored span.

    Input must be sorted best first. A lower-scored hit strictly inside a kept one (a method inside its class,
    a function inside a whole-file chunk) replaces it when it scores at least ``tighter_ratio`` of it: the
    narrower lines are the better citation; inside a whole-file chunk it always does. The kept entry keeps the
    higher score and the union of channels.
    """
    kept: list[S] = []
    by_path: dict[str, list[int]] = {}  # positions in ``kept`` per file: overlaps only happen within a file
    for h in hits:
        merged = False
        for i in by_path.get(h.path, ()):
            k = kept[i]
            if not overlaps(h, k):
                continue
            merged = True
            chans = tuple(sorted(set(k.channels) | set(h.channels)))
            inside = k.start_line <= h.start_line and h.end_line <= k.end_line
            tighter = inside and (h.end_line - h.start_line) < (k.end_line - k.start_line)
            if tighter and (k.kind == "file" or h.score >= tighter_ratio * k.score):
                kept[i] = _replace(h, chans, score=k.score)
            else:
                kept[i] = _replace(k, chans)
            break
        if not merged:
            by_path.setdefault(h.path, []).append(len(kept))
            kept.append(h)
    return kept


def duplicate_rate(hits: Sequence[Hit]) -> float:
    """Fraction of hits that overlap an earlier hit in the same file."""
    if not hits:
        return 0.0
    dups = sum(1 for i, h in enumerate(hits) if any(overlaps(h, p) for p in hits[:i]))
    return dups / len(hits)


def group_by_file(hits: Sequence[Hit], snippets: dict[str | int, str] | None = None) -> dict[str, list[dict]]:
    """The ``docql_result``-style grouping: path → entries in rank order (files ordered by their best hit)."""
    files: dict[str, list[dict]] = {}
    for h in hits:
        files.setdefault(h.path, []).append({
            "type": h.kind, "name": h.name, "start_line": h.start_line, "end_line": h.end_line,
            "score": round(h.score, 6), "rank": h.rank, "channels": list(h.channels or (h.channel,)),
            "snippet": (snippets or {}).get(candidate_key(h), h.snippet),
            "copies": [c.model_dump() for c in h.copies],
        })
    return files
