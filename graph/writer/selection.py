"""Which evidence the extractive writer cites, in the fused ranker's order.

``rank_evidence`` is the order fused search gave (``sift.retrievers.ranker``: one notion of the best evidence for
search and answers). ``select_evidence`` cites the first item that shares enough of the question with its further
parts; a list question
enumerates the module named after what it asks for (``parsers.py`` for "which parsers"), or the family of classes
named after it (``JsonExporter``, ``CsvExporter`` … for "which exporters"), or cites several sibling
definitions (or the subclasses of the base class it found).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sift.graph.models import SEARCH_CHANNELS, Evidence, Plan
from sift.graph.writer.code_quotes import signature
from sift.graph.writer.doc_quotes import first_sentence
from sift.graph.writer.terms import (
    coverage,
    named_identifiers,
    query_tokens,
    stems_match,
)
from sift.models import CODE_KINDS
from sift.retrievers.paths import is_stub_path, is_test_path
from sift.tokenize import tokenize, word_parts

MIN_COVERAGE = 0.3  # below this share of the question's (idf-weighted) terms, evidence does not answer it
# The floor instead when every search channel ranked the fused first item among its first few: a newcomer's words
# that the project never uses lower the coverage of the right place too, and three channels agreeing on it is
# evidence that words alone do not give. Chosen by lab/fit/abstention.py with
# ABSENT_TERMS and abstention.MEANING_FLOOR on the dev, dev2 and spent test sets; MIN_COVERAGE (0.3) switches it off.
AGREED_COVERAGE = 0.22
PRIMARY_SHARE = 0.4
LIST_SHARE = 0.7
MAX_LIST_ITEMS = 5
MAX_PARTS = 2  # further retrieved chunks of the cited section or definition
PART_GAP = 3  # lines (blank ones, a rule) that may lie between two chunks of one section that follow each other
MODULE_CHANNEL = "module"  # marks the evidence the fuse node listed for a list question (from the anchor's module)
MAX_MODULE_ITEMS = 15


def last_name(e: Evidence) -> str:
    """The last component of the symbol or heading an evidence item is about: ``Schema.Meta`` → ``Meta``."""
    short = e.symbol
    return short.rsplit(" > ", 1)[-1].rsplit(".", 1)[-1]


def rank_evidence(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[tuple[float, Evidence]]:
    """Evidence in the fused ranker's order (ties keep the given order), each with its score relative to the
    strongest: the writer cites what fused search puts first, so there is one notion of the best evidence."""
    top = max((e.score for e in evidence), default=0.0)
    scored = sorted(enumerate(evidence), key=lambda t: (-t[1].score, t[0]))
    return [((e.score / top) if top > 0 else 0.0, e) for _, e in scored]


def agreement(item: Evidence, channels: Sequence[str]) -> float:
    """Share of the plan's search channels that ranked ``item`` among their first (0 when the plan ran none)."""
    ran = [c for c in dict.fromkeys(channels) if c in SEARCH_CHANNELS]
    if not ran:
        return 0.0
    return sum(1 for c in ran if c in item.top_in) / len(ran)


def coverage_floor(plan: Plan, first: Evidence) -> float:
    """How much of the question the best-covering evidence must cover to be worth citing: ``MIN_COVERAGE``, or
    ``AGREED_COVERAGE`` when every search channel put ``first`` (the fused first item) among its first."""
    return min(AGREED_COVERAGE, MIN_COVERAGE) if agreement(first, plan.channels) >= 1.0 else MIN_COVERAGE


def _file_stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _plain_code(e: Evidence) -> bool:
    return e.kind in CODE_KINDS and not is_test_path(e.path) and not is_stub_path(e.path)


