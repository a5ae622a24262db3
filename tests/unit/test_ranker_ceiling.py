"""The ranker-ceiling bench's own fit (every feature free) and its pooled share."""

from __future__ import annotations

import numpy as np
import pytest

from lab.train import ranker_ceiling as rc
from lab.train import ranker_fit as rf
from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS

NAME = FEATURES.index("name_match")  # one of the features the committed fit keeps at its hand weight


def _group(qid: str, positive: int | None) -> rf.Group:
    """Two definitions alike but for ``name_match``, set on the first; ``positive`` is the gold one (or none)."""
    x = np.zeros((2, len(FEATURES)))
    x[0, NAME] = 1.0
    y = np.array([positive == 0, positive == 1], float)
    spans = [("a.py", 1, 5, "function"), ("b.py", 1, 5, "function")]
    gold = [] if positive is None else [(spans[positive][0], 1, 5)]
    return rf.Group(qid, x, y, spans, gold)


def test_own_fit_frees_the_features_the_committed_fit_keeps() -> None:
    # gold is always the candidate without the name match: a free fit turns the hand weight around
    groups = [_group(f"q{i}", 1) for i in range(4)]
    own = rc.own_fit(groups)
    assert HAND_WEIGHTS["name_match"] > 0 > own.weights["name_match"]
    assert rf.metrics(groups, own)["spanMRR"] == 1.0


def test_own_fit_ignores_questions_without_a_pooled_gold() -> None:
    with_none = [_group("q0", 1), _group("q1", None)]
    assert rc.own_fit(with_none).weights == rc.own_fit([_group("q0", 1)]).weights


@pytest.mark.parametrize(("positives", "expected"), [
    ([1, 1, None, 0], 0.75),
    ([None], 0.0),
    ([], 0.0),
])
def test_pooled_share(positives: list[int | None], expected: float) -> None:
    assert rc.pooled_share([_group(f"q{i}", p) for i, p in enumerate(positives)]) == pytest.approx(expected)
