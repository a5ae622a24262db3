"""When the extractive writer says "not found in the indexed sources" instead of guessing.

It abstains when there is no evidence, when the evidence covers too little of the question, when the evidence
(or what it would cite) lacks ``ABSENT_TERMS`` of the question's rare words, or when the question names a thing
(JSON Schema, ORM) that the corpus mentions at most in passing and the evidence worth citing never does. The reason
is the draft's note; ``ABSENT_FROM_CORPUS`` (a question word no chunk contains) ends the search. Once a draft is
rated, a question whether the project has or can do something whose answer is rated ``low`` is a not-found too
(``doubtful_yes``, note ``WEAK_YES``, which also ends the search).

``signals`` measures a draft's evidence, ``decide`` turns the measures into a reason, so that
``lab/fit/abstention.py`` can replay the decision under other thresholds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sift.graph.models import NOT_FOUND, ConfidenceLevel, Draft, DraftNote, Evidence, Plan
from sift.graph.writer.code_quotes import fence_language
from sift.graph.writer.doc_quotes import label
from sift.graph.writer.selection import is_listing
from sift.graph.writer.terms import CEILING_KEY, coverage, has_term, query_tokens
from sift.retrievers.question import QuestionShape
from sift.text import shown as escaped
from sift.tokenize import tokenize, word_parts

CONFIDENT_COVERAGE = 0.45
CITED_COVERAGE = 0.4  # below this, cited evidence missing ABSENT_TERMS rare question words does not answer it
# How many of the question's rare words the evidence must lack before it is no answer: chosen by
# lab/fit/abstention.py on the dev, dev2 and spent sets (the balanced accuracy of negatives answered "not
# found" and answerable questions answered); the rule used 2 before, which turned away about half of the
# answerable questions on projects the writer was not tuned on.
ABSENT_TERMS = 4
RARE_DF_IDF = 1.7  # idf within this of an absent term's: the term is in at most ~2 chunks
ABSENT_FROM_CORPUS = DraftNote.ABSENT_FROM_CORPUS  # the not-found note that ends the search
# The reasons that read only the question's words: a newcomer's question may share few of them with a passage
# that answers it in the project's own words.
LEXICAL_REASONS = frozenset({DraftNote.ABSENT_TERMS, ABSENT_FROM_CORPUS, DraftNote.WEAK_EVIDENCE})
# The local model's cosine between the question and the first evidence item (``first_passage``) at which a
# lexical not-found gives way to an uncertain answer from that item: chosen by lab/fit/abstention.py with
# ABSENT_TERMS (None: never). It is a cosine of the local model; another embedder's scale differs.
MEANING_FLOOR: float | None = 0.55
PASSAGE_CHARS = 1000  # of the first evidence item, compared with the question (about the model's 256 tokens)
NEAR_IN_MEANING = DraftNote.NEAR_IN_MEANING  # the note of an answer written because of ``near_in_meaning``
WEAK_YES = DraftNote.WEAK_YES  # the not-found note of ``doubtful_yes``; it ends the search


def absent_terms(tokens: Sequence[str], idf: Mapping[str, float], evidence: Sequence[Evidence]) -> list[str]:
    """Rare question terms (in almost no chunk of the corpus) that no evidence mentions either."""
    if not idf:
        return []
    ceiling = idf.get(CEILING_KEY, max(idf.values()))
    seen: set[str] = set()
    for e in evidence:
        seen.update(tokenize(f"{e.path} {e.name} {e.text}"))
    return [t for t in tokens if idf.get(t, 0.0) >= ceiling - RARE_DF_IDF and not has_term(seen, t) and len(t) > 2]


def doubtful_yes(shape: QuestionShape, level: ConfidenceLevel) -> bool:
    """A question whether the project has or can do something ("Is there…", "Can it…", "Does it…":
    ``QuestionShape.yes_no``) whose extractive answer is rated ``low``: what was found is too weak to say yes, so
    the answer is that the sources do not say so (with the closest places), not a guess."""
    return level == "low" and shape.yes_no


def _near(e: Evidence) -> str:
    """A place named for a reader: "`parse` in pkg/m.py:12", "the section "Usage" in docs/usage.md:3"; a file by
    its path and line alone."""
    name, where = label(e), f"{escaped(e.path)}:{e.start_line}"
    return where if name == escaped(e.path) else f"{name} in {where}"


def not_found(reason: str, evidence: Sequence[Evidence] = ()) -> Draft:
    """The honest answer when the evidence does not support one."""
    text = NOT_FOUND
    if evidence:
        near = "; ".join(_near(e) for e in evidence[:3])
        text += f" The closest matches ({near}) do not cover the question."
    return Draft(text=text, mode="extractive", not_found=True, note=reason)


def _spelled_apart(word: str, texts: Sequence[str]) -> bool:
    """A compound word written apart in one of the texts: "GitHub" as "Git Hub", "DataClass" as "data class"."""
    parts = word_parts(word)
    if len(parts) < 2:
        return False
    pattern = re.compile(r"(?<![A-Za-z0-9])" + r"[\s._-]*".join(re.escape(p) for p in parts) + r"(?![A-Za-z0-9])",
                         re.I)
    return any(pattern.search(t) for t in texts)


# How a question names the language of a fenced block (``fence_language``): TypeScript is JavaScript too.
_LANGUAGE_NAMES = {
    "python": ("Python",), "javascript": ("JavaScript",), "jsx": ("JavaScript",), "typescript": ("TypeScript", "JavaScript"),
    "tsx": ("TypeScript", "JavaScript"), "go": ("Go", "golang"), "rust": ("Rust",), "ruby": ("Ruby",), "java": ("Java",),
    "kotlin": ("Kotlin",),
}


def language_terms(question: str, evidence: Sequence[Evidence]) -> frozenset[str]:
    """The terms of the question's names for the languages the evidence's source files are written in. A
    question may name the language of the code it asks about ("the JavaScript proxy", "TypeScript complains")
    where the sources never write it: that is no absent topic."""
    names = {name for e in evidence for name in _LANGUAGE_NAMES.get(fence_language(e.path), ())}
    said = [n for n in names if re.search(rf"(?<![\w.]){n}(?!\w)", question, re.I)]
    return frozenset(t for name in said for t in tokenize(name))


def _absent(tokens: Sequence[str], idf: Mapping[str, float], evidence: Sequence[Evidence], question: str) -> list[str]:
    """``absent_terms``, less the question's compound words that the evidence writes apart and the names of the
    evidence's own languages."""
    own = language_terms(question, evidence)
    missing = [t for t in absent_terms(tokens, idf, evidence) if t not in own]
    if not missing:
        return missing
    texts = [f"{e.name} {e.text}" for e in evidence]
    apart = {tokenize(w)[0] for w in re.findall(r"\w+", question) if tokenize(w) and _spelled_apart(w, texts)}
    return [t for t in missing if t not in apart]


