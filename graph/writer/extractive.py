"""The extractive answerer: a deterministic, LLM-free writer that builds answers only from evidence text.

It cites what the fused ranker puts first among the evidence that shares enough of the question (``selection.py``,
on the question's terms from ``terms.py``). When the evidence covers too little of the question, lacks its rare words,
or never mentions a named thing it asks about (JSON Schema, ORM), it says "not found in the indexed sources"
instead of guessing (``abstention.py``). Otherwise every sentence it writes carries the ``[n]`` of the evidence
it quotes (``composition.py``, from what ``doc_quotes.py`` and ``code_quotes.py`` find quotable in each item).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sift.graph.models import Citation, Draft, Evidence, Plan
from sift.graph.writer.abstention import NEAR_IN_MEANING, not_found, not_found_reason
from sift.graph.writer.composition import answer_sentences, compose
from sift.graph.writer.selection import select_evidence
from sift.graph.writer.terms import query_tokens


def chit_chat(question: str, kb: str) -> Draft:
    """The reply to a greeting or thanks: no retrieval, no citations."""
    return Draft(text=f"Hello! Ask me about the code or documentation in knowledge base {kb!r}; every answer "
                      "cites the exact files and lines it comes from.", mode="extractive")


def write_extractive(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float], kb: str = "",
                     near: bool = False) -> Draft:
    """Compose a cited answer from the evidence, or an explicit not-found. With ``near`` (the first evidence item
    is close in meaning to the question, ``abstention.near_in_meaning``) it answers without the lexical
    abstention, from the first item when no item shares enough of the question's words."""
    if not plan.need_retrieval:
        return chit_chat(plan.standalone, kb)
    chosen = select_evidence(plan, evidence, idf)
    if near and evidence:
        chosen = chosen or [evidence[0]]
    else:
        reason = not_found_reason(plan, evidence, chosen, idf)
        if reason is not None:
            return not_found(reason, evidence)
    sentences, chosen = answer_sentences(plan, chosen, evidence, query_tokens(plan, idf), idf)
    citations = [Citation(evidence_id=e.id, path=e.path, start_line=e.start_line, end_line=e.end_line,
                          snippet=e.text[:400]) for e in chosen]
    return Draft(text=compose(sentences), citations=citations, mode="extractive",
                 note=NEAR_IN_MEANING if near else None)
