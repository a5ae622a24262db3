"""How far to trust an answer: four signals from the evidence, combined by a fitted logistic model.

The signals, computed when the answer is written (pure functions of the plan, the evidence and the cited ids):

- ``margin``: how far the fused ranker's score of the strongest candidate place is above the second's, as
  the log of their ratio (the ranker's ``w · f`` gap; ``selection.rank_evidence`` is the ranker's order). Parts of
  one section or definition are one place, and so are copies of one definition in several files (a built
  ``dist/`` or ``lib/esm/`` beside its source): a copy is no runner-up. A clear winner against a toss-up.
- ``coverage``: the idf-weighted share of the question's terms that the best cited item contains
  (``terms.coverage``).
- ``agreement``: the share of the plan's search channels (bm25, vector, smart) that ranked the first cited item,
  or a chunk overlapping it, among their first ``TOP_RANKS`` (``top_channels``, recorded by the fuse node).
  Fusion keeps whatever any channel found somewhere in its 100, so being found says little; leading does.
- ``share``: the strongest place's part of all the places' ranker scores: the fitted ranker's own probability,
  among what was retrieved, that the first place is the one (``margin`` sees only the runner-up).

``ConfidenceModel`` turns them into a probability that the answer is right, and the probability into a level.
Its weights and the two thresholds are data (``sift.fitted.CONFIDENCE``), written by
``lab/fit/confidence.py`` from answer runs over the dev sets; the thresholds are set there so that ``high``
answers were right at least 85% of the time, held out as well as fitted. The rules that are no fit: a degraded
run (a channel timed out, the LLM fell back) or an answer that lost unchecked parts is never ``high``; a not-found
is ``low`` with score 0.

What the fitted file gives today: ``medium`` from 0.2651, and ``high`` at 1.0, because no cut met the 85% (the
fit writes 1.0 for "none"). The model's probability is below 0.851 for any signals (every weight is positive and
each signal is bounded: ``margin`` by ``MAX_MARGIN``, the others by 1), so a retrieved answer is ``medium`` or
``low``, never ``high``; ``high`` comes only from ``no_retrieval`` (a reply that needed no sources).
``tests/unit/test_confidence.py`` holds this, so a refit that changes it says so. The ``high`` branches here and in
``rating.py`` and the finish node stay: a refit may set the cut below 1.0, the API keeps ``high`` among its
levels, and ``lab/fit/confidence.py`` collects its rows with a model whose ``high`` begins at 0, telling the
answers these rules capped (degraded or partly removed) by their level.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from sift import fitted
from sift.graph.models import Confidence, ConfidenceLevel, Evidence, Plan
from sift.graph.writer.selection import agreement, rank_evidence
from sift.graph.writer.terms import coverage, query_tokens
from sift.retrievers import copies
from sift.tokenize import tokenize

FEATURES = ("margin", "coverage", "agreement", "share")
MAX_MARGIN = 3.0  # a winner e³ ≈ 20 times the runner-up's score is clear; a larger gap says no more
TOP_RANKS = 3


@dataclass(frozen=True)
class ConfidenceModel:
    """Logistic weights over ``FEATURES`` and the probabilities at which ``medium`` and ``high`` begin."""

    intercept: float
    weights: tuple[float, ...]
    medium: float
    high: float

    def probability(self, signals: Mapping[str, float]) -> float:
        """The modelled probability that the answer is right (0..1)."""
        z = self.intercept + sum(w * signals.get(f, 0.0) for w, f in zip(self.weights, FEATURES, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def level(self, probability: float) -> ConfidenceLevel:
        """The level a probability falls in."""
        if probability >= self.high:
            return "high"
        return "medium" if probability >= self.medium else "low"


def load_model() -> ConfidenceModel:
    """The fitted model from its data file (read once by whoever builds the run context)."""
    data = fitted.load(fitted.CONFIDENCE)
    return ConfidenceModel(intercept=float(data["intercept"]),
                           weights=tuple(float(data["weights"][f]) for f in FEATURES),
                           medium=float(data["thresholds"]["medium"]), high=float(data["thresholds"]["high"]))


def _place(e: Evidence) -> tuple[str, str, bool]:
    """What the parts of one section or definition share: one candidate place."""
    return e.path, e.symbol, e.module_code


def is_copy(a: Evidence, b: Evidence, words: dict[int, set[str]] | None = None) -> bool:
    """``a`` and ``b`` are one symbol in two files with (nearly) the same text: a built or vendored copy
    (``retrievers.copies.is_copy``); ``words`` remembers each item's words by id."""
    if a.path == b.path or a.symbol != b.symbol:
        return False  # before reading any words
    words = {} if words is None else words
    for e in (a, b):
        if e.id not in words:
            words[e.id] = set(tokenize(e.text))
    return copies.is_copy(a, b, words[a.id], words[b.id])


