"""The ranker's fitting model: a conditional logit over pooled candidates, offset from the hand weights.

``lab/fit/ranker.py`` pools the questions (searching them, labelling candidates) and calls these functions.
The score of a candidate is ``(w_hand + Δ) · f``; ``fit`` minimises the softmax cross-entropy of each question's
positives among its candidates, every group weighted by ``gw`` (summing to 1), plus ``λ ||Δ||²``, i.e. a Gaussian
prior centred on the hand weights. Features in ``FIXED`` keep their hand weights.

Two kinds of groups are fitted:

- **mined** questions from the train packages (``lab/train/make_pairs.py``): thousands, but each is its target's
  own first sentence with the name masked, not how a newcomer asks. Every kind of pair (``source``) weighs the same
  (``balanced``), however many questions it has.
- **newcomer** questions, written by people (the dev sets and the spent test sets): a few hundred, worded as users
  ask. ``mixed`` gives them together the share ``alpha`` of the loss, the mined ones ``1 - alpha``.

``alpha`` and ``λ`` are chosen by leave-one-project-out cross-validation over the newcomer projects
(``leave_one_project_out``): each project's questions are ranked by a model fitted without them. Deterministic:
fixed group order, L-BFGS from ``Δ = 0``; the committed fit runs to the optimum and rounds to ``DECIMALS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS, RankerWeights

# Features the mined pairs cannot teach keep their hand weights (see lab/fit/ranker.py): the name features (the
# pairs mask the target's own name) and asking for tests or release notes (never a target of a pair).
FIXED = ("definition", "name_match", "name_cover", "test_asked", "notes_asked")
FREE = np.array([name not in FIXED for name in FEATURES])
FOLDS = 4  # cross-validation over train packages: every package is held out once
Gold = list[tuple[str, int, int]]


@dataclass
class Group:
    """One question's pooled candidates: their feature matrix, labels, spans and kinds, and the gold spans."""

    qid: str
    x: np.ndarray
    y: np.ndarray
    spans: list[tuple[str, int, int, str]]  # (path, start line, end line, kind) per candidate
    gold: Gold


def overlaps(path: str, start: int, end: int, gold: Gold) -> bool:
    """The span shares a line with a gold span of the same file."""
    return any(path == p and start <= e and s <= end for p, s, e in gold)


