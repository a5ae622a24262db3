"""The cross-encoder's score as one more feature of fused search's ranker, against the ranker alone.

The issue's second option for the reranker ("the rerank score joins the ranker as a feature"): each of fused
search's first ``RERANK_TOP`` candidates is scored ``fused + w * ce``, where ``fused`` is the committed log-linear
ranker's score and ``ce`` the cross-encoder's logit from the last checkpoint of ``lab/rerank/fit.py``; the other
candidates keep their places after them. ``w`` is the one new weight, chosen on a grid by span MRR on the fitted
projects' written questions (never the held-out ones), then the held-out questions are scored with it.

    .venv/bin/python lab/rerank/combine.py      # after lab/rerank/fit.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab.rerank.fit import CHECKPOINT, RERANK_TOP, Model, held_out, load_groups  # noqa: E402
from lab.rerank.metrics import _flags, fused_top  # noqa: E402

GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 1e3)  # 1e3: the cross-encoder alone


def written(g: dict) -> bool:
    return bool(g["source"].startswith("written:"))


def scored(model: Model, groups: list[dict]) -> list[tuple[list, np.ndarray]]:
    """Each group's fused top ``RERANK_TOP`` and the cross-encoder's logits for them."""
    out = []
    for g in groups:
        first = fused_top(g["candidates"], RERANK_TOP)
        ce = model.scores([(g["query"], g["candidates"][h.hit]["text"]) for h in first])
        out.append((first, ce))
    return out


def metrics(groups: list[dict], tops: list[tuple[list, np.ndarray]], w: float) -> dict[str, float]:
    sums = {"@1": 0.0, "@3": 0.0, "MRR": 0.0}
    for g, (first, ce) in zip(groups, tops, strict=True):
        key = [h.score + w * float(c) for h, c in zip(first, ce, strict=True)]
        order = [first[i] for i in sorted(range(len(first)), key=lambda i: (-key[i], first[i].path,
                                                                              first[i].start_line))][:10]
        flags = _flags(order, g["gold"])
        sums["@1"] += any(flags[:1])
        sums["@3"] += any(flags[:3])
        sums["MRR"] += next((1.0 / r for r, f in enumerate(flags, 1) if f), 0.0)
    n = max(len(groups), 1)
    return {k: round(v / n, 4) for k, v in sums.items()} | {"questions": len(groups)}


def main() -> None:
    import torch

    groups = load_groups()
    model = Model()
    state = torch.load(CHECKPOINT, weights_only=False)
    model.net.load_state_dict(state["model"])
    sets = {
        "fit: written (not held out)": [g for g in groups if written(g) and not held_out(g)],
        "held out: written": [g for g in groups if written(g) and held_out(g)],
        "held out: mined": [g for g in groups if not written(g) and held_out(g)],
    }
    tops = {name: scored(model, gs) for name, gs in sets.items()}
    fit_name = "fit: written (not held out)"
    table = {w: metrics(sets[fit_name], tops[fit_name], w) for w in GRID}
    best = max(GRID, key=lambda w: (table[w]["MRR"], -w))
    print(f"checkpoint step {state['step']}; w by span MRR on {fit_name} ({len(sets[fit_name])} questions):")
    for w in GRID:
        print(f"  w={w:<6} {table[w]}")
    print(f"chosen w={best}")
    report = {}
    for name in sets:
        report[name] = {"fused": metrics(sets[name], tops[name], 0.0),
                        "fused + w*ce": metrics(sets[name], tops[name], best),
                        "ce alone": metrics(sets[name], tops[name], 1e3)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
