"""Fit the answer confidence model on the dev and spent test sets and write the fitted model
(``sift/fitted/confidence_weights.json``).

Runs the graph through ``bench/answer.py`` over the dev sets (``eval/sets/*.jsonl``, ``eval/sets/dev2/``) and the
three spent test sets (``eval/sets/test/``, ``test2/``, ``test3/``: no longer a clean check, so used as more tuning
data; a few dozen answers are too few to place a threshold), never over the test sets (``eval/sets/test4/``, ``test5/``),
with a model that rates every answer alike, so that no answer is rewritten for doubt: each row is the answer as
the writer chose it, with its signals (``graph/writer/confidence.py``) and whether it was right
(``eval.metrics.answer_right``: the required phrases, and a citation overlapping the gold). Not-founds are left
out (they are ``low`` by rule). Then:

- a logistic regression of right on (margin, coverage, agreement, share): Newton's method with a small L2 penalty,
  deterministic;
- ``high`` starts at the lowest probability above which the answers were right at least ``HIGH_PRECISION``
  of the time (at least ``MIN_HIGH`` of them); ``medium`` at the lowest probability above which the answers
  below ``high`` were right at least ``MEDIUM_PRECISION`` of the time. Answers that lost their ``high`` to a
  degraded run count where the rule puts them.
- the calibration is printed (and stored) twice: as fitted, and held out, where each answer's probability comes
  from a model fitted without it (leave-one-out). With a few dozen answers the fitted figure flatters; the
  held-out one is what to expect on questions the fit never saw, so ``high`` must meet ``HIGH_PRECISION`` held
  out as well (``--as-fitted`` drops that condition; ``--held-out``, its earlier spelling, is the default now).
  When no cut meets it, ``high`` is 1.0: no answer is rated high.
- printed after the calibration (not stored): how often the best-scored answers were right if ``high`` covered
  10%, 20%, 30% or 40% of the answerable questions (``eval.metrics.right_at_coverage``), as fitted and held out:
  no threshold on these signals can do better, so it says how far they are from a ``high`` that is right
  ``HIGH_PRECISION`` of the time for 40% of the questions.

    nice -n 10 python lab/fit/confidence.py [--rows bench/out/confidence-rows.jsonl] [--reuse] [--as-fitted]

``--reuse`` fits again from the rows of an earlier run instead of asking the questions again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import answer as bench  # noqa: E402  (bench/answer.py)

from lab.fit.data_file import DIAGNOSTICS, FITTED  # noqa: E402
from sift import fitted  # noqa: E402
from sift.eval.metrics import calibration, right_at_coverage  # noqa: E402
from sift.graph.writer.confidence import FEATURES, ConfidenceModel  # noqa: E402

HIGH_PRECISION = 0.85
MEDIUM_PRECISION = 0.5
MIN_HIGH = 10
L2 = 0.1
ROWS = ROOT / "bench" / "out" / "confidence-rows.jsonl"
WEIGHTS = FITTED / fitted.CONFIDENCE  # what the product reads: the model and its thresholds
DIAGNOSIS = DIAGNOSTICS / "confidence.json"  # what it was fitted on and how it was calibrated
MODEL_KEYS = ("intercept", "weights", "thresholds")
# Every answer rated alike (probability 0.5, high from 0): nothing is rewritten for doubt while the rows are taken.
UNIFORM = ConfidenceModel(intercept=0.0, weights=(0.0,) * len(FEATURES), medium=0.0, high=0.0)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> np.ndarray:
    """Weights (intercept first) of an L2-penalised logistic regression, by Newton's method."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0  # the intercept is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-a @ w))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return w


def held_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's probability from a model fitted on all the other rows (leave-one-out)."""
    out = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        w = fit_logistic(x[keep], y[keep])
        out[i] = 1.0 / (1.0 + np.exp(-(w[0] + x[i] @ w[1:])))
    return out


def lowest_threshold(p: np.ndarray, y: np.ndarray, precision: float, minimum: int,
                     also: np.ndarray | None = None) -> float:
    """The lowest cut t (one of the probabilities) with at least ``minimum`` rows at p ≥ t, right ≥ ``precision``
    of the time (and so for the probabilities ``also``); 1.0 (nothing) when there is none."""
    def good(q: np.ndarray, t: float) -> bool:
        mask = q >= t
        return bool(mask.sum() >= minimum and y[mask].mean() >= precision)

    best = 1.0
    for t in sorted(set(np.round(p, 4).tolist()), reverse=True):
        if good(p, t) and (also is None or good(also, t)):
            best = t
    return float(best)


