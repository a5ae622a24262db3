"""Per-question evaluation metrics as pure functions over ranked hits, gold files and gold spans.

A hit or a citation is anything with ``path``, ``start_line`` and ``end_line`` (1-based, inclusive). A hit is
relevant to a gold span when it *overlaps* it: same path and intersecting line ranges. Ranked lists are taken
as given (rank 1 first); ``k`` cuts them. A metric that is undefined for a question (no gold data, nothing to
measure) returns ``None`` so that aggregates skip it instead of counting it as zero.

Formulas follow the TREC definitions (Voorhees, "The TREC-8 Question Answering Track Report", 1999, for
reciprocal rank; Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", TOIS 2002, for
nDCG with gain ``rel / log2(rank + 1)``); tests check them against ``ranx``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np


class Span(Protocol):
    """A located line range: what hits, citations and gold spans have in common."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


NOT_FOUND_PATTERNS = re.compile(
    r"not found|could not find|couldn't find|cannot find|can't find|no (?:relevant )?(?:evidence|information|"
    r"match|results?)|does not (?:appear|seem) to|isn't (?:covered|mentioned|supported)|"
    r"is not (?:covered|mentioned|supported|documented)|no mention",
    re.IGNORECASE,
)
"""Phrases with which an answer says the indexed sources do not answer the question."""


def overlaps(a: Span, b: Span) -> bool:
    """True when two spans are in the same file and their line ranges intersect."""
    return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def _top(hits: Sequence[Span], k: int | None) -> Sequence[Span]:
    return hits if k is None else hits[: max(k, 0)]


def file_recall_at_k(hits: Sequence[Span], gold_files: Iterable[str], k: int) -> float | None:
    """Fraction of gold files among the distinct paths of the top-k hits."""
    gold = set(gold_files)
    if not gold:
        return None
    found = {h.path for h in _top(hits, k)} & gold
    return len(found) / len(gold)


def span_recall_at_k(hits: Sequence[Span], gold_spans: Sequence[Span], k: int) -> float | None:
    """Fraction of gold spans overlapped by at least one of the top-k hits."""
    if not gold_spans:
        return None
    top = _top(hits, k)
    found = sum(1 for g in gold_spans if any(overlaps(h, g) for h in top))
    return found / len(gold_spans)


def span_hit_at_k(hits: Sequence[Span], gold_spans: Sequence[Span], k: int) -> float | None:
    """1.0 when some top-k hit overlaps some gold span, else 0.0."""
    if not gold_spans:
        return None
    top = _top(hits, k)
    return 1.0 if any(overlaps(h, g) for h in top for g in gold_spans) else 0.0


def _reciprocal_rank(flags: Iterable[bool]) -> float:
    for rank, relevant in enumerate(flags, start=1):
        if relevant:
            return 1.0 / rank
    return 0.0


def file_mrr(hits: Sequence[Span], gold_files: Iterable[str], k: int | None = None) -> float | None:
    """Reciprocal rank of the first hit whose path is a gold file (0.0 when none is)."""
    gold = set(gold_files)
    if not gold:
        return None
    return _reciprocal_rank(h.path in gold for h in _top(hits, k))


def span_mrr(hits: Sequence[Span], gold_spans: Sequence[Span], k: int | None = None) -> float | None:
    """Reciprocal rank of the first hit that overlaps a gold span (0.0 when none does)."""
    if not gold_spans:
        return None
    return _reciprocal_rank(any(overlaps(h, g) for g in gold_spans) for h in _top(hits, k))


def binary_gains(hits: Sequence[Span], gold_spans: Sequence[Span], gold_files: Iterable[str]) -> list[int]:
    """Gain 1 for a hit that claims a not-yet-claimed gold span (or gold file when no spans are given), else 0.

    A hit claims the first unclaimed gold span it overlaps, so each gold item earns gain once: a second hit on
    the same span is a duplicate, not new relevant evidence.
    """
    gains: list[int] = []
    if gold_spans:
        claimed = [False] * len(gold_spans)
        for h in hits:
            index = next((i for i, g in enumerate(gold_spans) if not claimed[i] and overlaps(h, g)), None)
            if index is not None:
                claimed[index] = True
            gains.append(0 if index is None else 1)
        return gains
    remaining = set(gold_files)
    for h in hits:
        gains.append(1 if h.path in remaining else 0)
        remaining.discard(h.path)
    return gains