def list_anchor(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> Evidence | None:
    """For a list question, the best-supported definition in a module named after what the question asks for
    ("which parsers…" → ``parse.py``, "which error types" → ``errors.py``, but not
    ``output.py`` for "which formats get output"): that module's definitions are the list. None when
    the question names a class (its members are the answer) or no module fits."""
    if plan.question_type != "list" or not evidence:
        return None
    tokens = list(plan.shape.list_subject)
    if not tokens:
        return None
    names = named_identifiers(plan)
    code = [e for e in evidence if _plain_code(e)]
    if any(last_name(e).lower() in names for e in code):
        return None
    ids = {e.id for e in code}
    for _, e in rank_evidence(plan, evidence, idf):
        if e.id in ids and any(stems_match(s, t) for s in tokenize(_file_stem(e.path)) for t in tokens):
            return e
    return None


# A list question whose subject is a kind word ("which error classes") asks for the family the word before names.
KIND_WORDS = frozenset({"class", "type", "kind", "function", "object"})


def family_nouns(plan: Plan, evidence: Sequence[Evidence]) -> list[str]:
    """For a list question that no module answers ("which exporters are there?"), the words that may name the
    family of classes it asks for, to try in order: the head of its subject (``exporter``), or for a kind word
    ("which error types") the word before it first. ``[]`` when the question names a class of the evidence (its
    members are the answer) or has no such subject."""
    if plan.question_type != "list":
        return []
    tokens = [t for t in plan.shape.list_subject if len(t) >= 4]
    if not tokens:
        return []
    names = named_identifiers(plan)
    if any(last_name(e).lower() in names for e in evidence if _plain_code(e)):
        return []
    head = tokens[-1]
    return [tokens[-2], head] if head in KIND_WORDS and len(tokens) >= 2 else [head]


def family_member(name: str, noun: str) -> bool:
    """A public class named after ``noun`` by its last word, with at least one word before it: ``JsonExporter``
    and ``CsvExporter`` for exporter, not ``Exporter`` itself (the base of the family) or ``_Exporter``."""
    parts = word_parts(name)
    if name.startswith("_") or len(parts) < 2:
        return False
    last = parts[-1].lower()  # one noun's forms, not another noun it begins ("format" is no "formatter")
    return stems_match(last, noun) and abs(len(last) - len(noun)) <= 2


def module_listing(plan: Plan, anchor: Evidence, evidence: Sequence[Evidence],
                   idf: Mapping[str, float]) -> list[Evidence]:
    """The public top-level definitions of the anchor's module (retrieved or listed by the fuse node), in file
    order. In a long module only those sharing a distinctive question term (found in at most half the
    definitions, and about as rare in the corpus as the rarest such term) are kept: the date fields among all
    fields. At most ``MAX_MODULE_ITEMS`` of the best supported."""
    cands: dict[str, Evidence] = {}
    for e in evidence:
        short = e.symbol
        if e.path != anchor.path or not _plain_code(e) or e.module_code or short.startswith("_"):
            continue
        if MODULE_CHANNEL in e.channels or "." not in short:
            have = cands.setdefault(short, e)
            if e.start_line <= have.start_line and have.end_line < e.end_line:
                cands[short] = e  # the whole definition, not the chunk of its header that was retrieved
    items = list(cands.values())
    if len(items) > MAX_MODULE_ITEMS:
        stem = tokenize(_file_stem(anchor.path))
        terms = [t for t in query_tokens(plan, idf) if not any(stems_match(t, s) for s in stem)]
        words = {e.id: set(tokenize(f"{e.name} {e.signature or ''} {first_sentence(e.docstring)}")) for e in items}
        distinctive = {t for t in terms if 0 < sum(t in w for w in words.values()) <= len(items) / 2}
        top = max((idf.get(t, 1.0) for t in distinctive), default=0.0)
        strong = {t for t in distinctive if idf.get(t, 1.0) >= 0.6 * top}  # not a generic word like "type"
        kept = [e for e in items if words[e.id] & strong]
        if len(kept) >= 2:
            items = kept
    if len(items) > MAX_MODULE_ITEMS:
        best = {id(e) for _, e in rank_evidence(plan, items, idf)[:MAX_MODULE_ITEMS]}
        items = [e for e in items if id(e) in best]
    return sorted(without_bases(items), key=lambda e: e.start_line)


def without_bases(items: Sequence[Evidence]) -> list[Evidence]:
    """``items`` less an abstract base that two or more of them derive from: it is not one of the things listed
    ("which parsers…")."""
    return [e for e in items if not (_abstract(e) and sum(_derives_from(o, e) for o in items) >= 2)]


_ABSTRACT = re.compile(r"class\s+\w+\s*\([^)]*\b(ABC|ABCMeta|Protocol|Generic)\b|\babstract\b|\bbase class\b", re.I)


def _abstract(e: Evidence) -> bool:
    """A class declared abstract (an ABC or Protocol base) or documented as a base class."""
    return bool(_ABSTRACT.search(f"{signature(e) or e.signature or ''} {first_sentence(e.docstring)}"))


def select_evidence(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[Evidence]:
    """The evidence worth citing: the best-supported item and, for lists, its close siblings (at most 4)."""
    tokens = query_tokens(plan, idf)
    if not evidence:
        return []
    covs = {e.id: coverage(e, tokens, idf) for e in evidence}
    best = max(covs.values())
    order = rank_evidence(plan, evidence, idf)
    if best < coverage_floor(plan, order[0][1]):
        return []
    ranked = [(s, e) for s, e in order if covs[e.id] >= PRIMARY_SHARE * best]
    if not ranked:
        return []
    top_score, primary = ranked[0]
    if plan.question_type != "list":
        # A section or definition split into several chunks is one answer: cite its retrieved parts together.
        parts = [e for _, e in ranked[1:] if e.path == primary.path and whole_name(e) == whole_name(primary)]
        # A part right before or after the cited one first: the text that goes on from it; then the others by rank.
        parts.sort(key=lambda e: max(e.start_line - primary.end_line, primary.start_line - e.end_line) > PART_GAP)
        return [primary, *parts[:MAX_PARTS]]
    listed = sorted((e for e in evidence if MODULE_CHANNEL in e.channels), key=lambda e: (e.path, e.start_line))
    if not listed:  # not listed by the fuse node: list from what was retrieved
        anchor = list_anchor(plan, evidence, idf)
        listed = module_listing(plan, anchor, evidence, idf) if anchor is not None else []
    if len(listed) >= 2:
        return sorted([*listed, *between(listed, evidence, MAX_MODULE_ITEMS - len(listed))],
                      key=lambda e: (e.path, e.start_line))  # file by file, as a family over files reads
    derived = [(sc, e) for sc, e in ranked if e is not primary and _derives_from(e, primary)]
    if derived:  # "which parsers are there": the subclasses of the base class are the answer
        return [e for _, e in derived[:MAX_LIST_ITEMS]]
    chosen, names = [primary], {last_name(primary)}
    for sc, e in ranked[1:]:
        if len(chosen) >= MAX_LIST_ITEMS:
            break
        if sc >= LIST_SHARE * top_score and _siblings(primary, e) and last_name(e) not in names:
            chosen.append(e)
            names.add(last_name(e))
    return chosen + between(chosen, evidence, MAX_LIST_ITEMS - len(chosen))


def between(chosen: Sequence[Evidence], evidence: Sequence[Evidence], limit: int) -> list[Evidence]:
    """Definitions that lie between two chosen siblings of one file, as their sibling: the items of an
    enumeration sit together in their file, and one between two listed ones is listed too, though the question's
    words may not name it. ``[]`` unless ``chosen`` are definitions of one file."""
    code = [e for e in chosen if e.kind in CODE_KINDS and not e.module_code]
    if len(code) < 2 or len(code) != len(chosen) or len({e.path for e in code}) != 1 or limit <= 0:
        return []
    lo, hi = min(e.end_line for e in code), max(e.start_line for e in code)
    names = {last_name(e) for e in code}
    found: list[Evidence] = []
    for e in sorted(evidence, key=lambda e: e.start_line):
        if e.path == code[0].path and lo < e.start_line and e.end_line < hi and _siblings(code[0], e) \
                and not e.module_code and _plain_code(e) and not last_name(e).startswith("_") \
                and last_name(e) not in names and len(found) < limit:
            found.append(e)
            names.add(last_name(e))
    return found


def whole_name(e: Evidence) -> tuple[str, bool]:
    """What the parts of one long section or definition share: their symbol (and whether it is module code)."""
    return e.symbol, e.module_code


def is_listing(chosen: Sequence[Evidence]) -> bool:
    """The chosen evidence is a module's listing (more than two items, listed by the fuse node)."""
    return len(chosen) > 2 and any(MODULE_CHANNEL in e.channels for e in chosen)


def _derives_from(e: Evidence, base: Evidence) -> bool:
    """``e`` is a class whose header names ``base``'s class among its bases (``class JsonParser(Parser)``)."""
    header = signature(e) or (e.signature or "")
    name = last_name(base)
    return bool(name) and bool(re.match(rf"class\s+\w+\s*\([^)]*\b{re.escape(name)}\b", header))


def _siblings(a: Evidence, b: Evidence) -> bool:
    """Items of one enumeration: doc sections, or code definitions with the same parent (both top level, or
    members of one class)."""
    if a.kind == "doc" or b.kind == "doc":
        return a.kind == b.kind
    if (a.kind in CODE_KINDS) != (b.kind in CODE_KINDS):
        return False
    pa, pb = (x.symbol.rpartition(".")[0] for x in (a, b))
    return pa == pb
