"""How far a draft is to be trusted, and what the answer says when it is not: the writer's last word on a draft.

``rate`` gives a draft its confidence (``confidence.py``); a yes/no question's extractive answer rated low becomes a
not-found (``abstention.doubtful_yes``), and an answer that is not confident lists the candidate places
(``uncertain.py``). ``near_draft`` writes the answer from the first evidence item when a not-found rests on the
question's words alone and that item is close to the question in meaning. ``final_confidence`` applies the rules
that hold whatever was fitted. The graph's check and summarize nodes call them; they read no graph state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from sift.graph.models import Citation, Confidence, Draft, Evidence, Plan, cited_ids
from sift.graph.writer.abstention import (
    LEXICAL_REASONS,
    PASSAGE_CHARS,
    WEAK_YES,
    doubtful_yes,
    first_passage,
    near_in_meaning,
    not_found,
)
from sift.graph.writer.abstention import signals as abstention_signals
from sift.graph.writer.closeness import Closeness
from sift.graph.writer.confidence import ConfidenceModel, assess, no_retrieval, signals
from sift.graph.writer.extractive import write_extractive
from sift.graph.writer.selection import select_evidence
from sift.graph.writer.uncertain import with_candidates

#: The closeness in meaning of texts to a question (``AskContext.closeness``): None without a local model.
CloseTo = Callable[..., Closeness | None]


def _cited(draft: Draft) -> list[int]:
    return list(dict.fromkeys([*cited_ids(draft.text), *(c.evidence_id for c in draft.citations)]))


def rate(model: ConfidenceModel, plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float], draft: Draft,
         *, degraded: bool = False, close_to: CloseTo | None = None) -> Draft:
    """The draft with its confidence; one that is not high (and no not-found) says so and lists candidates
    (each with its sentence closest to the question, when ``close_to`` gives a ``Closeness``). An extractive answer
    rated low to whether the project has or can do something becomes a not-found (``abstention.doubtful_yes``).
    ``degraded``: the run had to do without something (a channel, the model, time), so the answer is no more
    than medium."""
    if not plan.need_retrieval:
        return draft.model_copy(update={"confidence": no_retrieval()})
    found = signals(plan, evidence, _cited(draft), idf)
    conf = assess(model, found, degraded=degraded, not_found=draft.not_found)
    if draft.mode == "extractive" and not draft.not_found and doubtful_yes(plan.shape, conf.level):
        draft = not_found(WEAK_YES, evidence)
        conf = assess(model, found, not_found=True)
    if conf.level != "high" and not draft.not_found:
        near = close_to(plan.standalone) if close_to is not None else None
        draft = with_candidates(draft, plan, evidence, idf, near)
    return draft.model_copy(update={"confidence": conf})


def near_draft(model: ConfidenceModel, plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float], kb: str,
               draft: Draft, *, degraded: bool, close_to: CloseTo) -> Draft | None:
    """For a not-found of the extractive writer on the question's words alone: when the first evidence item is
    close in meaning to the question (``abstention.near_in_meaning``), the answer written from it, rated (never
    high), with the candidates; else None. The caller checks its citations."""
    if draft.note not in LEXICAL_REASONS:
        return None
    near = close_to(plan.standalone, PASSAGE_CHARS)
    if near is None:
        return None
    found = abstention_signals(plan, evidence, select_evidence(plan, evidence, idf), idf)
    if not near_in_meaning(found, near([first_passage(evidence)])[0]):
        return None
    written = write_extractive(plan, evidence, idf, kb, near=True)
    written = rate(model, plan, evidence, idf, written, degraded=degraded, close_to=close_to)
    if written.confidence is not None and written.confidence.level == "high":
        written = written.model_copy(update={"confidence": written.confidence.model_copy(update={"level": "medium"})})
    return written


def final_confidence(model: ConfidenceModel, plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float],
                     draft: Draft, citations: Sequence[Citation], *, grounded: bool, degraded: bool) -> Confidence:
    """The answer's confidence: the draft's (or computed now), with the rules that hold whatever was fitted:
    a not-found is low, a degraded or partly removed answer at most medium."""
    if not plan.need_retrieval:
        return no_retrieval()
    conf = draft.confidence or assess(model, signals(plan, evidence, [c.evidence_id for c in citations], idf))
    if draft.not_found or not citations:
        return assess(model, conf.signals, not_found=True)
    if conf.level == "high" and (degraded or not grounded):
        return conf.model_copy(update={"level": "medium"})
    return conf
