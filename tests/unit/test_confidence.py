"""Answer confidence: the signals, the fitted model's levels and the rules no fit may break."""

from __future__ import annotations

import math
from typing import NamedTuple

import pytest

from sift import fitted
from sift.graph.models import Evidence, Plan
from sift.graph.writer.confidence import (
    FEATURES,
    MAX_MARGIN,
    ConfidenceModel,
    agreement,
    assess,
    is_copy,
    load_model,
    margin,
    no_retrieval,
    places,
    share,
    signals,
    top_channels,
)


def _ev(n: int, path: str = "pkg/a.py", name: str = "f", channels: tuple[str, ...] = ("bm25",),
        text: str = "", kind: str = "function", start: int = 1, score: float = 1.0) -> Evidence:
    return Evidence(id=n, path=path, start_line=start, end_line=start + 4, kind=kind, name=name, score=score,
                    channels=["bm25", "vector", "smart"], top_in=list(channels),
                    text=text or f"def {name}():\n    pass\n")


@pytest.mark.parametrize(("scores", "expected"), [
    ([], 0.0),
    ([1.0], MAX_MARGIN),  # one candidate: against nothing
    ([1.0, 0.0], MAX_MARGIN),
    ([1.0, 0.5], math.log(2.0)),  # twice the runner-up's score
    ([1.0, 1.0], 0.0),  # a tie
    ([1.0, 0.01], MAX_MARGIN),  # e^4.6: as clear as it gets
    ([0.5, 1.0], 0.0),  # never negative
    ([0.0, 0.0], 0.0),  # nothing scored
])
def test_margin_is_the_log_ratio_of_first_to_second(scores: list[float], expected: float) -> None:
    ranked = [(s, _ev(i)) for i, s in enumerate(scores, 1)]
    assert margin(ranked) == pytest.approx(expected)


BODY = "function scan(line) {\n  var parts = line.split(' ');\n  return parts.map(trim);\n}\n"


@pytest.mark.parametrize(("a", "b", "copy"), [
    (_ev(1, "lib/cjs/t.js", "scan", text=BODY), _ev(2, "lib/esm/t.js", "scan", text=BODY), True),
    (_ev(1, "lib/cjs/t.js", "scan", text=BODY), _ev(2, "dist/t.js", "scan", text=BODY + "// built\n"), True),
    (_ev(1, "lib/cjs/t.js", "scan", text=BODY), _ev(2, "lib/cjs/t.js", "scan", text=BODY), False),  # one file
    (_ev(1, "lib/a.js", "scan", text=BODY), _ev(2, "lib/b.js", "scanAll", text=BODY), False),  # another name
    (_ev(1, "lib/a.js", "scan", text=BODY),
     _ev(2, "lib/b.js", "scan", text="function scan(input) {\n  return tokenize(input, options);\n}\n"), False),
])
def test_is_copy(a: Evidence, b: Evidence, copy: bool) -> None:
    assert is_copy(a, b) is copy


def test_places_count_copies_once() -> None:
    """A built copy of the first place is not its runner-up: the margin is to the next other place."""
    evidence = [_ev(1, "lib/cjs/t.js", "scan", text=BODY, score=1.0), _ev(2, "lib/esm/t.js", "scan", text=BODY,
                score=0.99), _ev(3, "lib/cjs/t.js", "parse", score=0.5)]
    ranked = places(Plan(standalone="where is a line scanned"), evidence, {})
    assert [e.id for _, e in ranked] == [1, 3]
    assert margin(ranked) == pytest.approx(math.log(2.0))


@pytest.mark.parametrize(("scores", "expected"), [
    ([], 0.0),
    ([1.0], 1.0),  # the only candidate place
    ([1.0, 1.0], 0.5),  # a toss-up
    ([1.0, 0.5, 0.5], 0.5),
    ([1.0, 0.25], 0.8),
    ([0.0, 0.0], 0.0),  # nothing scored
])
def test_share_is_the_first_places_part_of_all_scores(scores: list[float], expected: float) -> None:
    ranked = [(s, _ev(i)) for i, s in enumerate(scores, 1)]
    assert share(ranked) == pytest.approx(expected)


@pytest.mark.parametrize(("leading", "ran", "expected"), [
    (("bm25", "vector", "smart"), ["bm25", "vector", "smart"], 1.0),
    (("bm25",), ["bm25", "vector", "smart"], 1 / 3),
    (("docql",), ["bm25", "vector"], 0.0),
    (("bm25", "vector"), ["bm25", "bm25", "vector"], 1.0),  # a channel listed twice ran once
    (("bm25",), ["docql"], 0.0),  # no search channel ran
    (("bm25",), [], 0.0),
])
def test_agreement_share_of_search_channels_leading(leading: tuple[str, ...], ran: list[str],
                                                   expected: float) -> None:
    assert agreement(_ev(1, channels=leading), ran) == pytest.approx(expected)


