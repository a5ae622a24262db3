"""Would another feature of the pooled candidates help the ranker on projects it never saw?

    python scripts/fit_ranker.py            # first: it pools the candidates and caches them
    python bench/train/ranker_extra.py      # then: reads that cache; every set in EXTRA_SETS against the base

Each candidate feature here is computed from what the pool already holds (a candidate's ``FEATURES`` row, its
span and kind, the other candidates of its question), so it needs no new search. The fit is the linear model of
``scripts/fit_ranker.py`` with the extra columns free (starting at weight 0) and the same protocol: leave one
newcomer project out (dev and spent test sets; the test sets are never read), the mined questions plus the other
projects' questions with the newcomer share ``alpha`` and the penalty read from ``retrievers/ranker_weights.json``.
It prints the base fit (no extra column; equal to the committed ``newcomer_held_out``) and each set beside it:
span MRR and span@1 averaged over projects, and on how many projects the set ranks better and worse.

What the features ask:

- interactions: does a channel's score mean more for one kind of chunk (a prose section's cosine against a
  definition's), or grow faster than linearly;
- per-kind gaps: a candidate's cosine or BM25 score below the best of its own kind in the pool, since prose and
  code sit at different cosine levels;
- file aggregates: how much of the pool its file holds, and whether it is its file's best candidate;
- the question's form: a documentation section for a question that names no identifier.

Deterministic: fixed question and project order, L-BFGS from zero.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable, Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import fit_ranker as fr  # noqa: E402  (scripts/fit_ranker.py: the questions and the pooled candidates)

from bench.train import ranker_fit as rf  # noqa: E402
from bench.train.ranker_fit import Group  # noqa: E402
from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS, RankerWeights  # noqa: E402
from sift.retrievers.search import identifiers_in  # noqa: E402

Spans = Sequence[tuple[str, int, int, str]]
Extra = Callable[[np.ndarray, Spans, str], np.ndarray]  # (FEATURES rows, spans, the question)
COL = {name: i for i, name in enumerate(FEATURES)}
HAND = RankerWeights(HAND_WEIGHTS).vector()


def _col(x: np.ndarray, name: str) -> np.ndarray:
    return x[:, COL[name]]


def _kind_class(spans: Spans) -> np.ndarray:
    """0 for a documentation section, 1 for a whole file, 2 for a definition."""
    return np.array([0 if k == "doc" else 1 if k == "file" else 2 for _, _, _, k in spans])


def gap_within_kind(values: np.ndarray, spans: Spans) -> np.ndarray:
    """Each value minus the largest of its kind class in the pool (0 for the best of each class)."""
    kinds, out = _kind_class(spans), np.zeros(len(values))
    for k in (0, 1, 2):
        mask = kinds == k
        if mask.any():
            out[mask] = values[mask] - values[mask].max()
    return out


def per_file(values: np.ndarray, spans: Spans, combine: Callable[[float, float], float], start: float) -> np.ndarray:
    """``combine`` folded over the values of each candidate's file, given back per candidate."""
    acc: dict[str, float] = defaultdict(lambda: start)
    for (path, _, _, _), v in zip(spans, values, strict=True):
        acc[path] = combine(acc[path], float(v))
    return np.array([acc[path] for path, _, _, _ in spans])


def _file_count(x: np.ndarray, spans: Spans, query: str) -> np.ndarray:
    count = Counter(path for path, _, _, _ in spans)
    return np.log1p(np.array([count[path] for path, _, _, _ in spans], dtype=np.float64))


EXTRAS: Mapping[str, Extra] = {
    "cos_doc": lambda x, s, q: _col(x, "vector_cos") * _col(x, "doc"),
    "cos_code": lambda x, s, q: _col(x, "vector_cos") * _col(x, "code"),
    "bm25_doc": lambda x, s, q: _col(x, "bm25_rel") * _col(x, "doc"),
    "bm25_code": lambda x, s, q: _col(x, "bm25_rel") * _col(x, "code"),
    "lines_doc": lambda x, s, q: _col(x, "log_lines") * _col(x, "doc"),
    "rr_vector_doc": lambda x, s, q: _col(x, "rr_vector") * _col(x, "doc"),
    "cos_squared": lambda x, s, q: _col(x, "vector_cos") ** 2,
    "bm25_squared": lambda x, s, q: _col(x, "bm25_rel") ** 2,
    "cos_bm25": lambda x, s, q: _col(x, "vector_cos") * _col(x, "bm25_rel"),
    "name_cover_code": lambda x, s, q: _col(x, "name_cover") * _col(x, "code"),
    "cos_gap_in_kind": lambda x, s, q: gap_within_kind(_col(x, "vector_cos"), s),
    "bm25_gap_in_kind": lambda x, s, q: gap_within_kind(_col(x, "bm25_rel"), s),
    "file_candidates": _file_count,
    "file_rrf": lambda x, s, q: np.log(per_file(np.exp(_col(x, "log_rrf")), s, lambda a, b: a + b, 0.0)),
    "best_in_file": lambda x, s, q: (_col(x, "log_rrf") >= per_file(_col(x, "log_rrf"), s, max, -np.inf)).astype(float),
    "file_best_cos": lambda x, s, q: per_file(_col(x, "vector_cos"), s, max, 0.0),
    "doc_no_identifier": lambda x, s, q: _col(x, "doc") * (not identifiers_in(q)),
}
EXTRA_SETS: tuple[tuple[str, ...], ...] = (
    ("cos_doc", "cos_code"), ("bm25_doc", "bm25_code"), ("lines_doc",), ("rr_vector_doc",),
    ("cos_squared", "bm25_squared"), ("cos_bm25",), ("name_cover_code",), ("cos_gap_in_kind",), ("bm25_gap_in_kind",),
    ("file_candidates",), ("file_rrf",), ("best_in_file",), ("file_best_cos",), ("doc_no_identifier",),
)


