"""The one ranking function of fused search: a log-linear model over named features of each candidate.

``score(candidate) = exp(w · f(candidate))``. The features are what the channels and the index know about a
candidate (each channel's reciprocal rank and raw score, its kind, whether its name or the path class fits the
query, whether its container or members were retrieved too); the weights ``w`` are fitted by
``lab/fit/ranker.py`` on training queries mined from other projects and shipped as a fitted file
(``sift.fitted.RANKER``). With ``w = HAND_WEIGHTS`` the score is exactly the composite score fusion used before
(RRF times multipliers), so a fitted model is compared against, and starts from, what it replaces.

Pure functions, no I/O except reading the weights file once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np

from sift import fitted
from sift.models import CODE_KINDS, ChunkKind, Hit
from sift.retrievers.paths import is_notes_path, is_stub_path, is_test_path

RRF_K = 60
CHANNEL_NAMES = ("bm25", "vector", "smart")

FEATURES: tuple[str, ...] = (
    "log_rrf",  # log of the Reciprocal Rank Fusion score over all rankings
    "rr_bm25", "rr_vector", "rr_smart",  # k / (k + rank) in that channel, 0 when it did not retrieve the candidate
    "bm25_rel",  # BM25 score / the query's best BM25 score
    "vector_cos",  # cosine similarity of the query and the chunk's embedding
    "code", "file", "doc",  # the chunk's kind: a definition, a whole file, a documentation section
    "definition",  # the query names an identifier that this chunk defines
    "name_match",  # otherwise, a query word is part of the chunk's symbol or heading
    "name_cover",  # share of the query's words that occur in the chunk's symbol or heading
    # where it lives (notes: release notes, PKG-INFO, CONTRIBUTING…; stub: a type stub, .pyi or .d.ts, or a type
    # declaration chunk: no implementation either way),
    "test_unasked", "notes_unasked", "stub",
    "test_asked", "notes_asked",  # when the query does not ask for that and when it does
    "private",  # a leading-underscore name: plumbing rather than the API a user calls
    "member",  # its container (the class of a method) was retrieved too
    "container",  # one of its members was retrieved too
    "doc_howto",  # a documentation section, for a question asking how to do something
    "code_where",  # a definition that implements (no type declaration), for a question asking where something is done
    "log_lines",  # log of how many lines the chunk has (fitted positive: a chunk of a line or two is rarely asked for)
)

# Query words that ask for test code or for release notes and project meta files, which otherwise rank lower.
TEST_WORDS = frozenset({"test", "tested", "testing", "spec", "fixture", "conftest", "unittest", "pytest", "assert"})
CHANGE_WORDS = frozenset({"change", "changed", "changelog", "version", "release", "released", "history",
                          "deprecate", "deprecated", "deprecation", "upgrade", "upgrading", "migrate", "migration",
                          "new", "added", "removed", "since"})
META_WORDS = frozenset({"contribute", "contributing", "contributor", "contributors", "author", "authors",
                        "maintainer", "maintainers", "metadata"})
NOTES_WORDS = CHANGE_WORDS | META_WORDS  # a query with one of these asks for notes

def _hand_weights() -> dict[str, float]:
    """The composite score this ranker replaced, as weights: the log of each multiplier it applied."""
    return {
        "log_rrf": 1.0,
        "code": math.log(1.25),  # a function/class chunk over plain text
        "file": math.log(0.85),  # a whole-file chunk is the least precise evidence
        "definition": math.log(1.6),  # the chunk defines an identifier the query names
        "name_match": math.log(1.3),  # a query word names the chunk
        "test_unasked": math.log(0.5),  # tests answer "how is X tested", not "how does X work"
        "notes_unasked": math.log(0.6),  # release notes mention everything, explain little
        "stub": math.log(0.8),  # a type stub or declaration describes code it does not implement
    }


HAND_WEIGHTS: Mapping[str, float] = _hand_weights()


@dataclass(frozen=True)
class RankerWeights:
    """One weight per feature name (missing names weigh 0), plus where they came from."""

    weights: Mapping[str, float]
    source: str = "hand"

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"ranker weights name unknown features {sorted(unknown)}; known: {', '.join(FEATURES)}")
        vec = np.array([float(self.weights.get(name, 0.0)) for name in FEATURES], dtype=np.float64)
        vec.flags.writeable = False
        object.__setattr__(self, "_vector", vec)  # scored once per query: built once per weights

    def vector(self) -> np.ndarray:
        """The weights in ``FEATURES`` order (read-only)."""
        return self._vector  # type: ignore[attr-defined, no-any-return]


def weights_in(doc: Mapping[str, Any] | None) -> RankerWeights:
    """The weights a ``ranker_weights.json`` document makes active: its fitted weights only when it says
    ``"use": "fitted"`` (the fitting script says so only when the fit ranks held-out train packages better than
    the hand weights), else the hand weights, so a committed fit that loses is kept without changing the ranking."""
    if not doc or doc.get("use") != "fitted":
        return RankerWeights(HAND_WEIGHTS)
    return RankerWeights(doc["weights"], source=str(doc.get("source", "fitted")))


@cache
def active_weights() -> RankerWeights:
    """The weights fused search uses, read once from the fitted ranker file (see ``weights_in``)."""
    return weights_in(fitted.load(fitted.RANKER) if fitted.ships(fitted.RANKER) else None)


@lru_cache(maxsize=65536)
def name_parts(symbol: str, kind: str) -> tuple[str, str, frozenset[str]]:
    """A chunk symbol's last component (lower case), its container's symbol (definitions only), its tokens."""
    from sift.tokenize import tokenize

    last = symbol.rsplit(".", 1)[-1].rsplit(" > ", 1)[-1].lower()
    # Only a definition's symbol is a dotted path of names; a heading or a file path may hold dots of its own.
    parent = symbol.rpartition(".")[0] if kind in CODE_KINDS or kind == "function" else ""
    return last, parent, frozenset(tokenize(symbol))


@lru_cache(maxsize=65536)
def _path_class(path: str) -> tuple[bool, bool, bool]:
    """(test code, release notes or project meta file, type stub) as ``sift.retrievers.paths`` classifies the path,
    in one lookup."""
    return is_test_path(path), is_notes_path(path), is_stub_path(path)


def rrf(rankings: Sequence[Sequence[str | int]], k: int = RRF_K) -> dict[str | int, float]:
    """Reciprocal Rank Fusion: ``score(d) = Σ_r 1 / (k + rank_r(d))``, ranks starting at 1.

    Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual rank learning
    methods", SIGIR 2009. A key repeated within one ranking counts at its best rank only.
    """
    scores: dict[str | int, float] = {}
    for ranking in rankings:
        seen: set[str | int] = set()
        for rank, key in enumerate(ranking, 1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def candidate_key(hit: Hit) -> str | int:
    """What makes two hits the same candidate: the chunk id, else the path and lines."""
    return hit.chunk_id if hit.chunk_id is not None else f"{hit.path}:{hit.start_line}-{hit.end_line}"


@dataclass(slots=True)
class Pool:
    """The fused candidates of one query: a representative Hit each, their RRF score over every ranking, and
    each channel's best rank and score for them."""

    keys: list[str | int]
    hits: list[Hit]
    rrf: dict[str | int, float]
    ranks: dict[str, dict[str | int, int]]
    scores: dict[str, dict[str | int, float]]
    channels: dict[str | int, set[str]]


