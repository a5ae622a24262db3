"""Fit the ranker's weights on mined and newcomer questions, choose by held-out projects; write ranker_weights.json.

    python lab/fit/ranker.py                 # ingest the projects (once), fit, report, write the weights
    python lab/fit/ranker.py --ingest-only   # only ingest what is not ingested yet
    python lab/fit/ranker.py --check         # fit again and fail unless the committed weights come out equal
    python lab/fit/ranker.py --mined-only    # fit on the mined questions alone (the fit before newcomer ones)
    python lab/fit/ranker.py --cloze         # search the inverse-cloze copies instead (see below)
    python lab/fit/ranker.py --query-vectors F.npz  # each question's query vector given (report, write nothing)

Two kinds of questions are fitted (the model is ``lab/train/ranker_fit.py``):

- **Mined** questions from 31 pinned packages (``lab/train/make_pairs.py``, never an eval project), read from the
  test cache (``tests/.cache/train``): about 5,700, but each is its target's own first sentence with the name
  masked, not how a newcomer asks.
- **Newcomer** questions, written by people from the projects' files: the dev sets, the second dev sets
  (``eval/sets/dev2``) and the three spent test sets (``eval/sets/README.md``; a spent set checks nothing any more,
  so it is used like dev). About 480 with gold spans over eighteen projects. The test sets (``eval/sets/test4``,
  ``test5``) are never read here.

Each project is ingested into ``bench/out/ranker`` exactly as ``sift ingest`` does, and recorded in
``bench/out/ranker/ingested.json`` once its ingest has finished, so an interrupted run continues with the
projects not ingested yet (one cut off halfway is ingested again, incrementally).

A mined query is its target's own first sentence, so in a package as published keyword search finds the target
by that sentence alone. ``--cloze`` searches each package's inverse-cloze copy instead (``lab/train/cloze.py``,
where each sentence is blanked out of its target), which the query adapter is fitted on. For the ranker it was
measured and not kept: with the query adapter, the fit on the copies ranked dev at span MRR 0.572 against 0.587
for the fit on the packages as published (0.548 for the hand weights).

Every question is searched with all channels at the depth fused search uses; each pooled candidate gets the
ranker's features (``sift.retrievers.ranker.features``) and a label: it overlaps the question's gold span and
is not a whole-file chunk. The pooled matrices are cached in ``bench/out/ranker/pool-<key>.npz``, the key
hashing everything the pooling depends on (the questions, ``ingested.json``, ``FEATURES``, the sources of the
retrieval code and of the pooling here, and the query adapter), so a refit reads them in seconds; ``--no-cache``
pools again from the indexes.

The model is a conditional logit (a softmax over each question's candidates) whose linear score is the hand
weights' plus an offset: ``(w_hand + Δ) · f``, with an L2 penalty ``λ ||Δ||²``, i.e. a Gaussian prior centred on
the hand weights. Each kind of mined pair (``source``: docstring, doc section, test name, ...) weighs the same
within the mined questions' share of the loss; the newcomer questions share ``alpha`` of it.

The choice is made in two steps, each on held-out data:

1. the penalty for the mined questions alone, by 4-fold cross-validation over train packages (the span MRR
   averaged over the kinds of pair), as before;
2. ``alpha`` (``ALPHAS``; 0 is step 1's fit) and the penalty (``MIX_LAMBDAS``), by leave-one-project-out over the
   newcomer projects: each project's questions are ranked by a model fitted on the mined questions and the other
   projects' questions, and the score is the span MRR averaged over projects.

The final weights are fitted on the mined questions and all the newcomer ones with the chosen ``alpha`` and
penalty, so the file's figures on the newcomer splits (``fitted_on_newcomer``) are in-sample; the held-out
figure to expect on a new project is ``newcomer_held_out``.

Some features keep their hand weights (``lab.train.ranker_fit.FIXED``), because the mined pairs cannot teach
them:
- the name features: train questions are mined with the target's own name parts masked, so there a query word
  naming a candidate points *away* from the answer, while a newcomer's words that name a definition point *to* it;
- ``test_asked`` and ``notes_asked``: test code, release notes and project meta files (``PKG-INFO``…) are never a
  target of a mined pair, so the pairs would teach that they never answer even a question that asks for them.

The weights file says ``"use": "fitted"`` when the chosen fit's held-out score over the newcomer projects is above
the hand weights' on the same projects; otherwise fused search keeps the hand weights. Deterministic: fixed
question, fold and project order, one BLAS thread, L-BFGS from ``Δ = 0``. A fresh machine pools features that
differ from another's in their last digits (the encoder's float sums follow the CPU's BLAS kernels), so the
committed fit runs to the optimum itself and is rounded to ``ranker_fit.DECIMALS`` (why, with the measurements:
``ranker_fit.EXACT``), and a run from a clean cache is to reproduce the committed file bit for bit (``--check``
fails unless it does, and says how far the fit is from it).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import ast  # noqa: E402
import hashlib  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from itertools import zip_longest  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit.data_file import DIAGNOSTICS, FITTED  # noqa: E402
from lab.train import ranker_fit as rf  # noqa: E402
from lab.train.pool_cache import load_pool, save_pool  # noqa: E402
from lab.train.ranker_fit import Gold, Group  # noqa: E402
from sift import fitted  # noqa: E402
from sift.retrievers.ranker import (  # noqa: E402
    FEATURES,
    HAND_WEIGHTS,
    RankerWeights,
    features,
    pool,
)

OUT = ROOT / "bench" / "out" / "ranker"
DONE = OUT / "ingested.json"
WEIGHTS = FITTED / fitted.RANKER  # what fused search reads: which weights to use, and the fitted ones
DIAGNOSIS = DIAGNOSTICS / "ranker.json"  # the rest of the fit: its choices, grids and held-out figures
WEIGHT_KEYS = ("source", "use", "weights")
# Penalties on ||Δ||², largest first: 1e4 keeps every weight within ~1e-4 of the hand weights (the hand ranking).
LAMBDAS = (1e4, 100.0, 10.0, 1.0, 0.1, 0.01, 0.001, 1e-4, 1e-5)
# The newcomer questions' share of the loss, and the penalties, tried by leave-one-project-out (0: mined alone).
ALPHAS = (0.0, 0.25, 0.5, 0.75)
MIX_LAMBDAS = (0.1, 0.01, 0.001, 1e-4)
# Questions written by people: the dev sets and the spent test sets (eval/sets/README.md). Never the test sets.
NEWCOMER_SPLITS = ("dev", "dev2", "test", "test2", "test3")
# What the pooling depends on besides the questions and the indexes: the retrieval code and the core it uses.
POOL_CODE = ("retrievers", "sift")


def _group(searcher: Any, query: str, kb: str, gold: Gold, qid: str) -> Group:
    """Search ``query`` as fused search does and pool its channels' rankings into a labelled group."""
    from sift.models import Filters
    from sift.retrievers.question import question_shape
    from sift.tokenize import tokenize

    result = searcher.search(query, Filters(kb=kb), k=10)
    names = list(result.per_channel)
    p = pool([result.per_channel[n] for n in names], names)
    shape = question_shape(query)
    x = features(p, set(tokenize(query)), {i.lower() for i in shape.identifiers}, shape.forms)
    y = np.array([h.kind != "file" and rf.overlaps(h.path, h.start_line, h.end_line, gold) for h in p.hits], float)
    return Group(qid, x, y, [(h.path, h.start_line, h.end_line, h.kind) for h in p.hits], gold)


