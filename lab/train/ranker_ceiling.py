"""How far the ranker's features can go: each written-question project ranked by weights fitted on its own questions.

    python lab/fit/ranker.py              # first: it pools the candidates and caches them
    python lab/train/ranker_ceiling.py      # then: reads that cache

For each project of the written questions (the dev, second dev and spent test sets; the test sets are never read)
it prints, over that project's questions with a gold span:

- ``pooled``: the share whose pooled candidates hold a gold-overlapping chunk, what a perfect order of the pool
  would put first (span@1 at best);
- ``held out``: span MRR under a fit on the mined questions and the other projects' questions, the committed
  ``alpha`` and penalty (``ranker_fit.leave_one_project_out``, the figure ``lab/fit/ranker.py`` chooses by);
- ``committed``: span MRR under the committed weights, fitted on every project's questions (in-sample);
- ``own fit``: span MRR under weights fitted on this project's questions alone, every feature free (the name
  and path features too) and almost unpenalised: about the most a log-linear model over these features can give
  on these questions, since it is scored on the questions it was fitted to (the fit minimises the ranker's
  softmax loss, not the MRR itself, so this is an estimate of that ceiling, not a bound).

When ``own fit`` stays far below ``pooled``, the candidates are there but the features do not tell them apart:
what limits the ranking is what the features measure, not how the weights are fitted or how many questions they
are fitted on. Deterministic (L-BFGS-B from the hand weights, fixed data order).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import ranker as fr  # noqa: E402  (lab/fit/ranker.py: the questions and the pooled candidates)
from lab.train import ranker_fit as rf  # noqa: E402
from lab.train.ranker_fit import Group  # noqa: E402
from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS, RankerWeights  # noqa: E402

OWN_LAMBDA = 1e-6  # barely penalised: the fit may bend to its own questions, which is the point of a ceiling


def own_fit(groups: Sequence[Group], lam: float = OWN_LAMBDA) -> RankerWeights:
    """Weights fitted on ``groups`` alone, every feature free, each group weighing the same; starting from and
    penalised towards the hand weights."""
    from scipy.optimize import minimize

    fitted = [g for g in groups if g.y.any()]
    x, y, starts = rf.stack(fitted)
    hand = RankerWeights(HAND_WEIGHTS).vector()
    gw = np.full(len(fitted), 1.0 / len(fitted))
    res = minimize(rf.loss, np.zeros(x.shape[1]), args=(x, x @ hand, y, starts, lam, gw), jac=True,
                   method="L-BFGS-B", options=rf.SEARCH)
    return RankerWeights(dict(zip(FEATURES, (hand + res.x).tolist(), strict=True)))


def pooled_share(groups: Sequence[Group]) -> float:
    """The share of ``groups`` with a gold-overlapping candidate in the pool."""
    return float(np.mean([bool(g.y.any()) for g in groups])) if groups else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    t0 = time.perf_counter()
    chosen, alpha, lam = fr.committed_choice()
    committed = RankerWeights(chosen["weights"])
    _, _, by_project, mined, source = fr.read_cached_pool()
    held = rf.leave_one_project_out(mined, by_project, source, alpha, lam)
    print(f"{len(by_project)} projects, {sum(map(len, by_project.values()))} written questions; alpha {alpha:g}, "
          f"lambda {lam:g} ({time.perf_counter() - t0:.0f}s)")
    print(f"{'project':<14} {'questions':>9} {'pooled':>7} {'held out':>9} {'committed':>10} {'own fit':>8}")
    rows = []
    for project in sorted(by_project):
        groups = by_project[project]
        own = own_fit(groups)
        row = (len(groups), pooled_share(groups), held[project],
               rf.metrics(groups, committed)["spanMRR"], rf.metrics(groups, own)["spanMRR"])
        rows.append(row)
        print(f"{project:<14} {row[0]:>9} {row[1]:>7.3f} {row[2]:>9.4f} {row[3]:>10.4f} {row[4]:>8.4f}")
    means = np.mean(np.array([r[1:] for r in rows]), axis=0)
    print(f"{'mean':<14} {sum(r[0] for r in rows):>9} {means[0]:>7.3f} {means[1]:>9.4f} {means[2]:>10.4f} "
          f"{means[3]:>8.4f}  ({time.perf_counter() - t0:.0f}s)")


if __name__ == "__main__":
    main()
