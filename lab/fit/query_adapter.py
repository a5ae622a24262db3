"""Fit the local model's linear query adapter on the train questions; write ``sift/fitted/query_adapter.npz``.

    python lab/fit/query_adapter.py           # ingest what is missing (as fit_ranker does), fit, report, write
    python lab/fit/query_adapter.py --check   # fit again and fail unless the committed matrix comes out equal

The train questions and knowledge bases are the ranker's (``lab/fit/ranker.py``): pairs mined from 31 pinned
packages, searched in each package's inverse-cloze copy (``lab/train/cloze.py``), where a query's own sentence
is blanked out of its target. Each question's positives are the non-file chunks overlapping its gold span; its
negatives are every other chunk of its package.

The model: ``A = I + Δ`` applied to the query vector only (``sift.query_adapter``). The loss is the softmax
cross-entropy of a question's positives among all chunks of its package under ``SCALE · (A q) · d`` (documents
as indexed), every kind of pair weighing the same, plus ``λ ||Δ||²``, which keeps ``A`` near the identity.
λ is chosen by 4-fold cross-validation over packages (the ranker's folds): fit on three folds' packages, rank
the held-out packages' chunks by the adapted query, and score the vector channel's span MRR (top 10) averaged
over the kinds of pair. The dev sets (attrs, marshmallow, click) are reported for every λ beside the bare model;
the frozen test sets are never read. The adapter ships only if its held-out score beats the bare model's.

Deterministic: one BLAS thread, L-BFGS from ``Δ = 0`` for a fixed number of iterations, float32 output; a run
reproduces the committed matrix bit for bit (``--check``). About 10 minutes on 2 cores once the packages are
ingested.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # sums in one fixed order: the fit reproduces bit for bit
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import ranker  # noqa: E402  (lab/fit/ranker.py: the questions, the cloze copies, the ingest)
from lab.fit.data_file import DIAGNOSTICS, FITTED  # noqa: E402
from sift import fitted  # noqa: E402

OUT_FILE = FITTED / fitted.QUERY_ADAPTER  # the matrix and the model it is for
DIAGNOSIS = DIAGNOSTICS / "query_adapter.json"  # how its penalty was chosen, with the held-out figures
LAMBDAS = (1.0, 0.1, 0.03, 0.01)
SCALE = 20.0  # the softmax temperature of sentence-transformers' in-batch ranking loss for this model
ITERATIONS = 60
TOP = 10  # the MRR cut: the vector channel's own depth in fused search is larger, the top is what counts


@dataclass
class Corpus:
    """One knowledge base's chunk vectors (as indexed) and spans."""

    vectors: np.ndarray
    spans: list[tuple[str, int, int, str]]  # path, start line, end line, kind


@dataclass
class Question:
    """A question's vector, package, kind of pair, and which chunks of its package are positives."""

    qid: str
    kb: str
    source: str
    vector: np.ndarray
    positive: np.ndarray


def _corpus(db: sqlite3.Connection, index_root: Path, kb: str) -> Corpus:
    """The serving generation's vectors of ``kb`` (every chunk kind) and their spans."""
    from sift.catalog import generation_dir
    from sift.index.generation import load_indexes

    kb_id, gen = db.execute("SELECT id, current_generation FROM knowledge_bases WHERE name = ?", (kb,)).fetchone()
    loaded = load_indexes(generation_dir(index_root, kb_id, gen))
    ids, vectors = [], []
    for kind in sorted(loaded.vectors):
        index = loaded.vectors[kind]
        if len(index):
            ids.append(index.ids)
            vectors.append(index.vectors_for(index.ids))
    all_ids = [int(i) for i in np.concatenate(ids)]
    spans: dict[int, tuple[str, int, int, str]] = {}
    for at in range(0, len(all_ids), 900):
        part = all_ids[at : at + 900]
        rows = db.execute(f"SELECT id, path, start_line, end_line, kind FROM chunks WHERE id IN "
                          f"({','.join('?' * len(part))})", part)
        spans.update({r[0]: (r[1], r[2], r[3], r[4]) for r in rows})
    return Corpus(np.vstack(vectors).astype(np.float32), [spans[i] for i in all_ids])


def _questions(rows: list[tuple[str, str, str, str, list]], corpora: dict[str, Corpus],
               embedder: Any) -> list[Question]:
    """Embedded questions (bare model) with their positives; questions with none are left out."""
    vectors = embedder.embed_queries([r[1] for r in rows])
    out = []
    for (qid, _, kb, source, gold), vec in zip(rows, vectors, strict=True):
        pos = np.array([k != "file" and ranker.rf.overlaps(p, s, e, gold) for p, s, e, k in corpora[kb].spans])
        if pos.any():
            out.append(Question(qid, kb, source, vec.astype(np.float32), pos))
    return out


