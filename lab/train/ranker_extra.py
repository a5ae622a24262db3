"""Would another feature of the pooled candidates help the ranker on projects it never saw?

    python lab/fit/ranker.py            # first: it pools the candidates and caches them
    python lab/train/ranker_extra.py      # then: reads that cache; every set in EXTRA_SETS against the base

Each candidate feature here is computed from what the pool already holds (a candidate's ``FEATURES`` row, its
span and kind, the other candidates of its question), so it needs no new search. The fit is the linear model of
``lab/fit/ranker.py`` with the extra columns free (starting at weight 0) and the same protocol: leave one
newcomer project out (dev and spent test sets; the test sets are never read), the mined questions plus the other
projects' questions with the newcomer share ``alpha`` and the penalty of the committed fit
(``lab/fit/diagnostics/ranker.json``).
It prints the base fit (no extra column; equal to the committed ``newcomer_held_out``) and each set beside it:
span MRR and span@1 averaged over projects, and on how many projects the set ranks better and worse.

What the features ask:

- interactions: does a channel's score mean more for one kind of chunk (a prose section's cosine against a
  definition's), or grow faster than linearly;
- per-kind gaps: a candidate's cosine or BM25 score below the best of its own kind in the pool, since prose and
  code sit at different cosine levels;
- file aggregates: how much of the pool its file holds, and whether it is its file's best candidate;
- the question's form: a documentation section for a question that names no identifier;
- agreement within the pool (these read the candidates' texts from the pool's database): a section that names a
  definition among the first candidates, a definition that such a section names, one that calls or is called by
  another of the first candidates;
- a crowded directory (read from the same database): how many files share the candidate's directory, since a
  package's many locale or data files of one shape can crowd out the code that uses them;
- what a chunk is (read from the same database): a file's module code (code outside every definition), which
  fills many of the first ten places and is rarely what a question asks about; a TypeScript declaration file
  (``.d.ts``), which declares what a JavaScript file beside it defines, as a ``.pyi`` stub does; how many other
  files among the candidates define the same name (a locale or plugin family's shared function);
- where a chunk sits and what it offers (``pool_columns.py``): a definition with a docstring or doc comment, how deep
  its file is (apart for code and for documentation), and a JavaScript definition its file exports or does not;
- a channel's own first place (or first three), which its ``rr_*`` column, nearly flat over the first ranks, cannot
  weigh apart; a channel's score for one form of question ("how do I …", "where is …") only;
- a neighbour of a first candidate: within 40 lines of one of the first three in the same file, where an answer
  often goes on in the next section or definition;
- how clear a channel's first candidate stands of its second, which may say how far to trust its ranking;
- a documentation section that shows a code example, for any question or for a "how do I …" one.

``--drop`` measures the opposite: the base fit with one of ``FEATURES`` at zero for every candidate, feature by
feature, i.e. what each committed feature adds held out.

Deterministic: fixed question and project order, L-BFGS from zero.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable, Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import ranker as fr  # noqa: E402  (lab/fit/ranker.py: the questions and the pooled candidates)
from lab.train import pool_columns as pc  # noqa: E402
from lab.train import ranker_fit as rf  # noqa: E402
from lab.train.ranker_fit import Group  # noqa: E402
from sift.graph.writer.terms import is_generic  # noqa: E402
from sift.retrievers.question import identifiers_in, question_shape  # noqa: E402
from sift.retrievers.ranker import FEATURES, HAND_WEIGHTS, RankerWeights  # noqa: E402
from sift.tokenize import tokenize  # noqa: E402

Spans = Sequence[tuple[str, int, int, str]]
Extra = Callable[["Pool"], np.ndarray]  # one column for a question's candidates
COL = {name: i for i, name in enumerate(FEATURES)}
HAND = RankerWeights(HAND_WEIGHTS).vector()


class Texts:
    """The pooled candidates' chunks (name, symbol, text) by knowledge base and span, read once from the database
    ``lab/fit/ranker.py`` pooled from (its current generation)."""

    def __init__(self, kb_of: Mapping[str, str]) -> None:
        self.kb_of = kb_of
        self._chunks: dict[tuple[str, str, int, int], tuple[str, str, str]] | None = None
        self._dirs: Counter[tuple[str, str]] | None = None
        self._module_code: set[tuple[str, str, int, int]] | None = None
        self._files: dict[tuple[str, str], str] | None = None

    def module_code(self, qid: str, spans: Spans) -> np.ndarray:
        """1 for a candidate that is a chunk of its file's module code (code outside every definition)."""
        if self._module_code is None:
            import sqlite3

            with sqlite3.connect(fr.OUT / "data" / "sift.db") as db:
                rows = db.execute("SELECT k.name, c.path, c.start_line, c.end_line FROM chunks c"
                                  " JOIN files f ON f.id = c.file_id JOIN knowledge_bases k ON k.id = c.kb_id"
                                  " WHERE f.gen_to IS NULL AND c.module_code").fetchall()
            self._module_code = {tuple(r) for r in rows}
        kb = self.kb_of[qid]
        return np.array([(kb, p, s, e) in self._module_code for p, s, e, _ in spans], dtype=np.float64)

    def directory_files(self, qid: str, spans: Spans) -> np.ndarray:
        """How many files the knowledge base holds in each candidate's directory."""
        if self._dirs is None:
            import sqlite3

            with sqlite3.connect(fr.OUT / "data" / "sift.db") as db:
                rows = db.execute("SELECT k.name, f.path FROM files f JOIN knowledge_bases k ON k.id = f.kb_id"
                                  " WHERE f.gen_to IS NULL").fetchall()
            self._dirs = Counter((kb, path.rpartition("/")[0]) for kb, path in rows)
        kb = self.kb_of[qid]
        return np.array([self._dirs[(kb, p.rpartition("/")[0])] for p, _, _, _ in spans], dtype=np.float64)

    def file_text(self, qid: str, path: str) -> str:
        """The text of a candidate's file: its chunks' texts (those ``of`` reads) in line order."""
        if self._files is None:
            self.of(qid, [])  # the chunks, read once
            assert self._chunks is not None
            parts: defaultdict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
            for (kb, file, start, _), (_, _, text) in self._chunks.items():
                parts[(kb, file)].append((start, text))
            self._files = {key: "\n".join(text for _, text in sorted(texts)) for key, texts in parts.items()}
        return self._files.get((self.kb_of[qid], path), "")

    def of(self, qid: str, spans: Spans) -> list[tuple[str, str, str]]:
        if self._chunks is None:
            import sqlite3

            with sqlite3.connect(fr.OUT / "data" / "sift.db") as db:
                rows = db.execute("SELECT k.name, c.path, c.start_line, c.end_line, c.name, c.symbol, c.text FROM chunks c"
                                  " JOIN files f ON f.id = c.file_id JOIN knowledge_bases k ON k.id = c.kb_id"
                                  " WHERE f.gen_to IS NULL").fetchall()
            self._chunks = {(kb, p, s, e): (name, symbol, text) for kb, p, s, e, name, symbol, text in rows}
        kb = self.kb_of[qid]
        return [self._chunks.get((kb, p, s, e), ("", "", "")) for p, s, e, _ in spans]


