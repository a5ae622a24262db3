"""Answer assembly: a draft rated (``writer.rate``), why an answer is degraded, and the final ``Answer`` with its
citations numbered 1..n in order of use and the thread turn it adds."""

from __future__ import annotations

import time
from typing import Any

from sift.graph.context import AskContext
from sift.graph.models import Answer, Citation, Draft, Evidence, FileCitation
from sift.graph.numbering import numbering, renumber_text
from sift.graph.state import AskState
from sift.graph.writer import ConfidenceModel, final_confidence, hedged, rate


def assessed(model: ConfidenceModel, state: AskState, draft: Draft, ctx: AskContext | None = None) -> Draft:
    """The draft rated by the writer (``writer.rate``), degraded when the run had to do without some evidence."""
    return rate(model, state["plan"], state.get("evidence") or [], state.get("idf") or {}, draft,
                degraded=bool(degraded_reasons(state, draft, model=False)),
                close_to=ctx.closeness if ctx is not None else None)


def _files(citations: list[Citation], evidence: list[Evidence]) -> dict[str, list[FileCitation]]:
    by_id = {e.id: e for e in evidence}
    files: dict[str, list[FileCitation]] = {}
    for c in citations:
        e = by_id.get(c.evidence_id)
        files.setdefault(c.path, []).append(FileCitation(
            type=e.kind if e else "lines", name=e.name if e else c.path, line=c.start_line,
            start_line=c.start_line, end_line=c.end_line, evidence_id=c.evidence_id, snippet=c.snippet,
        ))
    return files


def degraded_reasons(state: AskState, draft: Draft, *, model: bool = True) -> list[str]:
    """Why the answer may differ from a full run: a channel not ready yet, retrieve branches that timed out, an
    LLM that failed.

    ``model=False`` leaves the model's failures out: they cost no evidence (the rules' plan, and the extractive
    answer over the same evidence, stand in for what the model failed to do), so they lower no confidence, and a
    failed model's answer is replaced by exactly the answer the extractive mode gives."""
    results = state.get("results") or []
    reasons = [str(r.error) for r in results if r.unavailable]
    reasons += [f"{r.channel} (round {r.round}): {r.error}" for r in results if r.timed_out]
    if model and (state.get("llm_failed") or draft.degraded):
        reasons.append(f"llm: {state.get('llm_failed') or 'failed'}")
    if draft.cut_short:
        reasons.append(draft.cut_short)
    return list(dict.fromkeys(reasons))


def finish(state: AskState, draft: Draft, citations: list[Citation], grounded: bool,
           model: ConfidenceModel) -> dict[str, Any]:
    """The final ``Answer`` (its confidence, citations numbered 1..n in order of use) and the thread turn it adds."""
    plan, evidence = state["plan"], state.get("evidence") or []
    citations = [c for c in citations if c.valid]
    by_id = {e.id: e for e in evidence}
    subject = next((by_id[c.evidence_id].symbol.rsplit(".", 1)[-1] for c in citations
                    if c.evidence_id in by_id and by_id[c.evidence_id].kind not in ("doc", "file")), None)
    subject = subject or (plan.identifiers[0] if plan.identifiers else "")
    reasons = degraded_reasons(state, draft)
    conf = final_confidence(model, plan, evidence, state.get("idf") or {}, draft, citations, grounded=grounded,
                            degraded=bool(degraded_reasons(state, draft, model=False)))
    text = hedged(draft.text) if conf.level != "high" and citations and not draft.not_found else draft.text
    number = numbering(text, [c.evidence_id for c in citations], [e.id for e in evidence])
    text = renumber_text(text, number)
    citations = sorted((c.model_copy(update={"evidence_id": number[c.evidence_id]}) for c in citations),
                       key=lambda c: c.evidence_id)
    evidence = sorted((e.model_copy(update={"id": number[e.id]}) for e in evidence), key=lambda e: e.id)
    answer = Answer(
        text=text, citations=citations, files=_files(citations, evidence), grounded=grounded,
        rounds=state.get("rounds", 0) + (1 if plan.need_retrieval else 0), fallbacks=state.get("fallbacks", 0),
        plan=plan.summary(), tokens=state.get("tokens", 0),
        elapsed_ms=round((time.time() - state.get("started", time.time())) * 1000, 1), mode=draft.mode,
        degraded=bool(reasons), degraded_reasons=reasons,
        evidence=[e.item() for e in evidence],
        confidence=conf.level, confidence_score=conf.score, confidence_signals=conf.signals,
    )
    turn = {"question": state["question"], "standalone": plan.standalone, "answer": answer.text,
            "citations": [c.model_dump() for c in citations], "grounded": grounded, "subject": subject}
    return {"answer": answer, "turns": [turn]}
