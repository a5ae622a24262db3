"""The summarize node: the forced final answer once the search is over; only the checked parts survive."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from sift.graph import llm
from sift.graph.checker import check_draft, strip_unsupported
from sift.graph.context import AskContext
from sift.graph.models import NOT_FOUND, Draft, Verdict
from sift.graph.nodes.check import file_facts, searched_enough
from sift.graph.nodes.finish import degraded_reasons, finish
from sift.graph.state import AskState
from sift.graph.writer import near_draft


async def summarize(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Forced final answer, tools withdrawn: only the checked parts survive. Without a chat model, a not-found on
    the question's words alone whose first evidence item is close to it in meaning becomes an uncertain answer
    from that item (``near_answer``). Otherwise an honest not-found."""
    ctx = runtime.context
    draft, verdict = state.get("draft"), state.get("verdict")
    evidence = state.get("evidence") or []
    cut = None
    if draft is not None and not searched_enough(state, ctx.limits.max_rounds):  # the time budget ended it
        cut = f"time budget: search stopped after round {state.get('rounds', 0) + 1} ({state['plan'].budget_ms} ms)"
        draft = draft.model_copy(update={"cut_short": cut})
    if ctx.uses_llm("writer") and not state.get("llm_failed") and state["plan"].need_retrieval and evidence:
        forced = await llm.summarize_with_llm(ctx, state)
        if forced is not None:
            facts = await asyncio.to_thread(file_facts, ctx, state["kb"], state.get("tenant") or "default",
                                            sorted({e.path for e in evidence}))
            v = check_draft(forced, evidence, facts, state["plan"].k_citations)
            draft, verdict = forced, v
    elif draft is not None and draft.not_found and state["plan"].need_retrieval and evidence:
        near = await asyncio.to_thread(near_answer, ctx, state, draft)
        if near is not None:
            return finish(state, near[0].model_copy(update={"cut_short": cut}), near[1].citations, grounded=True,
                          model=ctx.confidence)
    text, citations = NOT_FOUND, []
    if draft is not None and verdict is not None and verdict.valid and not draft.not_found:
        kept = strip_unsupported(draft.text, verdict.valid)
        if kept:
            text = kept + " (Parts of the answer that could not be checked against the sources were removed.)"
            citations = [c for c in verdict.citations if c.valid and f"[{c.evidence_id}]" in kept]
    elif draft is not None and draft.not_found:
        text = draft.text
    if not citations:
        text = text if text.startswith(NOT_FOUND) else NOT_FOUND
    base = draft or Draft(text=text)
    return finish(state, base.model_copy(update={"text": text}), citations, grounded=False, model=ctx.confidence)


def near_answer(ctx: AskContext, state: AskState, draft: Draft) -> tuple[Draft, Verdict] | None:
    """For a not-found of the extractive writer on the question's words alone, the writer's answer from the first
    evidence item when it is close in meaning to the question (``writer.near_draft``), once its citations
    check; else None."""
    plan, evidence, idf = state["plan"], state.get("evidence") or [], state.get("idf") or {}
    written = near_draft(ctx.confidence, plan, evidence, idf, state["kb"], draft,
                         degraded=bool(degraded_reasons(state, Draft(text=""), model=False)), close_to=ctx.closeness)
    if written is None:
        return None
    facts = file_facts(ctx, state["kb"], state.get("tenant") or "default", sorted({e.path for e in evidence}))
    verdict = check_draft(written, evidence, facts, plan.k_citations)
    return (written, verdict) if verdict.ok and not written.not_found else None