_WORDS: dict[tuple[str, str, str], frozenset[str]] = {}


def _words(chunk: tuple[str, str, str]) -> frozenset[str]:
    """The tokens of a chunk's name, symbol and text (cached: one chunk is in many pools)."""
    got = _WORDS.get(chunk)
    if got is None:
        got = _WORDS[chunk] = frozenset(tokenize(" ".join(chunk)))
    return got


def text_cover(p: Pool, topical: bool) -> np.ndarray:
    """The share of the question's distinct terms (with ``topical``, those not ``terms.is_generic``) that each
    candidate's name, symbol or text holds."""
    asked = list(dict.fromkeys(tokenize(p.query)))
    if topical:
        asked = [t for t in asked if not is_generic(t)] or asked
    if not asked:
        return np.zeros(len(p.spans))
    return np.array([len(_words(c).intersection(asked)) / len(asked) for c in p.texts()], dtype=np.float64)


class Pool:
    """One question's pooled candidates, as the extra features read them."""

    def __init__(self, g: Group, query: str, texts: Texts) -> None:
        self.x, self.spans, self.query, self.qid, self._texts = g.x, g.spans, query, g.qid, texts

    def texts(self) -> list[tuple[str, str, str]]:
        return self._texts.of(self.qid, self.spans)

    def directory_files(self) -> np.ndarray:
        return self._texts.directory_files(self.qid, self.spans)

    def module_code(self) -> np.ndarray:
        return self._texts.module_code(self.qid, self.spans)

    def js_exported(self) -> np.ndarray:
        return pc.js_exported(self.spans, self.texts(), lambda path: self._texts.file_text(self.qid, path))


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