def ndcg_at_k(hits: Sequence[Span], gold_spans: Sequence[Span], gold_files: Iterable[str], k: int) -> float | None:
    """nDCG@k with binary gains from ``binary_gains``; the ideal ranking puts every gold item first."""
    gold_files = set(gold_files)
    n_gold = len(gold_spans) if gold_spans else len(gold_files)
    if n_gold == 0:
        return None
    gains = binary_gains(_top(hits, k), gold_spans, gold_files)
    dcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))
    idcg = sum(1 / math.log2(rank + 1) for rank in range(1, min(k, n_gold) + 1))
    return dcg / idcg if idcg else None


def duplicate_rate(hits: Sequence[Span], k: int | None = None) -> float | None:
    """Fraction of the top-k hits that overlap an earlier hit in the same file."""
    top = _top(hits, k)
    if not top:
        return None
    dupes = sum(1 for i, h in enumerate(top) if any(overlaps(h, e) for e in top[:i]))
    return dupes / len(top)


def citation_precision(
    citations: Sequence[Span], gold_spans: Sequence[Span], gold_files: Iterable[str]
) -> float | None:
    """Fraction of citations overlapping a gold span (or, with only gold files, citing a gold file)."""
    gold_files = set(gold_files)
    if not citations or not (gold_spans or gold_files):
        return None
    if gold_spans:
        good = sum(1 for c in citations if any(overlaps(c, g) for g in gold_spans))
    else:
        good = sum(1 for c in citations if c.path in gold_files)
    return good / len(citations)


_MARKER = re.compile(r"\[(\d+)\]")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


_LEADING_MARKERS = re.compile(r"^(?:\[\d+\]\s*)+")
_ITEM_LINE = re.compile(r"^\s*(?:[-*] |\d+[.)]\s)")  # a Markdown list item


def _sentences(prose: str) -> list[str]:
    """Sentences, each with the ``[n]`` markers that follow it: markers after a full stop (``Docstring. [2]``)
    belong to the sentence before."""
    out: list[str] = []
    for piece in (p.strip() for p in _SENTENCE_END.split(prose)):
        lead = _LEADING_MARKERS.match(piece)
        if lead and out:
            out[-1] += " " + lead.group(0).strip()
            piece = piece[lead.end():].strip()
        if piece:
            out.append(piece)
    return out


def answer_own_text(text: str, trusted: set[str] | None) -> str:
    """The parts of an answer that may earn an answer hit: code (fenced blocks and `backticked` spans), sentences
    that no ``[n]`` marker covers (the answer's own words; a marker covers its sentence, the unmarked ones before
    it on its line, the rest of its list item and the unmarked list items after its line), and sentences citing a
    ``trusted`` evidence id. A sentence
    citing only other evidence is a quotation from it (e.g. a docstring of the wrong function): only its code
    counts. ``trusted=None`` counts everything."""
    if trusted is None:
        return text
    parts = [m.group(0) for m in _FENCE.finditer(text)]
    above: set[str] = set()  # what cites the line before, for the list items that follow it
    for line in _FENCE.sub("\n", text).split("\n"):
        said = _sentences(line)
        item = bool(_ITEM_LINE.match(line))
        mine = set(_MARKER.findall(line)) if item else set()
        marks: set[str] = set()
        for i, sentence in enumerate(said):
            # As the checker reads citations (``sift.graph.checker.claims``): a run of sentences quoting one source
            # carries its marker once, after the last of them, so a sentence without markers is covered by the
            # first marked one after it on its line; in a list item, the rest by the item's markers; an item
            # without any, by the line that introduces the list (or the item before it).
            marks = next((m for m in (set(_MARKER.findall(t)) for t in said[i:]) if m), set()) or mine or (
                above if item else set())
            parts.extend([sentence] if not marks or marks & trusted else _CODE_SPAN.findall(sentence))
        above = marks if (marks or not item) else above
    return "\n".join(parts)


def answer_hit(text: str, answer_contains: Sequence[str], citations: Sequence[Span] = (),
               gold_spans: Sequence[Span] = ()) -> float | None:
    """1.0 when every required phrase occurs in the answer (case-insensitive), else 0.0.

    With gold spans and citations that carry an ``evidence_id``, a phrase counts only in ``answer_own_text``,
    where the trusted ids are those of citations overlapping a gold span: a phrase the answer quotes from
    evidence that does not answer the question is not the answer's.
    """
    if not answer_contains:
        return None
    ids = [getattr(c, "evidence_id", None) for c in citations]
    trusted = None
    if gold_spans and citations and all(i is not None for i in ids):
        trusted = {str(i) for c, i in zip(citations, ids, strict=True) if any(overlaps(c, g) for g in gold_spans)}
    folded = answer_own_text(text, trusted).casefold()
    return 1.0 if all(p.casefold() in folded for p in answer_contains) else 0.0


