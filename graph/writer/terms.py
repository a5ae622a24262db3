"""What a question asks about: its terms, and how much of it an evidence item shares (the kind of question it is
and what a list question asks for are its shape, ``sift.retrievers.question``).

Pure functions of the plan's question and identifiers, the corpus idf of its terms and the evidence text (and of
which words are generic in software text: the fitted file ``sift.fitted.GENERIC_WORDS``, derived from the train
packages). The writer ranks evidence by them (``selection.py``), abstains on them (``abstention.py``), and the
confidence and candidate modules reuse them, so each heuristic has this one owner.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from functools import cache

from sift import fitted
from sift.graph.models import Evidence, Plan
from sift.tokenize import prefix_variants, tokenize

CEILING_KEY = "\x00absent"  # term_idf stores the idf of a term no chunk contains under this key

# Words generic in software text, with how they spread over the train packages (normalised entropy over the
# packages, residual idf over their chunks): data written by lab/fit/generic_words.py, which says how.
# The (least entropy, most residual idf) at which a word counts as generic: the candidates, and the one
# lab/fit/abstention.py chose on the dev, dev2 and spent sets (None: no word is generic).
GENERIC_CUTS: tuple[tuple[float, float], ...] = ((0.7, 0.5), (0.6, 0.75), (0.5, 1.0))
GENERIC_CUT: tuple[float, float] | None = (0.5, 1.0)


@cache
def _generic_measures() -> dict[str, tuple[float, float]]:
    data = fitted.load(fitted.GENERIC_WORDS)
    return {w: (float(m[0]), float(m[1])) for w, m in data["words"].items()}


def is_generic(term: str, cut: tuple[float, float] | None = None) -> bool:
    """Whether a (stemmed) term is common phrasing in software text rather than a topic ("suppose", "figure",
    "therefore" against "kafka", "protobuf"): spread over many packages (normalised entropy at least ``cut[0]``) and
    thinly over their chunks (residual idf at most ``cut[1]``); ``cut`` defaults to ``GENERIC_CUT``."""
    cut = cut or GENERIC_CUT
    if cut is None:
        return False
    m = _generic_measures().get(term)
    return m is not None and m[0] >= cut[0] and m[1] <= cut[1]


# Words that frame a question ("what happens inside X", "how exactly…") rather than name what it is about.
FRAMING = frozenset(tokenize("happen happens happened inside exactly actually really basically"))


def query_tokens(plan: Plan, idf: Mapping[str, float] | None = None) -> list[str]:
    """The stemmed, stopword-free terms of the (standalone) question plus its identifiers, unique, without
    framing words. With ``idf``, a compound word no chunk contains ("GitHub") is left to its parts (git, hub),
    which is how a corpus that writes "Git Hub" can match it, and a generic word no chunk contains
    (``is_generic``: "suppose", "therefore") is left out: it is the asker's phrasing, which the project happens never
    to write, and weighing it as the rarest of words would leave no passage covering the question."""
    question = plan.standalone or " ".join(plan.key_terms)
    toks = [t for t in tokenize(question) if t not in FRAMING]
    for ident in plan.identifiers:
        toks.extend(tokenize(ident))
    toks = list(dict.fromkeys(toks))
    ceiling = idf.get(CEILING_KEY) if idf else None
    if idf and ceiling is not None:
        unseen = set()
        for word in re.findall(r"\w+", question):
            parts = tokenize(word)
            if len(parts) > 2 and idf.get(parts[0], 0.0) >= ceiling:  # the whole, then its parts
                unseen.add(parts[0])
        toks = [t for t in toks if t not in unseen and not (idf.get(t, 0.0) >= ceiling and is_generic(t))]
    return toks


def matched_terms(evidence: Evidence, tokens: Sequence[str]) -> list[str]:
    """The question terms found in the evidence's path, name, signature and text."""
    present = set(tokenize(f"{evidence.path} {evidence.name} {evidence.signature or ''} {evidence.text}"))
    return [t for t in tokens if has_term(present, t)]


def coverage(evidence: Evidence, tokens: Sequence[str], idf: Mapping[str, float]) -> float:
    """idf-weighted share of the question's terms found in the evidence's path, name and text (0..1)."""
    if not tokens:
        return 0.0
    return weighted_share(set(matched_terms(evidence, tokens)), tokens, idf)


def weighted_share(found: set[str], tokens: Sequence[str], idf: Mapping[str, float]) -> float:
    """The idf-weighted share of ``tokens`` that are in ``found`` (a term without an idf weighs 1)."""
    weights = {t: idf.get(t, 1.0) for t in tokens}
    total = sum(weights.values()) or 1.0
    return sum(w for t, w in weights.items() if t in found) / total


def has_term(words: set[str], term: str) -> bool:
    """The term, or the term without a derivational prefix ("recomputed" is met by "compute"), is among words."""
    return term in words or any(v in words for v in prefix_variants(term))


def stems_match(a: str, b: str) -> bool:
    """Two word forms of one stem: ``parse``/``parsers``, ``field``/``fields`` (a shared prefix all but at
    most two letters of the shorter word long)."""
    n = min(len(a), len(b))
    if n < 4:
        return a == b
    return len(os.path.commonprefix([a, b])) >= max(4, n - 2)


def named_identifiers(plan: Plan) -> set[str]:
    """The identifiers the question names, bare and lower-cased: ``Schema.Meta()`` → ``schema.meta``."""
    return {i.strip("`()@").lower() for i in plan.identifiers}