def widened(g: Group, names: Sequence[str], query: str) -> Group:
    """The group (of the question ``query``) with the ``names`` columns after its ``FEATURES`` ones."""
    cols = [EXTRAS[n](g.x, g.spans, query)[:, None] for n in names]
    return Group(g.qid, np.hstack([g.x, *cols]) if cols else g.x, g.y, g.spans, g.gold)


def linear_maker(lam: float) -> Callable[[Sequence[Group], np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    """``ranker_fit.fit`` over widened matrices: the hand weights plus a penalised offset on the free features
    and on every extra column."""
    from scipy.optimize import minimize

    n = len(FEATURES)

    def make(groups: Sequence[Group], gw: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        x, y, starts = rf.stack(groups)
        offset = x[:, :n] @ HAND
        free = np.ascontiguousarray(np.hstack([x[:, :n][:, rf.FREE], x[:, n:]]))
        res = minimize(rf.loss, np.zeros(free.shape[1]), args=(free, offset, y, starts, lam, gw),
                       jac=True, method="L-BFGS-B", options=rf.SEARCH)
        d = res.x
        return lambda m: np.exp(np.clip(m[:, :n] @ HAND + np.hstack([m[:, :n][:, rf.FREE], m[:, n:]]) @ d,
                                        -700.0, 700.0))

    return make


def held_out(mined: Sequence[Group], by_project: Mapping[str, Sequence[Group]], source: Mapping[str, str],
             alpha: float, lam: float, names: Sequence[str], query: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """Each newcomer project's span MRR and span@1 under a fit without it, with the ``names`` columns."""
    wide_mined = [widened(g, names, query[g.qid]) for g in mined]
    wide = {p: [widened(g, names, query[g.qid]) for g in gs] for p, gs in by_project.items()}
    make = linear_maker(lam)
    out = {}
    for held in sorted(wide):
        others = [g for p, gs in sorted(wide.items()) if p != held for g in gs if g.y.any()]
        groups, gw = rf.mixed(wide_mined, others, source, alpha)
        out[held] = rf.scored_metrics(wide[held], make(groups, gw))
    return out


def _macro(per: Mapping[str, Mapping[str, float]], key: str) -> float:
    return round(float(np.mean([m[key] for m in per.values()])), 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=None, help="extra sets to measure, e.g. cos_doc,cos_code file_rrf")
    args = ap.parse_args()
    t0 = time.perf_counter()
    chosen = json.loads(fr.WEIGHTS.read_text(encoding="utf-8"))
    alpha, lam = float(chosen["alpha"]), float(chosen["lambda"])
    sets = EXTRA_SETS if args.only is None else tuple(tuple(s.split(",")) for s in args.only)
    unknown = sorted({n for s in sets for n in s} - set(EXTRAS))
    if unknown:
        raise SystemExit(f"unknown extra features {unknown}; known: {', '.join(EXTRAS)}")
    train, newcomer, by_project, mined, source = fr.read_cached_pool()
    query = {q["id"]: q["query"] for q in train} | {q.id: q.query for qs in newcomer.values() for q in qs}
    base = held_out(mined, by_project, source, alpha, lam, (), query)
    print(f"base (alpha {alpha:g}, lambda {lam:g}): held out span MRR {_macro(base, 'spanMRR')}, span@1 "
          f"{_macro(base, 'span@1')} over {len(base)} projects ({time.perf_counter() - t0:.0f}s)", flush=True)
    for names in sets:
        per = held_out(mined, by_project, source, alpha, lam, names, query)
        better = sum(per[p]["spanMRR"] > base[p]["spanMRR"] for p in per)
        worse = sum(per[p]["spanMRR"] < base[p]["spanMRR"] for p in per)
        print(f"+ {', '.join(names)}: span MRR {_macro(per, 'spanMRR')}, span@1 {_macro(per, 'span@1')} "
              f"(better on {better}, worse on {worse} of {len(per)}; {time.perf_counter() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