def fit(rows: list[dict[str, Any]], strict: bool = False) -> dict[str, Any]:
    """The weights file's content, fitted on the answered rows, with the calibration it gives (all rows, held out,
    and per split as fitted)."""
    answered = [r for r in rows if r["confidence"] != "low" and r["answer_right"] is not None]
    x = np.array([[r["signals"].get(f, 0.0) for f in FEATURES] for r in answered], dtype=float)
    y = np.array([r["answer_right"] for r in answered], dtype=float)
    w = fit_logistic(x, y)
    model = ConfidenceModel(intercept=float(w[0]), weights=tuple(float(v) for v in w[1:]), medium=0.0, high=1.0)
    p = np.array([model.probability(r["signals"]) for r in answered])
    capped = np.array([r["confidence"] != "high" for r in answered])  # degraded or partly removed: never high
    loo = held_out(x, y)
    high = lowest_threshold(np.where(capped, 0.0, p), y, HIGH_PRECISION, MIN_HIGH,
                            also=np.where(capped, 0.0, loo) if strict else None)
    below = p < high
    medium = lowest_threshold(p[below], y[below], MEDIUM_PRECISION, 1) if below.any() else high
    model = ConfidenceModel(model.intercept, model.weights, medium=min(medium, high), high=high)
    table = calibration((level(model, r), r["answer_right"], not r["negative"]) for r in rows)
    loo_of = {id(r): float(q) for r, q in zip(answered, loo, strict=True)}
    held = calibration((level(model, r, loo_of.get(id(r))), r["answer_right"], not r["negative"]) for r in rows)
    asked = sum(1 for r in rows if not r["negative"])
    reach = {name: right_at_coverage(((float(q), r["answer_right"]) for r, q in zip(answered, probs, strict=True)
                                      if not r["negative"]), asked)
             for name, probs in (("as fitted", p), ("held out", loo))}
    return {
        "intercept": round(model.intercept, 6),
        "weights": {f: round(v, 6) for f, v in zip(FEATURES, model.weights, strict=True)},
        "thresholds": {"medium": round(model.medium, 4), "high": round(model.high, 4)},
        "fitted_on": f"{', '.join(sorted({r['split'] for r in rows}))} sets: {len(answered)} answers, "
                     f"{len(rows)} questions",
        "calibration": _rounded(table),
        "calibration_held_out": _rounded(held),
        # Not stored: how right a "high" covering each share of the answerable questions could be at best.
        "right_at_coverage": reach,
        "calibration_by_split": {
            split: _rounded(calibration((level(model, r), r["answer_right"], not r["negative"])
                                        for r in rows if r["split"] == split))
            for split in sorted({r["split"] for r in rows})
        },
    }


def _rounded(table: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {k: {n: (round(v, 3) if isinstance(v, float) else v) for n, v in c.items()} for k, c in table.items()}


def level(model: ConfidenceModel, row: dict[str, Any], probability: float | None = None) -> str:
    """The level the fitted model (or ``probability``) gives a row, with the rules: not-found low, degraded at
    most medium."""
    if row["confidence"] == "low":
        return "low"
    got = model.level(model.probability(row["signals"]) if probability is None else probability)
    return "medium" if got == "high" and row["confidence"] != "high" else got


def main() -> int:
    """Take the rows (or reuse them), fit, write the weights file, print the calibration."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=Path, default=ROWS)
    p.add_argument("--reuse", action="store_true", help="fit from the rows of an earlier run")
    p.add_argument("--held-out", action="store_true", help="high must meet its precision held out as well (the default)")
    p.add_argument("--as-fitted", action="store_true", help="high need meet its precision only as fitted")
    args = p.parse_args()
    if args.reuse:
        rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    else:
        rows = asyncio.run(bench.collect(bench.FIT_SETS, confidence=UNIFORM))
        args.rows.parent.mkdir(parents=True, exist_ok=True)
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = fit(rows, strict=not args.as_fitted)
    reach = result.pop("right_at_coverage")
    WEIGHTS.write_text(json.dumps({k: result[k] for k in MODEL_KEYS}, indent=2) + "\n")
    DIAGNOSIS.write_text(json.dumps({k: v for k, v in result.items() if k not in MODEL_KEYS}, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("intercept", "weights", "thresholds", "fitted_on")}, indent=2))
    print("as fitted:")
    print(bench.calibration_table(result["calibration"]))
    print("held out (leave-one-out):")
    print(bench.calibration_table(result["calibration_held_out"]))
    for split, table in result["calibration_by_split"].items():
        print(f"{split}, as fitted:")
        print(bench.calibration_table(table))
    print(f"right, if the best-scored answers covering a share of the answerable questions were high "
          f"(high needs {HIGH_PRECISION:.0%} right at 40%):")
    for name, shares in reach.items():
        print(f"  {name:10}" + "".join(f"  {s:.0%}: {'-' if v is None else f'{v:.3f}'}" for s, v in shares.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