def places(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[tuple[float, Evidence]]:
    """Candidate places, strongest first, by the ranker's relative score; each place once (its best part, and
    the best of its copies in other files)."""
    seen: set[tuple[str, str, bool]] = set()
    words: dict[int, set[str]] = {}
    out: list[tuple[float, Evidence]] = []
    for score, e in rank_evidence(plan, evidence, idf):
        if _place(e) not in seen and not any(is_copy(e, o, words) for _, o in out):
            out.append((score, e))
        seen.add(_place(e))
    return out


def margin(ranked: Sequence[tuple[float, Evidence]]) -> float:
    """The log of the first candidate's score over the second's, within 0..``MAX_MARGIN`` (the most when there is
    one candidate, or the second scores 0)."""
    if not ranked:
        return 0.0
    first, second = ranked[0][0], (ranked[1][0] if len(ranked) > 1 else 0.0)
    if first <= 0:
        return 0.0
    if second <= 0:
        return MAX_MARGIN
    return max(0.0, min(MAX_MARGIN, math.log(first / second)))


def share(ranked: Sequence[tuple[float, Evidence]]) -> float:
    """The first candidate place's share of all the places' scores: the ranker's softmax probability that the
    first is the one, among what was retrieved (0 when nothing scores)."""
    total = sum(score for score, _ in ranked)
    return ranked[0][0] / total if ranked and total > 0 else 0.0


class _Span(Protocol):
    path: str
    start_line: int
    end_line: int


def top_channels(item: _Span, tops: Iterable[tuple[str, Sequence[_Span]]]) -> list[str]:
    """The channels whose leading hits (``(channel, first hits)`` pairs) include ``item`` or a span overlapping
    it in the same file, sorted."""
    return sorted({channel for channel, hits in tops for h in hits if h.path == item.path
                   and h.start_line <= item.end_line and item.start_line <= h.end_line})


def signals(plan: Plan, evidence: Sequence[Evidence], cited: Sequence[int],
            idf: Mapping[str, float]) -> dict[str, float]:
    """The three signals of an answer citing the evidence ids ``cited`` (first cited first)."""
    by_id = {e.id: e for e in evidence}
    items = [by_id[i] for i in dict.fromkeys(cited) if i in by_id]
    if not items:
        return {f: 0.0 for f in FEATURES}
    tokens = query_tokens(plan, idf)
    ranked = places(plan, evidence, idf)
    return {
        "margin": round(margin(ranked), 4),
        "coverage": round(max(coverage(e, tokens, idf) for e in items), 4),
        "agreement": round(agreement(items[0], plan.channels), 4),
        "share": round(share(ranked), 4),
    }


def assess(model: ConfidenceModel, found: Mapping[str, float], *, degraded: bool = False,
           not_found: bool = False, checked: bool = True) -> Confidence:
    """The confidence of an answer with signals ``found``: a not-found is low (score 0); a degraded run or an
    answer that lost unchecked parts (``checked`` false) is at most medium."""
    if not_found:
        return Confidence(level="low", score=0.0, signals=dict(found))
    p = model.probability(found)
    level = model.level(p)
    if level == "high" and (degraded or not checked):
        level = "medium"
    return Confidence(level=level, score=round(p, 4), signals=dict(found))


def no_retrieval() -> Confidence:
    """A reply that needed no sources (a greeting): nothing to doubt."""
    return Confidence(level="high", score=1.0)