def _train_questions(packages: list[dict], cap: int | None) -> list[dict]:
    """Each package's questions in file order (the generator's own deterministic order); with ``cap``, at most
    that many per package, taken from its sources in turn so that every kind of pair stays represented."""
    from tests.sources import CACHE

    out = []
    for pkg in packages:
        path = CACHE / "train" / f"{pkg['name']}.jsonl"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run python lab/train/make_pairs.py first")
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if cap is not None and len(rows) > cap:
            by_source: dict[str, list[dict]] = {}
            for r in rows:
                by_source.setdefault(r["source"], []).append(r)
            turns = [r for batch in zip_longest(*by_source.values()) for r in batch if r is not None]
            rows = turns[:cap]
        out.extend(rows)
    return out


def _cloze(packages: list[dict], train: list[dict], fetch: Any) -> tuple[list[dict], list[tuple[str, str, Any]]]:
    """The train questions pointed at each package's inverse-cloze copy (``lab/train/cloze.py``), and the
    ``(kb, label, fetch)`` of those copies, made once under ``bench/out/ranker/cloze``."""
    from lab.train.cloze import cloze_copy

    out: list[dict] = []
    sources: list[tuple[str, str, Any]] = []
    for p in packages:
        label = f"{p['name']}-{p['version']}"
        kb, dest = f"cloze-{p['name']}", OUT / "cloze" / label
        mine = [q for q in train if q["kb"] == p["name"]]
        out.extend(cloze_copy(fetch(p), mine, dest, kb))
        sources.append((kb, f"{label} cloze", lambda dest=dest: dest))
    return out, sources