def says_not_found(text: str, grounded: bool) -> bool:
    """True when an answer admits the sources do not answer: ungrounded, or it says so in words."""
    return (not grounded) or bool(NOT_FOUND_PATTERNS.search(text))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100, linear interpolation) of the values, or None when there are none."""
    if not values:
        return None
    return float(np.percentile(np.asarray(values, dtype=float), q))


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values, or None when none is defined."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def paired_difference(a: Sequence[float], b: Sequence[float], confidence: float = 0.95, rounds: int = 10_000,
                      seed: int = 0) -> tuple[float, float, float]:
    """The mean of ``a - b`` over paired per-question values, with its percentile bootstrap interval.

    Questions are resampled with replacement, both systems' values together (a paired bootstrap, Efron &
    Tibshirani 1993, ch. 13; ``scipy.stats.bootstrap`` with ``paired=True``), so the interval is for the
    difference on questions like these from the same projects, not on other projects. Seeded: the same values
    give the same interval. With fewer than two questions, or no variation, the interval is the point.
    """
    if len(a) != len(b):
        raise ValueError(f"paired values differ in length: {len(a)} and {len(b)}")
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = float(np.mean(x - y)) if len(x) else 0.0
    if len(x) < 2 or np.all(x - y == diff):
        return diff, diff, diff
    from scipy.stats import bootstrap  # only the benches ask for intervals

    result = bootstrap((x, y), lambda u, v, axis=-1: np.mean(u - v, axis=axis), paired=True, vectorized=True,
                       n_resamples=rounds, confidence_level=confidence, method="percentile",
                       random_state=np.random.default_rng(seed))
    return diff, float(result.confidence_interval.low), float(result.confidence_interval.high)


def answer_right(hit: float | None, citations: Sequence[Span], gold_spans: Sequence[Span],
                 gold_files: Iterable[str], not_found: bool | None = None) -> float | None:
    """1.0 when an answer is right: an answerable question's required phrases are there (``hit``) and a
    citation overlaps a gold span (or, with only gold files, cites one); a negative question's answer is a
    not-found (``not_found``). None when neither can be judged."""
    if not_found is not None:
        return 1.0 if not_found else 0.0
    if hit is None:
        return None
    precision = citation_precision(citations, gold_spans, gold_files)
    return 1.0 if hit == 1.0 and precision else 0.0


CONFIDENCE_LEVELS = ("high", "medium", "low")


def calibration(rows: Iterable[tuple[str | None, float | None, bool]]) -> dict[str, dict[str, float | int | None]]:
    """Per confidence level, from ``(level, right, answerable)`` rows: how many answers, their share of all,
    the share of the answerable questions at that level, and how often its answers were right."""
    rows = [r for r in rows if r[0] is not None]
    answerable = sum(1 for _, _, a in rows if a)
    out: dict[str, dict[str, float | int | None]] = {}
    for level in CONFIDENCE_LEVELS:
        mine = [r for r in rows if r[0] == level]
        out[level] = {
            "answers": len(mine),
            "share": len(mine) / len(rows) if rows else None,
            "share_answerable": sum(1 for _, _, a in mine if a) / answerable if answerable else None,
            "right": mean(r for _, r, _ in mine),
        }
    return out


def right_at_coverage(rows: Iterable[tuple[float, float | None]], answerable: int,
                      shares: Sequence[float] = (0.1, 0.2, 0.3, 0.4)) -> dict[float, float | None]:
    """How often the best-scored answers are right, if the best ``share`` of the ``answerable`` questions were
    rated ``high``: from ``(score, right)`` rows of answers to answerable questions, each share's top
    ``round(share * answerable)`` rows by score (ties in the order given), right on average. None when there are
    not that many answers. It bounds any one threshold on the score: no cut covering that share does better."""
    ranked = sorted(((s, r) for s, r in rows if r is not None), key=lambda t: -t[0])
    out: dict[float, float | None] = {}
    for share in shares:
        k = round(share * answerable)
        out[share] = mean(r for _, r in ranked[:k]) if 0 < k <= len(ranked) else None
    return out