def pool(rankings: Sequence[Sequence[Hit]], names: Sequence[str] | None = None) -> Pool:
    """Merge rankings (several may come from one channel, e.g. one per sub-query): the first Hit seen per key,
    RRF over all rankings, each channel's best rank and its score there, and the union of contributing channels.

    ``names`` are the channels of ``rankings`` (default: each ranking's first hit's channel).
    """
    keyed = [[candidate_key(h) for h in ranking] for ranking in rankings]
    keys: list[str | int] = []
    first: dict[str | int, Hit] = {}
    ranks: dict[str, dict[str | int, int]] = {}
    scores: dict[str, dict[str | int, float]] = {}
    channels: dict[str | int, set[str]] = {}
    for i, (ranking, ranking_keys) in enumerate(zip(rankings, keyed, strict=True)):
        name = names[i] if names is not None else (ranking[0].channel if ranking else "")
        r, s = ranks.setdefault(name, {}), scores.setdefault(name, {})
        for rank, (h, key) in enumerate(zip(ranking, ranking_keys, strict=True), 1):
            chans = h.channels or (h.channel,)
            if key in first:
                channels[key].update(chans)
            else:
                first[key] = h
                keys.append(key)
                channels[key] = set(chans)
            if rank < r.get(key, rank + 1):
                r[key] = rank
                s[key] = h.score
    return Pool(keys, [first[k] for k in keys], rrf(keyed), ranks, scores, channels)


