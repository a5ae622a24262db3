"""Which model class ranks better on projects it never saw: the fitted conditional logit, or gradient-boosted trees?

    python lab/fit/ranker.py            # first: it pools the candidates and caches them
    python lab/train/ranker_trees.py      # then: reads that cache (needs the ``fit`` extra: LightGBM)

The ranking issue leaves the model class open: a linear model (what ``lab/fit/ranker.py`` fits) or LightGBM
LambdaRank "if it pays for itself". This compares them under the protocol that chose the linear model's
``alpha`` and penalty: leave-one-project-out over the newcomer projects (dev and spent test sets), each fit on
the mined questions plus the other projects' questions with the newcomer share ``alpha`` read from
``sift/fitted/ranker_weights.json``, scored by span MRR averaged over projects. The test sets are never read.

The trees start from the hand weights of the features the mined pairs cannot teach (``ranker_fit.FIXED``, as
the linear fit keeps them) as LightGBM's initial score and grow over the other features; a tree model's raw
score is exponentiated like the linear one's, so fusion's dedup (a ratio of scores) treats both alike. Each
configuration in ``TREES`` is printed beside the linear fit; choosing the best of several by this same figure
flatters the trees, which the printout says. Deterministic: fixed data order, LightGBM's deterministic mode,
a fixed seed.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import ranker as fr  # noqa: E402  (lab/fit/ranker.py: the questions and the pooled candidates)
from lab.train import ranker_fit as rf  # noqa: E402
from lab.train.ranker_fit import Group  # noqa: E402
from sift.retrievers.ranker import HAND_WEIGHTS, RankerWeights  # noqa: E402

# (leaves per tree, boosting rounds): small trees, as few features and a few hundred questions per project allow.
TREES = ((7, 100), (15, 100), (7, 300))
LEARNING_RATE = 0.05
MIN_DATA_IN_LEAF = 50
SEED = 7
Scorer = Callable[[np.ndarray], np.ndarray]


HAND = RankerWeights(HAND_WEIGHTS).vector()


def fixed_offset(x: np.ndarray) -> np.ndarray:
    """The hand weights' score of the features the mined pairs cannot teach (``ranker_fit.FIXED``)."""
    return x[:, ~rf.FREE] @ HAND[~rf.FREE]


def fit_trees(groups: Sequence[Group], gw: np.ndarray, leaves: int, rounds: int) -> Scorer:
    """LambdaRank trees over the free features, each group weighted by ``gw`` (LightGBM sums a group's
    per-candidate weights into the group's weight), starting from ``fixed_offset``."""
    import lightgbm as lgb

    x, y, _ = rf.stack(groups)
    sizes = np.array([len(g.y) for g in groups])
    data = lgb.Dataset(x[:, rf.FREE], label=y, group=sizes, weight=np.repeat(gw / sizes, sizes) * len(groups),
                       init_score=fixed_offset(x))
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": LEARNING_RATE,
              "min_data_in_leaf": MIN_DATA_IN_LEAF, "lambdarank_truncation_level": 10, "deterministic": True,
              "force_row_wise": True, "seed": SEED, "num_threads": os.cpu_count() or 1, "verbose": -1}
    booster = lgb.train(params, data, num_boost_round=rounds)
    return lambda m: np.exp(np.clip(booster.predict(m[:, rf.FREE], raw_score=True) + fixed_offset(m), -700, 700))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    t0 = time.perf_counter()
    _, alpha, lam = fr.committed_choice()
    _, _, by_project, mined, source = fr.read_cached_pool()
    print(f"{len(mined)} mined questions, {sum(map(len, by_project.values()))} newcomer questions over "
          f"{len(by_project)} projects; alpha {alpha:g} (the linear fit's)", flush=True)
    linear = rf.leave_one_project_out(mined, by_project, source, alpha, lam)
    print(f"linear (lambda {lam:g}): held out {linear['macro']} ({time.perf_counter() - t0:.0f}s)", flush=True)
    for leaves, rounds in TREES:
        trees = rf.held_out(mined, by_project, source, alpha,
                            lambda g, w, leaves=leaves, rounds=rounds: fit_trees(g, w, leaves, rounds))
        better = sum(trees[p] > linear[p] for p in by_project)
        print(f"lambdarank {leaves} leaves, {rounds} rounds: held out {trees['macro']} vs linear {linear['macro']} "
              f"(better on {better} of {len(by_project)} projects; {time.perf_counter() - t0:.0f}s)", flush=True)
    print("the best of several tree configurations, chosen by the figure it is compared on, is an optimistic "
          "estimate for the trees")


if __name__ == "__main__":
    main()