def _loss(x: np.ndarray, groups: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
          lam: float) -> tuple[float, np.ndarray]:
    """Weighted softmax cross-entropy of the positives over each package's chunks, plus λ ||Δ||², and its
    gradient in Δ. ``groups``: (query vectors, chunk vectors, positives, weights) per package."""
    dim = int(np.sqrt(x.size))
    a = np.eye(dim, dtype=np.float32) + x.reshape(dim, dim).astype(np.float32)
    total, grad = 0.0, np.zeros((dim, dim), dtype=np.float64)
    for q, d, pos, w in groups:
        z = SCALE * (q @ a.T) @ d.T
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        zs, zp = e.sum(axis=1), (e * pos).sum(axis=1)
        total += float(np.sum(w * (np.log(zs) - np.log(zp))))
        g = (e / zs[:, None] - e * pos / zp[:, None]) * (w * SCALE)[:, None]
        grad += (g @ d).T @ q
    return total + lam * float(x @ x), grad.ravel() + 2 * lam * x


def source_weights(questions: list[Question], total: float = 1.0) -> dict[str, float]:
    """Each kind of pair's weight per question, so that every kind weighs the same and all weigh ``total``."""
    counts: dict[str, int] = {}
    for q in questions:
        counts[q.source] = counts.get(q.source, 0) + 1
    return {source: total / (len(counts) * n) for source, n in counts.items()}


def package_folds(packages: list[str]) -> list[set[str]]:
    """The cross-validation folds: every ``FOLDS``-th package name, sorted (the ranker's folds)."""
    names = sorted(set(packages))
    return [set(names[i :: ranker.rf.FOLDS]) for i in range(ranker.rf.FOLDS)]


def fit(questions: list[Question], corpora: dict[str, Corpus], lam: float) -> np.ndarray:
    """``A = I + Δ`` minimising the penalised loss (L-BFGS from Δ = 0, ``ITERATIONS`` steps)."""
    from scipy.optimize import minimize

    weight = source_weights(questions)
    groups = []
    for kb in sorted({q.kb for q in questions}):
        mine = [q for q in questions if q.kb == kb]
        groups.append((np.stack([q.vector for q in mine]), corpora[kb].vectors,
                       np.stack([q.positive for q in mine]).astype(np.float32),
                       np.array([weight[q.source] for q in mine], dtype=np.float32)))
    dim = questions[0].vector.size
    res = minimize(_loss, np.zeros(dim * dim), args=(groups, lam), jac=True, method="L-BFGS-B",
                   options={"maxiter": ITERATIONS})
    return (np.eye(dim) + res.x.reshape(dim, dim)).astype(np.float32)


def reciprocal_ranks(questions: list[Question], corpora: dict[str, Corpus], a: np.ndarray | None) -> list[float]:
    """Per question, 1 / the rank of its first positive chunk by the (adapted) query vector; 0 below ``TOP``."""
    return ranks_of(questions, corpora, [q.vector if a is None else a @ q.vector for q in questions])


def ranks_of(questions: list[Question], corpora: dict[str, Corpus], vectors: Any) -> list[float]:
    """``reciprocal_ranks`` for query vectors given in the questions' order (any adapter's)."""
    out = []
    for q, vec in zip(questions, vectors, strict=True):
        scores = corpora[q.kb].vectors @ vec
        rank = 1 + int(np.sum(scores > scores[q.positive].max()))
        out.append(1.0 / rank if rank <= TOP else 0.0)
    return out


def by_kind(questions: list[Question], ranks: list[float]) -> dict[str, float]:
    """Span MRR per kind of pair, and their mean as ``"macro"``."""
    per: dict[str, list[float]] = {}
    for q, r in zip(questions, ranks, strict=True):
        per.setdefault(q.source, []).append(r)
    out = {s: round(float(np.mean(v)), 4) for s, v in sorted(per.items())}
    return out | {"macro": round(float(np.mean(list(out.values()))), 4)}


def span_mrr(questions: list[Question], corpora: dict[str, Corpus], a: np.ndarray | None) -> dict[str, float]:
    """Span MRR (top ``TOP``) of the vector channel alone, per kind of pair and as their mean (``"macro"``)."""
    return by_kind(questions, reciprocal_ranks(questions, corpora, a))