def features(p: Pool, query_tokens: set[str], identifiers: set[str],
             forms: frozenset[str] = frozenset()) -> np.ndarray:
    """The feature matrix (candidates × ``FEATURES``) of a pool for a query's tokens, named identifiers and
    forms (``question.QuestionShape.forms``)."""
    howto, where = "howto" in forms, "where" in forms
    asks_test = bool(query_tokens & TEST_WORDS)
    asks_notes = bool(query_tokens & NOTES_WORDS)
    n_query = len(query_tokens)
    bm25 = p.scores.get("bm25", {})
    vector = p.scores.get("vector", {})
    best_bm25 = max(bm25.values(), default=0.0)
    r_bm25, r_vector, r_smart = (p.ranks.get(c, {}) for c in CHANNEL_NAMES)
    parts = [name_parts(h.symbol, h.kind) for h in p.hits]
    # Containment is within one file: a method's class is the definition named by its symbol's prefix there.
    defined = {(h.path, h.symbol) for h in p.hits if h.kind in CODE_KINDS or h.kind == "function"}
    parents = {(h.path, parent) for h, (_, parent, _) in zip(p.hits, parts, strict=True) if parent}
    rows = []
    for key, h, (last, parent, tokens) in zip(p.keys, p.hits, parts, strict=True):
        rb, rv, rs = r_bm25.get(key), r_vector.get(key), r_smart.get(key)
        definition = bool(identifiers) and last in identifiers
        shared = 0 if tokens.isdisjoint(query_tokens) else len(tokens & query_tokens)
        test, notes, stub = _path_class(h.path)
        code = h.kind in CODE_KINDS or h.kind == "function"  # a type declaration ("type") is code too,
        declares = h.kind == ChunkKind.TYPE  # but like a stub it describes what is implemented elsewhere
        stub = stub or declares
        rows.append((  # in FEATURES order
            math.log(p.rrf[key]),
            0.0 if rb is None else RRF_K / (RRF_K + rb),
            0.0 if rv is None else RRF_K / (RRF_K + rv),
            0.0 if rs is None else RRF_K / (RRF_K + rs),
            bm25[key] / best_bm25 if best_bm25 > 0 and key in bm25 else 0.0,
            vector.get(key, 0.0),
            code,
            h.kind == "file",
            h.kind == "doc",
            definition,
            not definition and shared > 0,
            shared / n_query if shared else 0.0,
            test and not asks_test,
            notes and not asks_notes,
            stub,
            test and asks_test,
            notes and asks_notes,
            last.startswith("_") and not last.endswith("__"),
            bool(parent) and (h.path, parent) in defined,
            (h.path, h.symbol) in parents,
            howto and h.kind == "doc",
            where and code and not declares,
            math.log1p(h.end_line - h.start_line),
        ))
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURES))


def scores(matrix: np.ndarray, weights: RankerWeights) -> np.ndarray:
    """``exp(w · f)`` per candidate: positive, so ratios between candidates stay meaningful."""
    return np.exp(np.clip(matrix @ weights.vector(), -700.0, 700.0))