def _unnamed(plan: Plan, chosen: Sequence[Evidence], idf: Mapping[str, float]) -> bool:
    """A rare named thing of the question (in at most ~2 chunks of the corpus) that no chosen item mentions,
    neither as one word nor spelled apart ("GitHub" is mentioned by "Git Hub")."""
    ceiling = idf.get(CEILING_KEY)
    if ceiling is None:
        return False
    own = language_terms(plan.standalone, chosen)
    rare = [w for w in plan.shape.named
            if tokenize(w) and idf.get(tokenize(w)[0], 0.0) >= ceiling - RARE_DF_IDF and tokenize(w)[0] not in own]
    if not rare:
        return False
    texts = [f"{e.path} {e.name} {e.text}" for e in chosen]
    said: set[str] = set()
    for text in texts:
        said.update(tokenize(text))
    return any(not has_term(said, tokenize(w)[0]) and not _spelled_apart(w, texts) for w in rare)


@dataclass(frozen=True)
class Signals:
    """What the abstention decision reads from one draft's evidence."""

    missing: int  # rare question words that no evidence mentions
    best: float  # the best idf-weighted coverage of the question by one evidence item
    chosen: bool  # the writer found something worth citing
    corpus_absent: bool  # a missing word is in no chunk of the corpus at all
    cited_missing: int = 0  # rare question words that what would be cited lacks (0 for a module's listing)
    cited_best: float = 0.0  # the best coverage by what would be cited
    unnamed: bool = False  # a rare named thing of the question that what would be cited never mentions