def main() -> None:
    """Ingest what is missing, embed the questions, cross-validate each λ, write or check the adapter."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail unless the fit reproduces the committed matrix")
    args = ap.parse_args()

    from bench.retrieval import SPLITS, source_root
    from lab.train.make_pairs import fetch, load_packages
    from sift.config import Settings
    from sift.embed import LocalEmbedder
    from sift.eval.format import load_questions

    t0 = time.perf_counter()
    packages = load_packages()
    train, sources = ranker._cloze(packages, ranker._train_questions(packages, None), fetch)
    dev = [q for path in SPLITS["dev"] for q in load_questions(ROOT / path)[0] if q.gold_spans]
    embedder = LocalEmbedder(query_adapter=False)
    settings = Settings(data_dir=ranker.OUT / "data")
    layout = ranker.layout_label()  # the ranker's labels: a project both fits search is ingested once
    sources = [(kb, f"{label} {layout}", root) for kb, label, root in sources]
    sources += [(kb, f"{kb} {layout}", lambda kb=kb: source_root(kb)) for kb in sorted({q.kb for q in dev})]
    ranker._ingest_all(settings, embedder, sources)
    db = sqlite3.connect(settings.data_dir / "sift.db")
    kbs = sorted({q["kb"] for q in train} | {q.kb for q in dev})
    corpora = {kb: _corpus(db, settings.resolved_index_dir(), kb) for kb in kbs}
    rows = [(q["id"], q["query"], q["kb"], q["source"], [(g["path"], g["start_line"], g["end_line"])
                                                         for g in q["gold_spans"]]) for q in train]
    train_q = _questions(rows, corpora, embedder)
    dev_q = _questions([(q.id, q.query, q.kb, "dev", [(g.path, g.start_line, g.end_line) for g in q.gold_spans])
                        for q in dev], corpora, embedder)
    print(f"{len(train_q)} train questions with a positive, {len(dev_q)} dev ({time.perf_counter() - t0:.0f}s)",
          flush=True)
    package = {q.qid: q.kb for q in train_q}
    folds = package_folds(list(package.values()))
    bare_cv, bare_dev = span_mrr(train_q, corpora, None), span_mrr(dev_q, corpora, None)["macro"]
    print(f"bare model: train {bare_cv}; dev {bare_dev}", flush=True)
    best: tuple[float, dict[str, float]] | None = None
    grid: dict[str, dict[str, Any]] = {}
    for lam in LAMBDAS:  # largest first: a tie keeps the adapter closer to the identity
        held_out: list[Question] = []
        ranks: list[float] = []
        for held in folds:
            a = fit([q for q in train_q if q.kb not in held], corpora, lam)
            mine = [q for q in train_q if q.kb in held]
            held_out.extend(mine)
            ranks.extend(reciprocal_ranks(mine, corpora, a))
        cv = by_kind(held_out, ranks)
        dev_m = span_mrr(dev_q, corpora, fit(train_q, corpora, lam))["macro"]
        grid[f"{lam:g}"] = {"train_cv": cv, "dev": dev_m}
        print(f"lambda {lam:g}: train held out {cv}; dev {dev_m} ({time.perf_counter() - t0:.0f}s)", flush=True)
        if best is None or cv["macro"] > best[1]["macro"]:
            best = (lam, cv)
    assert best is not None
    lam, cv = best
    if cv["macro"] <= bare_cv["macro"]:
        raise SystemExit(f"no adapter beats the bare model held out ({cv['macro']} vs {bare_cv['macro']})")
    matrix = fit(train_q, corpora, lam)
    meta = {"source": "lab/fit/query_adapter.py", "lambda": lam, "scale": SCALE, "iterations": ITERATIONS,
            "train_questions": len(train_q), "train_cv": cv, "train_bare": bare_cv,
            "dev": grid[f"{lam:g}"]["dev"], "dev_bare": bare_dev, "by_lambda": grid}
    buf = io.BytesIO()
    np.savez_compressed(buf, matrix=matrix, model_id=np.array(embedder.model_id))
    print(f"chosen: lambda {lam:g}, train held out {cv['macro']} vs bare {bare_cv['macro']}, dev "
          f"{meta['dev']} vs bare {bare_dev}")
    if args.check:
        with np.load(OUT_FILE) as z:
            same = np.array_equal(z["matrix"], matrix) and str(z["model_id"]) == embedder.model_id
        print("adapter reproduced bit for bit" if same else "adapter differs from the committed file")
        raise SystemExit(0 if same else 1)
    OUT_FILE.write_bytes(buf.getvalue())
    DIAGNOSIS.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT_FILE.relative_to(ROOT)} ({OUT_FILE.stat().st_size // 1024} KiB; "
          f"{time.perf_counter() - t0:.0f}s in all)")


if __name__ == "__main__":
    main()