class _Hit(NamedTuple):
    path: str
    start_line: int
    end_line: int


@pytest.mark.parametrize(("tops", "expected"), [
    ([("bm25", [_Hit("pkg/a.py", 1, 5)]), ("vector", [_Hit("pkg/b.py", 1, 5)])], ["bm25"]),
    ([("vector", [_Hit("pkg/a.py", 5, 9)]), ("bm25", [_Hit("pkg/a.py", 1, 200)])], ["bm25", "vector"]),  # overlaps
    ([("smart", [_Hit("pkg/a.py", 6, 9)])], []),  # after the item's last line
    ([("bm25", [_Hit("pkg/a.py", 1, 5)]), ("bm25", [_Hit("pkg/a.py", 2, 3)])], ["bm25"]),  # two sub-queries
    ([], []),
])
def test_top_channels_by_overlap(tops: list[tuple[str, list[_Hit]]], expected: list[str]) -> None:
    assert top_channels(_ev(1), tops) == expected


def test_signals_of_no_cited_evidence_are_zero() -> None:
    plan = Plan(standalone="where is parse defined")
    assert signals(plan, [_ev(1, name="parse")], [], {}) == {f: 0.0 for f in FEATURES}
    assert signals(plan, [_ev(1, name="parse")], [7], {}) == {f: 0.0 for f in FEATURES}  # unknown id


def test_signals_read_the_first_cited_item() -> None:
    plan = Plan(standalone="where is parse defined", channels=["bm25", "vector"])
    ev = [_ev(1, name="parse", channels=("bm25", "vector"), text="def parse():\n    pass\n"),
          _ev(2, path="pkg/b.py", name="other", channels=("vector",), text="def other():\n    pass\n", score=0.5)]
    first = signals(plan, ev, [1], {})
    assert first["agreement"] == 1.0 and first["coverage"] > 0 and first["margin"] > 0
    assert first["share"] == pytest.approx(1.0 / 1.5, abs=1e-4)  # scores 1 and 0.5: the first place holds two thirds
    assert signals(plan, ev, [2], {})["agreement"] == 0.5


MODEL = ConfidenceModel(intercept=-1.0, weights=(1.0, 2.0, 0.0, 0.0), medium=0.4, high=0.8)


@pytest.mark.parametrize(("found", "level"), [
    ({"margin": 0.0, "coverage": 0.0, "agreement": 1.0}, "low"),  # p = 0.27
    ({"margin": 0.0, "coverage": 0.5, "agreement": 0.0}, "medium"),  # p = 0.5
    ({"margin": 1.0, "coverage": 1.0, "agreement": 0.0}, "high"),  # p = 0.88
])
def test_model_levels(found: dict[str, float], level: str) -> None:
    assert MODEL.level(MODEL.probability(found)) == level


@pytest.mark.parametrize(("kwargs", "level", "score"), [
    ({}, "high", 0.8808),
    ({"degraded": True}, "medium", 0.8808),  # a degraded run is never high
    ({"checked": False}, "medium", 0.8808),  # nor an answer that lost unchecked parts
    ({"not_found": True}, "low", 0.0),  # a not-found is low, score 0
    ({"not_found": True, "degraded": True}, "low", 0.0),
])
def test_assess_rules(kwargs: dict[str, bool], level: str, score: float) -> None:
    conf = assess(MODEL, {"margin": 1.0, "coverage": 1.0, "agreement": 0.0}, **kwargs)
    assert (conf.level, conf.score) == (level, pytest.approx(score, abs=1e-4))


def test_assess_keeps_medium_and_low_when_degraded() -> None:
    found = {"margin": 0.0, "coverage": 0.5, "agreement": 0.0}
    assert assess(MODEL, found, degraded=True).level == "medium"


def test_committed_weights_load_and_order_thresholds() -> None:
    model = load_model()
    data = fitted.load(fitted.CONFIDENCE)
    assert set(data["weights"]) == set(FEATURES)
    assert 0.0 <= model.medium <= model.high <= 1.0
    assert 0.0 < model.probability({"margin": 1.0, "coverage": 1.0, "agreement": 1.0}) < 1.0


def test_committed_model_rates_no_retrieved_answer_high() -> None:
    """What ``confidence.py`` and docs/architecture.md say of the fitted file: its largest probability (each signal
    at the end of its range that its weight favours) is below the ``high`` cut, so a retrieved answer is ``medium``
    or ``low``; only a reply that needed no sources is ``high``. A refit that changes this must update both."""
    model = load_model()
    top = {f: (MAX_MARGIN if f == "margin" else 1.0) if w > 0 else 0.0 for f, w in zip(FEATURES, model.weights,
                                                                                       strict=True)}
    assert model.probability(top) < model.high == 1.0
    assert model.level(model.probability(top)) == "medium"
    assert no_retrieval().level == "high"