def _within(channel: str, top: int) -> Extra:
    return lambda p: pc.channel_first(_col(p.x, f"rr_{channel}"), top)


def _in_form(column: str, form: str) -> Extra:
    """A column, for the questions of one ``QuestionShape.forms`` form only (0 for the others)."""
    return lambda p: _col(p.x, column) * (form in question_shape(p.query).forms)


def _file_count(p: Pool) -> np.ndarray:
    count = Counter(path for path, _, _, _ in p.spans)
    return np.log1p(np.array([count[path] for path, _, _, _ in p.spans], dtype=np.float64))


_AGREEMENT: dict[str, dict[str, np.ndarray]] = {}  # per question: its columns are computed together


def _agreeing(name: str) -> Extra:
    def column(p: Pool) -> np.ndarray:
        qid = p.qid
        if qid not in _AGREEMENT:
            _AGREEMENT[qid] = pc.agreement(p.spans, p.texts(), _col(p.x, "log_rrf"))
        return _AGREEMENT[qid][name]

    return column


EXTRAS: Mapping[str, Extra] = {
    "cos_doc": lambda p: _col(p.x, "vector_cos") * _col(p.x, "doc"),
    "cos_code": lambda p: _col(p.x, "vector_cos") * _col(p.x, "code"),
    "bm25_doc": lambda p: _col(p.x, "bm25_rel") * _col(p.x, "doc"),
    "bm25_code": lambda p: _col(p.x, "bm25_rel") * _col(p.x, "code"),
    "lines_doc": lambda p: _col(p.x, "log_lines") * _col(p.x, "doc"),
    "rr_vector_doc": lambda p: _col(p.x, "rr_vector") * _col(p.x, "doc"),
    "cos_squared": lambda p: _col(p.x, "vector_cos") ** 2,
    "bm25_squared": lambda p: _col(p.x, "bm25_rel") ** 2,
    "cos_bm25": lambda p: _col(p.x, "vector_cos") * _col(p.x, "bm25_rel"),
    "name_cover_code": lambda p: _col(p.x, "name_cover") * _col(p.x, "code"),
    "cos_gap_in_kind": lambda p: gap_within_kind(_col(p.x, "vector_cos"), p.spans),
    "bm25_gap_in_kind": lambda p: gap_within_kind(_col(p.x, "bm25_rel"), p.spans),
    "file_candidates": _file_count,
    "file_rrf": lambda p: np.log(per_file(np.exp(_col(p.x, "log_rrf")), p.spans, lambda a, b: a + b, 0.0)),
    "best_in_file": lambda p: (_col(p.x, "log_rrf") >= per_file(_col(p.x, "log_rrf"), p.spans, max, -np.inf))
    .astype(float),
    "file_best_cos": lambda p: per_file(_col(p.x, "vector_cos"), p.spans, max, 0.0),
    "doc_no_identifier": lambda p: _col(p.x, "doc") * (not identifiers_in(p.query)),
    "directory_files": lambda p: np.log1p(p.directory_files()),
    "directory_files_code": lambda p: np.log1p(p.directory_files()) * _col(p.x, "code"),
    "module_code": lambda p: p.module_code(),
    "symbol_files": lambda p: pc.symbol_files(p.spans, p.texts()),
    "declaration_file": lambda p: np.array([path.endswith((".d.ts", ".d.mts", ".d.cts")) for path, _, _, _ in p.spans],
                                           dtype=np.float64),
    "text_cover": lambda p: text_cover(p, topical=False),
    "topic_cover": lambda p: text_cover(p, topical=True),
    "documented": lambda p: pc.documented(p.spans, p.texts()),
    "path_depth": lambda p: pc.path_depth(p.spans),
    "path_depth_code": lambda p: pc.path_depth(p.spans) * _col(p.x, "code"),
    "path_depth_doc": lambda p: pc.path_depth(p.spans) * _col(p.x, "doc"),
    "js_exported": lambda p: p.js_exported(),
    "js_internal": lambda p: pc.js_code(p.spans) * (1.0 - p.js_exported()),
    **{f"{col}_{form}": _in_form(col, form) for col in ("vector_cos", "bm25_rel") for form in ("howto", "where")},
    "vector_margin_rr": lambda p: _col(p.x, "rr_vector") * pc.top_margin(_col(p.x, "vector_cos")),
    "bm25_margin_rr": lambda p: _col(p.x, "rr_bm25") * pc.top_margin(_col(p.x, "bm25_rel")),
    "vector_margin_cos": lambda p: _col(p.x, "vector_cos") * pc.top_margin(_col(p.x, "vector_cos")),
    "doc_example": lambda p: pc.shows_example(p.spans, p.texts()),
    "doc_example_howto": lambda p: pc.shows_example(p.spans, p.texts()) * ("howto" in question_shape(p.query).forms),
    "near_top": lambda p: pc.near_top(p.spans, _col(p.x, "log_rrf")),
    "near_top_doc": lambda p: pc.near_top(p.spans, _col(p.x, "log_rrf")) * _col(p.x, "doc"),
    **{f"{c}_first": _within(c, 1) for c in ("bm25", "vector", "smart")},
    **{f"{c}_top3": _within(c, 3) for c in ("bm25", "vector", "smart")},
    **{name: _agreeing(name)
       for name in ("doc_names_top_code", "code_named_by_top_doc", "calls_top_code", "called_by_top_code")},
}
EXTRA_SETS: tuple[tuple[str, ...], ...] = (
    ("cos_doc", "cos_code"), ("bm25_doc", "bm25_code"), ("lines_doc",), ("rr_vector_doc",),
    ("cos_squared", "bm25_squared"), ("cos_bm25",), ("name_cover_code",), ("cos_gap_in_kind",), ("bm25_gap_in_kind",),
    ("file_candidates",), ("file_rrf",), ("best_in_file",), ("file_best_cos",), ("doc_no_identifier",),
    ("doc_names_top_code",), ("code_named_by_top_doc",), ("calls_top_code", "called_by_top_code"),
    ("doc_names_top_code", "code_named_by_top_doc", "calls_top_code", "called_by_top_code"),
    ("directory_files",), ("directory_files_code",), ("text_cover",), ("topic_cover",), ("module_code",),
    ("declaration_file",), ("symbol_files",), ("module_code", "declaration_file", "symbol_files"),
    ("documented",), ("path_depth",), ("path_depth_code", "path_depth_doc"), ("js_exported",), ("js_internal",),
    ("doc_no_identifier", "path_depth_code", "path_depth_doc"),
    ("bm25_first", "vector_first", "smart_first"), ("bm25_top3", "vector_top3", "smart_top3"), ("vector_first",),
    ("vector_cos_howto", "bm25_rel_howto"), ("vector_cos_where", "bm25_rel_where"),
    ("vector_cos_howto", "bm25_rel_howto", "vector_cos_where", "bm25_rel_where"), ("near_top",), ("near_top_doc",),
    ("vector_margin_rr", "bm25_margin_rr"), ("vector_margin_cos",), ("doc_example",), ("doc_example_howto",),
)