def signals(plan: Plan, evidence: Sequence[Evidence], chosen: Sequence[Evidence],
            idf: Mapping[str, float]) -> Signals | None:
    """The measures ``decide`` reads, or None when there is no evidence at all."""
    if not evidence:
        return None
    tokens = query_tokens(plan, idf)
    # Absent words are judged on every question word: an unseen compound ("gRPC") counts as missing unless
    # the evidence writes it apart ("Git Hub" for "GitHub").
    words = query_tokens(plan)
    missing = _absent(words, idf, evidence, plan.standalone)
    ceiling = idf.get(CEILING_KEY)
    found = Signals(
        missing=len(missing), best=max((coverage(e, tokens, idf) for e in evidence), default=0.0),
        chosen=bool(chosen), corpus_absent=ceiling is not None and any(idf.get(t, 0.0) >= ceiling for t in missing),
    )
    if not chosen:
        return found
    listing = is_listing(chosen)  # a module's listing is chosen by its subject, not by the question's words
    return replace(found, cited_missing=0 if listing else len(_absent(words, idf, chosen, plan.standalone)),
                   cited_best=max(coverage(e, tokens, idf) for e in chosen), unnamed=_unnamed(plan, chosen, idf))


def decide(found: Signals | None, absent_terms: int = ABSENT_TERMS) -> DraftNote | None:
    """Why evidence with these measures does not answer the question, or None."""
    if found is None:
        return DraftNote.NO_EVIDENCE
    if found.missing >= absent_terms and found.best < CONFIDENT_COVERAGE:
        return DraftNote.ABSENT_TERMS
    if not found.chosen:
        # Weak evidence, and a question word that no chunk of the corpus contains: no other retrieval round can
        # supply it.
        return ABSENT_FROM_CORPUS if found.corpus_absent else DraftNote.WEAK_EVIDENCE
    if found.cited_missing >= absent_terms and found.cited_best < CITED_COVERAGE:
        # What would be cited lacks the question's rare words and covers little of it (the words may occur
        # elsewhere in the evidence, in passing).
        return DraftNote.ABSENT_TERMS
    if found.unnamed:
        # The question is about a named thing (a tool, format or product) that the corpus mentions at most in
        # passing and the evidence worth citing not at all: the project does not cover it.
        return DraftNote.ABSENT_TERMS
    return None


def first_passage(evidence: Sequence[Evidence]) -> str:
    """The text of the first evidence item that ``near_in_meaning`` compares with the question."""
    return f"{evidence[0].name}\n{evidence[0].text}"[:PASSAGE_CHARS] if evidence else ""


def near_in_meaning(found: Signals | None, similarity: float | None, absent_terms: int = ABSENT_TERMS,
                    floor: float | None = MEANING_FLOOR) -> bool:
    """A not-found for lexical reasons only (no named thing of the question missing) that the first evidence
    item's closeness in meaning overrides: ``similarity`` (its cosine to the question) at least ``floor``."""
    if found is None or found.unnamed or floor is None or similarity is None or similarity < floor:
        return False
    return decide(found, absent_terms) in LEXICAL_REASONS


def not_found_reason(plan: Plan, evidence: Sequence[Evidence], chosen: Sequence[Evidence],
                     idf: Mapping[str, float]) -> DraftNote | None:
    """Why the evidence (and ``chosen``, what the writer would cite) does not answer the question, or None."""
    return decide(signals(plan, evidence, chosen, idf))
