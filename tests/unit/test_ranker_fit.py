"""The ranker's fitting model: group weights, the fit's pull from the hand weights, leave-one-project-out."""

from __future__ import annotations

import numpy as np
import pytest

from lab.train import ranker_fit as rf
from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS

CODE = FEATURES.index("code")
DOC = FEATURES.index("doc")


def _group(qid: str, positive: str, project: str = "p") -> rf.Group:
    """Two candidates, a definition and a doc section, alike but for their kind; ``positive`` says which is gold."""
    x = np.zeros((2, len(FEATURES)))
    x[0, CODE] = 1.0
    x[1, DOC] = 1.0
    y = np.array([positive == "code", positive == "doc"], float)
    return rf.Group(qid, x, y, [(f"{project}/a.py", 1, 5, "function"), (f"{project}/a.md", 1, 5, "doc")],
                    [(f"{project}/a.py", 1, 5)] if positive == "code" else [(f"{project}/a.md", 1, 5)])


@pytest.mark.parametrize(("sources", "expected"), [
    (["a", "a", "b"], [0.25, 0.25, 0.5]),  # each kind of pair weighs half, however many it has
    (["a"], [1.0]),
    (["a", "b", "c", "c"], [1 / 3, 1 / 3, 1 / 6, 1 / 6]),
])
def test_balanced_weighs_every_kind_of_pair_alike(sources: list[str], expected: list[float]) -> None:
    groups = [_group(f"q{i}", "code") for i in range(len(sources))]
    source = {f"q{i}": s for i, s in enumerate(sources)}
    assert rf.balanced(groups, source) == pytest.approx(expected)


@pytest.mark.parametrize(("alpha", "n_new", "mined_total", "new_total"), [
    (0.0, 2, 1.0, 0.0),  # alpha 0: the mined questions alone
    (0.5, 2, 0.5, 0.5),
    (0.75, 3, 0.25, 0.75),
    (0.5, 0, 1.0, 0.0),  # no newcomer questions: the mined ones keep the whole loss
])
def test_mixed_gives_the_newcomer_questions_their_share(alpha: float, n_new: int, mined_total: float,
                                                        new_total: float) -> None:
    mined = [_group("m1", "code"), _group("m2", "doc")]
    source = {"m1": "docstring", "m2": "doc_section"}
    new = [_group(f"n{i}", "doc") for i in range(n_new)]
    groups, gw = rf.mixed(mined, new, source, alpha)
    assert len(groups) == len(mined) + (len(new) if alpha > 0 else 0)
    assert gw[:2].sum() == pytest.approx(mined_total) and gw[2:].sum() == pytest.approx(new_total)


def test_fit_moves_towards_what_the_weighted_questions_prefer() -> None:
    mined = [_group(f"m{i}", "code") for i in range(4)]
    source = {g.qid: "docstring" for g in mined}
    new = [_group(f"n{i}", "doc") for i in range(4)]
    alone = rf.fit(mined, 0.01, rf.balanced(mined, source))
    groups, gw = rf.mixed(mined, new, source, 0.75)
    both = rf.fit(groups, 0.01, gw)
    assert alone["code"] - alone["doc"] > HAND_WEIGHTS["code"]  # definitions win more clearly
    assert both["doc"] > both["code"]  # three quarters of the loss wants the doc section first
    assert all(both[name] == pytest.approx(HAND_WEIGHTS.get(name, 0.0), abs=1e-6) for name in rf.FIXED)  # not fitted


def test_the_exact_fit_is_rounded_and_does_not_move_with_float_noise_in_the_features() -> None:
    mined = [_group(f"m{i}", "code") for i in range(4)]
    source = {g.qid: "docstring" for g in mined}
    new = [_group(f"n{i}", "doc") for i in range(4)]
    groups, gw = rf.mixed(mined, new, source, 0.75)
    exact = rf.fit(groups, 0.01, gw, exact=True)
    assert all(round(exact[name], rf.DECIMALS) == exact[name] for name in FEATURES if name not in rf.FIXED)
    assert all(exact[name] == round(HAND_WEIGHTS.get(name, 0.0), 6) for name in rf.FIXED)  # not fitted, not rounded
    # Another CPU's float sums: the pooled features differ in their last digits, the committed weights do not.
    rng = np.random.default_rng(7)
    jitter = [rf.Group(g.qid, g.x * (1 + rng.uniform(-1e-9, 1e-9, g.x.shape)), g.y, g.spans, g.gold) for g in groups]
    assert rf.fit(jitter, 0.01, gw, exact=True) == exact
    assert max(abs(exact[k] - v) for k, v in rf.fit(groups, 0.01, gw).items()) < 10 ** -rf.DECIMALS


def test_leave_one_project_out_never_fits_on_the_held_out_project() -> None:
    mined = [_group(f"m{i}", "code") for i in range(4)]
    source = {g.qid: "docstring" for g in mined}
    # Project "a" wants doc sections, "b" definitions: held out, each is ranked by a model that never saw it.
    newcomer = {"a": [_group(f"a{i}", "doc", "a") for i in range(3)],
                "b": [_group(f"b{i}", "code", "b") for i in range(3)]}
    out = rf.leave_one_project_out(mined, newcomer, source, alpha=0.9, lam=1e-4)
    assert out["a"] == pytest.approx(0.5)  # fitted on "b" and the mined ones: the definition first, gold second
    assert out["b"] == pytest.approx(0.5)  # fitted on "a": the doc section first
    assert out["macro"] == pytest.approx(0.5)


@pytest.mark.parametrize(("code_score", "doc_score", "positive", "expected"), [
    (2.0, 1.0, "code", {"span@1": 1.0, "span@3": 1.0, "spanMRR": 1.0}),
    (1.0, 2.0, "code", {"span@1": 0.0, "span@3": 1.0, "spanMRR": 0.5}),
    (1.0, 2.0, "doc", {"span@1": 1.0, "span@3": 1.0, "spanMRR": 1.0}),
])
def test_scored_metrics_ranks_by_any_scorer(code_score: float, doc_score: float, positive: str,
                                            expected: dict[str, float]) -> None:
    g = _group("q", positive)
    got = rf.scored_metrics([g], lambda x: x[:, CODE] * code_score + x[:, DOC] * doc_score)
    assert {k: got[k] for k in expected} == expected


def test_metrics_is_scored_metrics_under_the_ranker_score() -> None:
    from sift.retrievers.ranker import RankerWeights, scores

    groups = [_group("a", "code"), _group("b", "doc")]
    w = RankerWeights(HAND_WEIGHTS)
    assert rf.metrics(groups, w) == rf.scored_metrics(groups, lambda x: scores(x, w))