def widened(g: Group, names: Sequence[str], query: str, texts: Texts) -> Group:
    """The group (of the question ``query``) with the ``names`` columns after its ``FEATURES`` ones."""
    pool = Pool(g, query, texts)
    cols = [EXTRAS[n](pool)[:, None] for n in names]
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
             alpha: float, lam: float, names: Sequence[str], query: Mapping[str, str],
             texts: Texts) -> dict[str, dict[str, float]]:
    """Each newcomer project's span MRR and span@1 under a fit without it, with the ``names`` columns."""
    wide_mined = [widened(g, names, query[g.qid], texts) for g in mined]
    wide = {p: [widened(g, names, query[g.qid], texts) for g in gs] for p, gs in by_project.items()}
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
    ap.add_argument("--drop", nargs="*", default=None, metavar="FEATURE",
                    help="instead, the base fit without each of these features (none named: every one)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    _, alpha, lam = fr.committed_choice()
    sets = EXTRA_SETS if args.only is None else tuple(tuple(s.split(",")) for s in args.only)
    unknown = sorted({n for s in sets for n in s} - set(EXTRAS))
    if unknown:
        raise SystemExit(f"unknown extra features {unknown}; known: {', '.join(EXTRAS)}")
    unknown = sorted(set(args.drop or ()) - set(FEATURES))
    if unknown:
        raise SystemExit(f"unknown ranker features {unknown}; known: {', '.join(FEATURES)}")
    train, newcomer, by_project, mined, source = fr.read_cached_pool()
    query = {q["id"]: q["query"] for q in train} | {q.id: q.query for qs in newcomer.values() for q in qs}
    texts = Texts({q["id"]: q["kb"] for q in train} | {q.id: q.kb for qs in newcomer.values() for q in qs})
    base = held_out(mined, by_project, source, alpha, lam, (), query, texts)
    print(f"base (alpha {alpha:g}, lambda {lam:g}): held out span MRR {_macro(base, 'spanMRR')}, span@1 "
          f"{_macro(base, 'span@1')} over {len(base)} projects ({time.perf_counter() - t0:.0f}s)", flush=True)
    if args.drop is not None:
        for name in args.drop or FEATURES:
            j = FEATURES.index(name)
            per = held_out(without(mined, j), {p: without(gs, j) for p, gs in by_project.items()}, source, alpha, lam,
                           (), query, texts)
            _report(f"- {name}", per, base, t0)
        return
    for names in sets:
        per = held_out(mined, by_project, source, alpha, lam, names, query, texts)
        _report(f"+ {', '.join(names)}", per, base, t0)


def without(groups: Sequence[Group], j: int) -> list[Group]:
    """The groups with feature column ``j`` at zero."""
    out = []
    for g in groups:
        x = g.x.copy()
        x[:, j] = 0.0
        out.append(Group(g.qid, x, g.y, g.spans, g.gold))
    return out


def _report(label: str, per: Mapping[str, Mapping[str, float]], base: Mapping[str, Mapping[str, float]],
            t0: float) -> None:
    better = sum(per[p]["spanMRR"] > base[p]["spanMRR"] for p in per)
    worse = sum(per[p]["spanMRR"] < base[p]["spanMRR"] for p in per)
    print(f"{label}: span MRR {_macro(per, 'spanMRR')}, span@1 {_macro(per, 'span@1')} "
          f"(better on {better}, worse on {worse} of {len(per)}; {time.perf_counter() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
