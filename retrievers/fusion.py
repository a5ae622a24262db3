"""Fusion of channel rankings: RRF, a composite score, dedup by id and overlapping lines, grouping by file.

Pure functions, no I/O; ties break deterministically by score, then path, then start line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sift.models import CODE_KINDS, Hit
from sift.retrievers.paths import is_changelog_path, is_stub_path, is_test_path

_TEST_WORDS = frozenset({"test", "tested", "testing", "spec", "fixture", "conftest", "unittest", "pytest", "assert"})
_CHANGE_WORDS = frozenset({"change", "changed", "changelog", "version", "release", "released", "history",
                           "deprecate", "deprecated", "deprecation", "upgrade", "upgrading", "migrate", "migration",
                           "new", "added", "removed", "since"})


def rrf(rankings: Sequence[Sequence[str | int]], k: int = 60) -> dict[str | int, float]:
    """Reciprocal Rank Fusion: ``score(d) = Σ_r 1 / (k + rank_r(d))``, ranks starting at 1.

    Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank learning
    methods", SIGIR 2009. A key repeated within one ranking counts at its best rank only.
    """
    scores: dict[str | int, float] = {}
    for ranking in rankings:
        seen: set[str | int] = set()
        for rank, key in enumerate(ranking, 1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


@dataclass(frozen=True, slots=True)
class CompositeWeights:
    """Multipliers applied to the RRF score."""

    code_entity: float = 1.25  # a function/class chunk over plain text
    file_level: float = 0.85  # a whole-file chunk is the least precise evidence
    name_match: float = 1.3  # a query term names the chunk (symbol or heading)
    definition: float = 1.6  # the chunk *defines* an identifier the query names
    test_code: float = 0.5  # tests answer "how is X tested", not "how does X work"
    changelog: float = 0.6  # release and upgrade notes mention everything, explain little
    stub: float = 0.8  # a type stub repeats a definition that lives elsewhere


def path_prior(path: str, query_words: set[str], weights: CompositeWeights = CompositeWeights()) -> float:
    """Multiplier for where a hit lives: tests, changelogs and stubs rank lower unless the query asks for them."""
    prior = 1.0
    if is_test_path(path) and not (query_words & _TEST_WORDS):
        prior *= weights.test_code
    if is_changelog_path(path) and not (query_words & _CHANGE_WORDS):
        prior *= weights.changelog
    if is_stub_path(path):
        prior *= weights.stub
    return prior


@lru_cache(maxsize=65536)
def _name_parts(symbol: str) -> tuple[str, frozenset[str]]:
    """A chunk symbol's last component (lower case) and its tokens."""
    from sift.tokenize import tokenize

    return symbol.rsplit(".", 1)[-1].rsplit(" > ", 1)[-1].lower(), frozenset(tokenize(symbol))


def composite_score(
    hit: Hit, rrf_score: float, query_tokens: set[str], identifiers: set[str],
    weights: CompositeWeights = CompositeWeights(),
) -> float:
    """RRF score adjusted for evidence quality: code entities, name matches and definitions rank higher."""
    score = rrf_score * path_prior(hit.path, query_tokens, weights)
    if hit.kind in CODE_KINDS or hit.kind == "function":
        score *= weights.code_entity
    elif hit.kind == "file":
        score *= weights.file_level
    last, tokens = _name_parts(hit.symbol)
    if identifiers and last in identifiers:
        score *= weights.definition
    elif query_tokens and not tokens.isdisjoint(query_tokens):
        score *= weights.name_match
    return score


def _key(hit: Hit) -> str | int:
    if hit.chunk_id is not None:
        return hit.chunk_id
    return f"{hit.path}:{hit.start_line}-{hit.end_line}"


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


def _replace(obj: object, **update: object) -> object:
    if isinstance(obj, _Candidate):  # the constructor, not dataclasses.replace: dedup calls this per overlap
        return _Candidate(update.get("score", obj.score), obj.path, obj.start_line, obj.end_line,  # type: ignore[arg-type]
                          obj.kind, update.get("channels", obj.channels), obj.hit)  # type: ignore[arg-type]
    return obj.model_copy(update=update)  # type: ignore[attr-defined]


def fuse(
    rankings: Sequence[Sequence[Hit]],
    query_tokens: Iterable[str] = (),
    identifiers: Iterable[str] = (),
    k: int = 60,
    weights: CompositeWeights = CompositeWeights(),
    limit: int | None = None,
) -> list[Hit]:
    """RRF across rankings, composite score, dedup; returns hits ranked 1..n with their contributing channels.

    ``limit`` caps how many Hits are built (the ranking and dedup still see every candidate).
    """
    qt, ids = set(query_tokens), {i.lower() for i in identifiers}
    keys = [[_key(h) for h in ranking] for ranking in rankings]
    fused = rrf(keys, k)
    # The first Hit seen per key, and the union of the channels that found it.
    best: dict[str | int, Hit] = {}
    channels: dict[str | int, set[str]] = {}
    for ranking, ranking_keys in zip(rankings, keys, strict=True):
        for h, key in zip(ranking, ranking_keys, strict=True):
            chans = h.channels or (h.channel,)
            if key in best:
                channels[key].update(chans)
            else:
                best[key] = h
                channels[key] = set(chans)
    candidates = [
        _Candidate(composite_score(h, fused[key], qt, ids, weights), h.path, h.start_line, h.end_line, h.kind,
                   tuple(sorted(channels[key])), h)
        for key, h in best.items()
    ]
    kept = sort_hits(dedup_overlaps(sort_hits(candidates)))  # type: ignore[arg-type]
    return [
        c.hit.model_copy(update={"score": c.score, "channel": "fused", "channels": c.channels, "rank": rank,
                                 "start_line": c.start_line, "end_line": c.end_line})
        for rank, c in enumerate(kept[:limit] if limit is not None else kept, 1)  # type: ignore[attr-defined]
    ]


def sort_hits(hits: Iterable[Hit]) -> list[Hit]:
    """Score descending, then path, then start line: the deterministic order everywhere."""
    return sorted(hits, key=lambda h: (-h.score, h.path, h.start_line, h.end_line))


def overlaps(a: Hit, b: Hit) -> bool:
    """Same file and intersecting line ranges."""
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def dedup_overlaps(hits: Sequence[Hit], tighter_ratio: float = 0.7) -> list[Hit]:
    """Drop hits overlapping a better one in the same file, keeping the tighter, better-scored span.

    Input must be sorted best first. A lower-scored hit strictly inside a kept one (a method inside its class,
    a function inside a whole-file chunk) replaces it when it scores at least ``tighter_ratio`` of it: the
    narrower lines are the better citation; inside a whole-file chunk it always does. The kept entry keeps the
    higher score and the union of channels.
    """
    kept: list[Hit] = []
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
                kept[i] = _replace(h, score=k.score, channels=chans)
            else:
                kept[i] = _replace(k, channels=chans)
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
            "snippet": (snippets or {}).get(_key(h), h.snippet),
        })
    return files