def stack(groups: Sequence[Group]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All groups' candidates as one matrix, their labels, and where each group starts."""
    starts = np.cumsum([0] + [len(g.y) for g in groups[:-1]])
    return np.vstack([g.x for g in groups]), np.concatenate([g.y for g in groups]), starts


def loss(d: np.ndarray, x: np.ndarray, offset: np.ndarray, y: np.ndarray, starts: np.ndarray,
         lam: float, gw: np.ndarray) -> tuple[float, np.ndarray]:
    """Softmax cross-entropy of the positives within each group under ``offset + x · d``, weighted per group by
    ``gw`` (summing to 1), plus λ ||d||²; and its gradient."""
    s = offset + x @ d
    m = np.maximum.reduceat(s, starts)
    sizes = np.diff(np.append(starts, len(s)))
    e = np.exp(s - np.repeat(m, sizes))
    z = np.add.reduceat(e, starts)
    ep = e * y
    zp = np.add.reduceat(ep, starts)
    total = float(np.sum(gw * (np.log(z) - np.log(zp))))
    coef = (e / np.repeat(z, sizes) - ep / np.repeat(zp, sizes)) * np.repeat(gw, sizes)
    return total + lam * float(d @ d), x.T @ coef + 2 * lam * d


def balanced(groups: Sequence[Group], source: Mapping[str, str]) -> np.ndarray:
    """Per-group loss weights under which every kind of pair weighs the same in all (summing to 1)."""
    counts: dict[str, int] = {}
    for g in groups:
        counts[source[g.qid]] = counts.get(source[g.qid], 0) + 1
    return np.array([1.0 / (len(counts) * counts[source[g.qid]]) for g in groups])


def mixed(mined: Sequence[Group], newcomer: Sequence[Group], source: Mapping[str, str],
          alpha: float) -> tuple[list[Group], np.ndarray]:
    """The groups to fit and their weights: the mined ones ``balanced`` to ``1 - alpha``, the newcomer ones
    alike to ``alpha`` (all mined when there are no newcomer groups or ``alpha`` is 0)."""
    if not newcomer or alpha <= 0:
        return list(mined), balanced(mined, source)
    gw = np.concatenate([balanced(mined, source) * (1 - alpha), np.full(len(newcomer), alpha / len(newcomer))])
    return [*mined, *newcomer], gw


# L-BFGS-B's options. ``SEARCH`` is enough to compare fits by a rank metric (cross-validation, leave-one-project-out).
# ``EXACT`` runs the committed fit to the optimum itself: stopped at SEARCH's gradient tolerance, the weights sit
# wherever the descent happened to stop, and a change of 1e-7 in the pooled features (another CPU's float sums in
# the encoder) moved them by up to 3e-3; at the optimum the same change moves them by at most 5e-6.
SEARCH = {"maxiter": 1000}
EXACT = {"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10}
# The committed weights' decimals: coarse enough that such a shift (5e-6) almost never changes a rounded weight
# (a chance of about 2% over all the free weights), fine enough for scores (the largest weight is about 7).
DECIMALS = 3


def fit(groups: Sequence[Group], lam: float, gw: np.ndarray, exact: bool = False) -> dict[str, float]:
    """The hand weights plus the offset Δ (on the features not in ``FIXED``) minimising the penalised loss;
    ``exact``: run to the optimum and round the fitted weights to ``DECIMALS`` (the committed fit), else stop early
    and keep 6 decimals."""
    from scipy.optimize import minimize

    x, y, starts = stack(groups)
    hand = RankerWeights(HAND_WEIGHTS).vector()
    offset = x @ hand
    free = np.ascontiguousarray(x[:, FREE])
    res = minimize(loss, np.zeros(free.shape[1]), args=(free, offset, y, starts, lam, gw),
                   jac=True, method="L-BFGS-B", options=EXACT if exact else SEARCH)
    w = hand.copy()
    w[FREE] += res.x
    decimals = [DECIMALS if exact and fitted else 6 for fitted in FREE]  # the fixed ones stay the hand weights
    return {name: round(float(v), d) + 0.0 for name, v, d in zip(FEATURES, w, decimals, strict=True)}  # no "-0.0"


def metrics(groups: Sequence[Group], weights: RankerWeights) -> dict[str, float]:
    """span@1, span@3, span MRR and file MRR of the fused top 10 under ``weights`` (``fuse``'s ranking and dedup)."""
    from sift.retrievers.ranker import scores

    return scored_metrics(groups, lambda x: scores(x, weights))


def scored_metrics(groups: Sequence[Group], score: Callable[[np.ndarray], np.ndarray]) -> dict[str, float]:
    """``metrics`` for any scoring of a feature matrix (higher is better), e.g. another model class's."""
    from sift.retrievers.fusion import _Candidate, dedup_overlaps, sort_hits

    at1 = at3 = mrr = fmrr = 0.0
    for g in groups:
        sc = score(g.x)
        cands = [_Candidate(float(v), p, s, e, k, (), None) for (p, s, e, k), v in zip(g.spans, sc, strict=True)]
        top = sort_hits(dedup_overlaps(sort_hits(cands)))[:10]  # type: ignore[arg-type]
        flags = [overlaps(h.path, h.start_line, h.end_line, g.gold) for h in top]
        gold_paths = {p for p, _, _ in g.gold}
        at1 += any(flags[:1])
        at3 += any(flags[:3])
        mrr += next((1.0 / r for r, f in enumerate(flags, 1) if f), 0.0)
        fmrr += next((1.0 / r for r, h in enumerate(top, 1) if h.path in gold_paths), 0.0)
    n = max(len(groups), 1)
    return {"span@1": round(at1 / n, 4), "span@3": round(at3 / n, 4), "spanMRR": round(mrr / n, 4),
            "fileMRR": round(fmrr / n, 4)}


def folds(groups: Sequence[Group], package: Mapping[str, str]) -> list[set[str]]:
    """``FOLDS`` disjoint sets of packages (sorted names dealt in turn), each held out once."""
    names = sorted({package[g.qid] for g in groups})
    return [set(names[i::FOLDS]) for i in range(FOLDS)]


def by_source(scored: Sequence[tuple[Group, RankerWeights]], source: Mapping[str, str]) -> dict[str, float]:
    """Span MRR per kind of pair, each group ranked under its own weights, and their mean as ``"macro"``."""
    per: dict[str, list[float]] = {}
    for g, weights in scored:
        per.setdefault(source[g.qid], []).append(metrics([g], weights)["spanMRR"])
    out = {s: round(float(np.mean(v)), 4) for s, v in sorted(per.items())}
    return out | {"macro": round(float(np.mean(list(out.values()))), 4)}


def cross_validate(groups: Sequence[Group], lam: float, package: Mapping[str, str],
                   source: Mapping[str, str]) -> dict[str, float]:
    """Held-out span MRR per kind of pair: each fold's train packages ranked by a model fitted on the others."""
    scored: list[tuple[Group, RankerWeights]] = []
    for held in folds(groups, package):
        kept = [g for g in groups if package[g.qid] not in held]
        weights = RankerWeights(fit(kept, lam, balanced(kept, source)))
        scored += [(g, weights) for g in groups if package[g.qid] in held]
    return by_source(scored, source)


def leave_one_project_out(mined: Sequence[Group], newcomer: Mapping[str, Sequence[Group]], source: Mapping[str, str],
                          alpha: float, lam: float) -> dict[str, float]:
    """Span MRR of each newcomer project's questions under a model fitted on the mined groups and the other
    projects' questions, and their mean over projects as ``"macro"``."""
    from sift.retrievers.ranker import scores

    def linear(groups: Sequence[Group], gw: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        weights = RankerWeights(fit(groups, lam, gw))
        return lambda x: scores(x, weights)

    return held_out(mined, newcomer, source, alpha, linear)


def held_out(mined: Sequence[Group], newcomer: Mapping[str, Sequence[Group]], source: Mapping[str, str],
             alpha: float, make: Callable[[Sequence[Group], np.ndarray], Callable[[np.ndarray], np.ndarray]],
             ) -> dict[str, float]:
    """``leave_one_project_out`` for any model: ``make(groups, group_weights)`` fits one and returns its scorer."""
    out: dict[str, float] = {}
    for held in sorted(newcomer):
        others = [g for project, groups in sorted(newcomer.items()) if project != held for g in groups if g.y.any()]
        groups, gw = mixed(mined, others, source, alpha)
        out[held] = scored_metrics(newcomer[held], make(groups, gw))["spanMRR"]
    return out | {"macro": round(float(np.mean(list(out.values()))), 4)}