def _ingest_all(settings: Any, embedder: Any, sources: list[tuple[str, str, Any]]) -> None:
    """Ingest each ``(kb, label, fetch)`` not recorded in ``DONE`` under the same label; record each when done."""
    from sift.ingest.pipeline import ingest

    done: dict[str, dict] = json.loads(DONE.read_text(encoding="utf-8")) if DONE.exists() else {}
    todo = [(kb, label, fetch) for kb, label, fetch in sources if done.get(kb, {}).get("label") != label]
    print(f"ingest: {len(sources) - len(todo)} of {len(sources)} knowledge bases already ingested", flush=True)
    if todo and not settings.database_url:  # SQLite: the vectors the other benches embedded, copied first
        from bench.embedding_cache import seed_from_benches
        from sift.db import open_database

        open_database(settings).dispose()  # its tables, on a first run
        print(f"{seed_from_benches(settings.data_dir / 'sift.db')} cached embeddings before ingest", flush=True)
    for n, (kb, label, fetch) in enumerate(todo, 1):
        t0 = time.perf_counter()
        summary = ingest(settings, fetch(), kb, embedder=embedder)
        seconds = round(time.perf_counter() - t0, 1)
        index = summary.get("index") or {}
        done[kb] = {"label": label, "seconds": seconds, "files": summary["files"], "chunks": summary["chunks"],
                    "embedded": index.get("embedded"), "cached": index.get("cached")}
        tmp = DONE.with_suffix(".tmp")
        tmp.write_text(json.dumps(done, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(DONE)  # the record changes all at once: a run killed here re-ingests at most this package
        print(f"ingest [{n}/{len(todo)}] {label}: {seconds:.0f}s {done[kb]}", flush=True)


def layout_label() -> str:
    """The chunker's and the index layout's versions, in every recorded ingest label: a package is ingested again
    when either changes, as an upgrade would."""
    from sift.index.generation import MANIFEST_VERSION
    from sift.ingest.chunk import CHUNKING

    return f"chunking {CHUNKING}" + (f" index {MANIFEST_VERSION}" if MANIFEST_VERSION > 1 else "")


def _pool_key(train: list[dict], newcomer: dict[str, list[Any]], given: Path | None = None) -> str:
    """A hash of everything the pooled matrices depend on: questions, ingested indexes, features, code."""
    h = hashlib.sha256()
    for q in train:
        h.update(json.dumps(q, sort_keys=True).encode())
    for split, questions in newcomer.items():
        for q in questions:
            h.update(json.dumps([split, q.id, q.query, q.kb, _gold(q.gold_spans)]).encode())
    h.update(DONE.read_bytes() if DONE.exists() else b"")  # per package: its version, files, chunks
    h.update(json.dumps(FEATURES).encode())
    for folder in POOL_CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            # The syntax tree, not the text: an edited comment or a reflowed line does not pool again.
            h.update(str(path.relative_to(ROOT)).encode() + b"\0" + ast.dump(ast.parse(path.read_bytes())).encode())
    for fn in (_group, rf.overlaps):
        h.update(inspect.getsource(fn).encode())
    adapter = FITTED / fitted.QUERY_ADAPTER  # where the vector channel's queries look
    h.update(adapter.read_bytes() if adapter.exists() else b"")
    if given is not None:
        h.update(given.read_bytes())
    return h.hexdigest()[:16]


class GivenQueries:
    """An embedder whose query vector for a question is the one given for it (``--query-vectors``: an ``.npz`` of
    ``ids`` and ``vectors``), and anything else's as ``embedder`` gives it: how a query-side model other than
    the shipped one would rank, e.g. the LoRA's cross-fitted vectors (``lab/train/lora_query.py --oof``)."""

    def __init__(self, embedder: Any, path: Path, train: list[dict], newcomer: dict[str, list[Any]]) -> None:
        text = {q["id"]: q["query"] for q in train} | {q.id: q.query for qs in newcomer.values() for q in qs}
        with np.load(path) as z:
            self.vectors = {text[str(i)]: v for i, v in zip(z["ids"], z["vectors"], strict=True) if str(i) in text}
        print(f"query vectors given for {len(self.vectors)} of {len(text)} questions ({path})", flush=True)
        self.embedder = embedder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)

    def embed_query(self, text: str) -> np.ndarray:
        vector = self.vectors.get(text)
        return self.embedder.embed_query(text) if vector is None else vector


def _gold(spans: list) -> Gold:
    return [(s["path"], s["start_line"], s["end_line"]) if isinstance(s, dict) else (s.path, s.start_line, s.end_line)
            for s in spans]


def _pooled(train: list[dict], newcomer: dict[str, list[Any]], cache: Path | None, settings: Any, embedder: Any,
            t0: float) -> dict[str, list[Group]]:
    """The train groups and each newcomer split's: read from ``cache`` when it exists, else searched and written
    there."""
    if cache is not None and cache.exists():
        groups = load_pool(cache)
        print(f"pooled groups read from {cache.relative_to(ROOT)} ({time.perf_counter() - t0:.0f}s)", flush=True)
        return groups
    from sift.db import open_database
    from sift.retrievers.base import IndexCache
    from sift.retrievers.search import Searcher

    engine = open_database(settings)
    searcher = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), embedder)
    train_groups = []
    for n, q in enumerate(train, 1):
        train_groups.append(_group(searcher, q["query"], q["kb"], _gold(q["gold_spans"]), q["id"]))
        if n % 500 == 0:
            print(f"pooled {n}/{len(train)} train questions ({time.perf_counter() - t0:.0f}s)", flush=True)
    groups = {"train": train_groups}
    for split, questions in newcomer.items():
        groups[split] = [_group(searcher, q.query, q.kb, _gold(q.gold_spans), q.id) for q in questions]
    searcher.close()
    if cache is not None:
        save_pool(cache, groups)
        print(f"wrote {cache.relative_to(ROOT)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    return groups


def newcomer_questions() -> dict[str, list[Any]]:
    """The written questions with gold spans of each split in ``NEWCOMER_SPLITS`` (never the test sets)."""
    from bench.retrieval import SPLITS
    from sift.eval.format import load_questions

    return {split: [q for path in SPLITS[split] for q in load_questions(ROOT / path)[0] if q.gold_spans]
            for split in NEWCOMER_SPLITS}


def newcomer_by_project(groups: dict[str, list[Group]], newcomer: dict[str, list[Any]]) -> dict[str, list[Group]]:
    """The newcomer splits' pooled groups by project (knowledge base), for leave-one-project-out."""
    project_of = {q.id: q.kb for questions in newcomer.values() for q in questions}
    out: dict[str, list[Group]] = {}
    for split in NEWCOMER_SPLITS:
        for g in groups[split]:
            out.setdefault(project_of[g.qid], []).append(g)
    return out


def read_cached_pool() -> tuple[list[dict], dict[str, list[Any]], dict[str, list[Group]], list[Group],
                                dict[str, str]]:
    """For scripts that compare models on the pool this script caches: the train questions, the newcomer questions
    by split, the newcomer groups by project, the mined groups with a positive, and each mined question's kind of
    pair. Exits when the cache is missing."""
    from lab.train.make_pairs import load_packages

    newcomer = newcomer_questions()
    train = _train_questions(load_packages(), None)
    cache = OUT / f"pool-{_pool_key(train, newcomer)}.npz"
    if not cache.exists():
        raise SystemExit(f"{cache} is missing: run python lab/fit/ranker.py first (it pools and caches)")
    pooled = load_pool(cache)
    mined = [g for g in pooled["train"] if g.y.any()]
    return train, newcomer, newcomer_by_project(pooled, newcomer), mined, {q["id"]: q["source"] for q in train}


def texts(doc: dict[str, Any]) -> dict[Path, str]:
    """A fit's two files: the weights fused search reads, and the diagnosis the lab keeps."""
    weights = {k: doc[k] for k in WEIGHT_KEYS}
    rest = {k: v for k, v in doc.items() if k not in WEIGHT_KEYS}
    return {path: json.dumps(part, indent=2, sort_keys=True) + "\n"
            for path, part in ((WEIGHTS, weights), (DIAGNOSIS, rest))}


def committed() -> dict[str, Any]:
    """The committed fit: its weights file and its diagnosis, as one document (empty when either is missing)."""
    if not (WEIGHTS.exists() and DIAGNOSIS.exists()):
        return {}
    return json.loads(DIAGNOSIS.read_text(encoding="utf-8")) | json.loads(WEIGHTS.read_text(encoding="utf-8"))


def committed_choice() -> tuple[dict[str, Any], float, float]:
    """The committed fit and its chosen ``alpha`` and penalty, for the scripts that compare against it."""
    chosen = committed()
    return chosen, float(chosen["alpha"]), float(chosen["lambda"])


def _diff(doc: dict[str, Any]) -> str:
    """How a fit differs from the committed weights file: the largest weight difference and the other keys that
    differ (a refit on another CPU can differ in the last digits: its BLAS kernels sum in another order)."""
    old = committed()
    if not old:
        return f"{WEIGHTS.name} or {DIAGNOSIS.name} is missing"
    gap = max(abs(float(v) - float(old.get("weights", {}).get(k, 0.0))) for k, v in doc["weights"].items())
    keys = sorted(k for k in set(doc) | set(old) if k != "weights" and doc.get(k) != old.get(k))
    return f"largest weight difference {gap:.6g}; other keys that differ: {', '.join(keys) or 'none'}"


def main() -> None:
    """Ingest what is missing, pool (or read the cache), cross-validate each penalty on train, write or check."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail unless the fit reproduces the committed weights")
    ap.add_argument("--ingest-only", action="store_true", help="ingest the projects not ingested yet, then stop")
    ap.add_argument("--no-cache", action="store_true", help="pool again from the indexes, ignoring the cache")
    ap.add_argument("--cloze", action="store_true",
                    help="search the packages' inverse-cloze copies (query sentences blanked out of their targets)")
    ap.add_argument("--max-per-package", type=int, default=None, help="cap train questions per package (default: all)")
    ap.add_argument("--mined-only", action="store_true", help="fit on the mined questions alone (alpha 0)")
    ap.add_argument("--query-vectors", type=Path, default=None,
                    help="search each question with the vector given for it here; report, write nothing")
    args = ap.parse_args()

    from bench.retrieval import source_root
    from lab.train.make_pairs import fetch, load_packages
    from sift.config import Settings
    from sift.embed import LocalEmbedder

    t0 = time.perf_counter()
    packages = load_packages()
    newcomer = newcomer_questions()
    project_of = {q.id: q.kb for questions in newcomer.values() for q in questions}
    embedder = LocalEmbedder()
    settings = Settings(data_dir=OUT / "data")
    train = _train_questions(packages, args.max_per_package)
    # A package is ingested again when the chunker or the index layout changes (their versions are in the label),
    # as an upgrade would.
    layout = layout_label()
    if not args.cloze:
        sources = [(p["name"], f"{p['name']}-{p['version']} {layout}", lambda p=p: fetch(p)) for p in packages]
    else:
        train, sources = _cloze(packages, train, fetch)
        sources = [(kb, f"{label} {layout}", root) for kb, label, root in sources]
    sources += [(kb, f"{kb} {layout}", lambda kb=kb: source_root(kb)) for kb in sorted(set(project_of.values()))]
    _ingest_all(settings, embedder, sources)
    print(f"ingested {len(packages)} train packages and the dev and spent test projects "
          f"({time.perf_counter() - t0:.0f}s)", flush=True)
    if args.ingest_only:
        return
    digest = hashlib.sha256("\n".join(json.dumps(q, sort_keys=True) for q in train).encode()).hexdigest()
    cache = None if args.no_cache else OUT / f"pool-{_pool_key(train, newcomer, args.query_vectors)}.npz"
    if args.query_vectors is not None:
        embedder = GivenQueries(embedder, args.query_vectors, train, newcomer)
    groups = _pooled(train, newcomer, cache, settings, embedder, t0)
    usable = [g for g in groups["train"] if g.y.any()]
    by_project = newcomer_by_project(groups, newcomer)
    print(f"train: {len(train)} questions, {len(usable)} with a positive candidate "
          f"({sum(len(g.y) for g in usable)} candidates); newcomer: "
          + ", ".join(f"{split} {len(groups[split])}" for split in NEWCOMER_SPLITS)
          + f" questions ({time.perf_counter() - t0:.0f}s)", flush=True)

    package = {q["id"]: q["kb"] for q in train}
    source = {q["id"]: q["source"] for q in train}
    hand_w = RankerWeights(HAND_WEIGHTS)
    hand = rf.metrics(groups["dev"], hand_w)
    hand_cv = rf.by_source([(g, hand_w) for g in usable], source)
    print(f"hand weights: dev {hand}; train by kind of pair {hand_cv}", flush=True)
    # 1. The mined questions alone: the penalty by cross-validation over train packages.
    best = None
    grid, cv_grid = {}, {}
    for lam in LAMBDAS:  # largest first: a tie keeps the fit closer to the hand weights
        cv = rf.cross_validate(usable, lam, package, source)
        dev_m = rf.metrics(groups["dev"], RankerWeights(rf.fit(usable, lam, rf.balanced(usable, source))))
        grid[f"{lam:g}"], cv_grid[f"{lam:g}"] = dev_m, cv
        print(f"lambda {lam:g}: train held out {cv}; dev {dev_m} ({time.perf_counter() - t0:.0f}s)", flush=True)
        if best is None or cv["macro"] > best[1]["macro"]:
            best = (lam, cv)
    assert best is not None
    lam_mined, cv = best
    # 2. With the newcomer questions: their share and the penalty by leave-one-project-out.
    hand_lopo = {kb: rf.metrics(gs, hand_w)["spanMRR"] for kb, gs in sorted(by_project.items())}
    hand_lopo["macro"] = round(float(np.mean(list(hand_lopo.values()))), 4)
    mix = None
    lopo_grid = {}
    for alpha in ([0.0] if args.mined_only else ALPHAS):  # smallest share first: a tie keeps the mined fit
        for lam in ((lam_mined,) if alpha == 0 else MIX_LAMBDAS):
            lopo = rf.leave_one_project_out(usable, by_project, source, alpha, lam)
            lopo_grid[f"alpha {alpha:g} lambda {lam:g}"] = lopo
            print(f"alpha {alpha:g} lambda {lam:g}: newcomer projects held out {lopo} "
                  f"({time.perf_counter() - t0:.0f}s)", flush=True)
            if mix is None or lopo["macro"] > mix[2]["macro"]:
                mix = (alpha, lam, lopo)
    assert mix is not None
    alpha, lam, lopo = mix
    fit_groups, gw = rf.mixed(usable, [g for kb in sorted(by_project) for g in by_project[kb] if g.y.any()],
                              source, alpha)
    weights = rf.fit(fit_groups, lam, gw, exact=True)
    fitted = {split: rf.metrics(groups[split], RankerWeights(weights)) for split in NEWCOMER_SPLITS}
    use = "fitted" if lopo["macro"] > hand_lopo["macro"] else "hand"
    doc = {
        "source": "lab/fit/ranker.py",
        "model": "conditional logit over FEATURES: hand weights + offset; the mined questions with every kind of "
                 "pair weighted alike and the newcomer questions (dev and spent test sets) sharing the loss as "
                 "alpha says; alpha and the L2 penalty on the offset chosen by leave-one-project-out",
        "fixed": list(rf.FIXED),
        "use": use,
        "alpha": alpha, "lambda": lam, "lambda_mined": lam_mined,
        "train_questions": len(train), "train_usable": len(usable), "train_sha256": digest,
        "train_cv": cv, "train_hand": hand_cv, "train_cv_by_lambda": cv_grid,
        "newcomer_questions": {split: len(groups[split]) for split in NEWCOMER_SPLITS},
        # Macro figures only: the weights file sits in a product folder, which names no eval project.
        "newcomer_held_out": lopo["macro"], "newcomer_hand": hand_lopo["macro"],
        "newcomer_held_out_grid": {k: v["macro"] for k, v in lopo_grid.items()},
        "fitted_on_newcomer": fitted,
        "dev": fitted["dev"], "dev_hand": hand, "dev_mined_by_lambda": grid,
        "weights": weights,
    }
    print(f"chosen: alpha {alpha:g}, lambda {lam:g}; newcomer projects held out {lopo['macro']} vs hand "
          f"{hand_lopo['macro']} (mined alone: {lopo_grid[f'alpha 0 lambda {lam_mined:g}']['macro']}): fused search "
          f"uses the {use} weights")
    files = texts(doc)
    if args.query_vectors is not None:
        return
    if args.check:
        same = all(path.exists() and path.read_text(encoding="utf-8") == text for path, text in files.items())
        print("weights reproduced bit for bit" if same else f"weights differ from the committed file: {_diff(doc)}")
        raise SystemExit(0 if same else 1)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS.relative_to(ROOT)} (alpha {alpha:g}, lambda {lam:g}; {time.perf_counter() - t0:.0f}s in all)")


if __name__ == "__main__":
    main()
