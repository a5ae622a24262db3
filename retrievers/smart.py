"""Smart keyword search (seed 000): multi-level expansion of the query's terms, widening or narrowing by hits.

Levels, each adding to the one before:
  1. exact variants of each identifier and word (``AuthService`` → ``authservice``; ``tokens`` → ``token``),
  2. component words (``AuthService`` → ``auth``, ``service``),
  3. stems and a small code-synonym table (auth ↔ login ↔ credential ↔ token, config ↔ settings ↔ options …).
A term matches a chunk when one of its forms is in the chunk's *name* (symbol or heading; strong) or content
(from the BM25 postings; weak). The search starts at level 1 requiring every term, widens a level at a time
while there are fewer than ``k`` hits, then requires fewer terms; it narrows (requires more terms) when a
level returns far too many. The level and term requirement it stopped at are reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sift.tokenize import STOPWORDS, stem, tokenize

if TYPE_CHECKING:
    from sift.index.bm25 import BM25Index

SYNONYMS: tuple[frozenset[str], ...] = tuple(frozenset(g) for g in (
    {"auth", "authentication", "authenticate", "login", "logon", "signin", "credential", "token", "password"},
    {"authorization", "authorize", "permission", "role", "access", "acl"},
    {"config", "configuration", "configure", "setting", "option", "preference", "env"},
    {"delete", "remove", "drop", "destroy", "erase", "unlink"},
    {"create", "add", "insert", "new", "make", "build"},
    {"update", "modify", "change", "edit", "patch", "set"},
    {"get", "fetch", "retrieve", "read", "load", "find", "lookup"},
    {"error", "exception", "fail", "failure", "raise", "throw"},
    {"test", "spec", "check", "assert"},
    {"validate", "validation", "validator", "verify", "check"},
    {"serialize", "serialization", "dump", "encode", "marshal"},
    {"deserialize", "deserialization", "load", "decode", "unmarshal", "parse"},
    {"immutable", "frozen", "readonly", "const"},
    {"compare", "comparison", "equal", "eq", "order", "sort"},
    {"convert", "converter", "conversion", "transform", "cast", "coerce"},
    {"default", "fallback", "initial"},
    {"log", "logger", "logging", "trace"},
    {"cache", "memo", "memoize"},
    {"route", "endpoint", "url", "path", "handler", "view"},
    {"user", "account", "member", "principal"},
    {"start", "run", "launch", "serve", "main"},
    {"install", "setup", "installation"},
    {"hash", "hashing", "digest"},
))

LEVEL_WEIGHT = {1: 1.0, 2: 0.6, 3: 0.4}
NAME_WEIGHT, CONTENT_WEIGHT = 3.0, 1.0


@dataclass(frozen=True, slots=True)
class Term:
    """A query term with its forms per level."""

    text: str
    forms: dict[int, frozenset[str]]


def query_terms(query: str) -> list[Term]:
    """The query's identifiers and words (stopwords dropped), each with its level 1–3 forms."""
    terms: list[Term] = []
    seen: set[str] = set()
    for word in query.replace("`", " ").split():
        word = word.strip(".,;:!?()[]{}\"'<>")
        toks = tokenize(word)
        if not toks or word.lower() in STOPWORDS:
            continue
        whole = toks[0]
        if whole in seen:
            continue
        seen.add(whole)
        level1 = {whole, stem(whole)}
        parts = set(toks[1:])
        level2 = level1 | {p for p in parts if p not in STOPWORDS and len(p) > 1}
        level3 = set(level2)
        for form in list(level2):
            level3.add(stem(form))
            for group in SYNONYMS:
                if form in group or stem(form) in group:
                    level3 |= {stem(s) for s in group} | set(group)
        terms.append(Term(word, {1: frozenset(level1), 2: frozenset(level2), 3: frozenset(level3)}))
    return terms


@dataclass
class SmartResult:
    """Ranked chunk positions and how the search got there."""

    positions: list[int]
    scores: list[float]
    level: int
    required: int
    terms: int


class SmartMatcher:
    """Inverted indexes over chunk names and (via BM25 postings) content for one generation."""

    def __init__(self, symbols: np.ndarray, bm25_ids: np.ndarray, chunk_ids: np.ndarray, bm25: BM25Index) -> None:
        self.n = len(symbols)
        self.name_index: dict[str, np.ndarray] = {}
        buckets: dict[str, list[int]] = {}
        for pos, symbol in enumerate(symbols):
            for tok in set(tokenize(str(symbol))):
                buckets.setdefault(tok, []).append(pos)
        self.name_index = {t: np.array(v, dtype=np.int64) for t, v in buckets.items()}
        # BM25 documents are positions in bm25.ids; map them to chunk-table positions.
        order = np.searchsorted(chunk_ids, bm25_ids)
        order[order >= len(chunk_ids)] = 0
        self.bm25_to_pos = np.where(chunk_ids[order] == bm25_ids, order, -1)
        self.bm25 = bm25

    def _content(self, token: str) -> np.ndarray:
        if token not in self.bm25.vocab:
            return np.empty(0, dtype=np.int64)
        pos = self.bm25_to_pos[self.bm25.postings(token)]
        return pos[pos >= 0]

    def _term_scores(self, term: Term, level: int) -> np.ndarray:
        scores = np.zeros(self.n, dtype=np.float64)
        for lv in range(1, level + 1):
            new = term.forms[lv] - (term.forms[lv - 1] if lv > 1 else frozenset())
            w = LEVEL_WEIGHT[lv]
            for form in new:
                content = self._content(form)
                if len(content):
                    np.maximum.at(scores, content, CONTENT_WEIGHT * w)
                names = self.name_index.get(form)
                if names is not None:
                    np.maximum.at(scores, names, NAME_WEIGHT * w)
        return scores

    def search(self, query: str, k: int, allowed: np.ndarray | None = None, too_many: int = 50) -> SmartResult:
        """Widen level by level (then relax the AND) until ``k`` hits; narrow when hits exceed ``too_many × k``."""
        terms = query_terms(query)
        if not terms or self.n == 0:
            return SmartResult([], [], 0, 0, len(terms))
        n_terms = len(terms)
        per_level: dict[int, list[np.ndarray]] = {}
        result: tuple[np.ndarray, np.ndarray, int, int] | None = None
        plans = [(lv, n_terms) for lv in (1, 2, 3)]
        plans += [(3, r) for r in range(n_terms - 1, max(1, math.ceil(n_terms / 3)) - 1, -1)]
        for level, required in plans:
            if level not in per_level:
                per_level[level] = [self._term_scores(t, level) for t in terms]
            mat = np.vstack(per_level[level])
            matched = (mat > 0).sum(axis=0)
            ok = matched >= required
            if allowed is not None:
                ok &= allowed
            cand = np.flatnonzero(ok)
            total = mat.sum(axis=0)
            result = (cand, total[cand], level, required)
            if len(cand) >= k:
                break
        assert result is not None
        cand, scores, level, required = result
        if len(cand) > too_many * k and required < n_terms:
            # Far too many: require one more term if that still leaves k hits.
            mat = np.vstack(per_level[level])
            stricter = np.flatnonzero(((mat > 0).sum(axis=0) >= required + 1) & (allowed if allowed is not None else True))
            if len(stricter) >= k:
                cand, scores, required = stricter, mat.sum(axis=0)[stricter], required + 1
        order = np.lexsort((cand, -scores))[:k]
        return SmartResult([int(cand[i]) for i in order], [float(scores[i]) for i in order], level, required,
                           n_terms)
