"""The check node and its router: the draft's citations checked against the indexed files; a grounded draft
ends the run, otherwise another round (``fallback``) or the forced answer (``summarize``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from langgraph.runtime import Runtime
from sqlalchemy import select

from sift.catalog import get_serving_kb
from sift.db import visible_in
from sift.db.tables import File
from sift.graph.agent import set_aside
from sift.graph.checker import FileFacts, check_draft
from sift.graph.context import AskContext
from sift.graph.models import DraftNote
from sift.graph.nodes.finish import assessed, finish
from sift.graph.progress import checked, emit
from sift.graph.state import AskState
from sift.graph.strategies import next_plan
from sift.text import split_lines


def file_facts(ctx: AskContext, kb: str, tenant: str, paths: list[str]) -> dict[str, FileFacts]:
    """Line count, hash and lines of each path in the serving generation."""
    if not paths:
        return {}
    ref = get_serving_kb(ctx.engine, kb, tenant)
    with ctx.engine.connect() as conn:
        rows = conn.execute(select(File.path, File.line_count, File.content_hash, File.content).where(
            File.kb_id == ref.id, File.path.in_(paths), visible_in(File, ref.generation))).all()
    return {r.path: FileFacts(r.line_count, r.content_hash, tuple(split_lines(r.content))) for r in rows}


async def check(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Check the draft's citations; a passing draft becomes the grounded answer."""
    ctx = runtime.context
    plan, draft, evidence = state["plan"], state["draft"], state.get("evidence") or []
    assert draft is not None
    paths = sorted({e.path for e in evidence})
    facts = await asyncio.to_thread(file_facts, ctx, state["kb"], state.get("tenant") or "default", paths) \
        if plan.need_retrieval else {}
    update: dict[str, Any] = {}
    if draft.mode == "llm" and draft.confidence is None:  # the model's own words, before rating adds sift's
        failed = set_aside(state, check_draft(draft, evidence, facts, plan.k_citations))
        if failed is not None:  # the extractive answer instead, and the model set aside
            state = {**state, **failed}  # type: ignore[typeddict-item]  # what finish() reports as degraded
            draft = failed["draft"]
            update["llm_failed"] = failed["llm_failed"]
    if draft.confidence is None:
        draft = await asyncio.to_thread(assessed, ctx.confidence, state, draft, ctx)
    verdict = check_draft(draft, evidence, facts, plan.k_citations)
    update.update({"verdict": verdict, "draft": draft})
    if verdict.ok:
        update.update(finish(state, draft, verdict.citations, grounded=True, model=ctx.confidence))
    emit(runtime, checked(verdict))
    return update


def route_check(state: AskState, runtime: Runtime[AskContext]) -> Literal["fallback", "summarize", "__end__"]:
    """Grounded → end; otherwise another round while rounds, budget and strategies last; then summarize."""
    verdict, plan = state["verdict"], state["plan"]
    if verdict is not None and verdict.ok:
        return "__end__"  # END, which LangGraph types as a plain str
    limits = runtime.context.limits
    over_budget = limits.wall_clock and (time.time() - state.get("started", time.time())) * 1000 >= plan.budget_ms
    if over_budget or searched_enough(state, limits.max_rounds):
        return "summarize"
    return "fallback"


def searched_enough(state: AskState, max_rounds: int) -> bool:
    """Whether the search is over whatever the time: rounds spent, or no strategy left that could help."""
    plan, draft = state["plan"], state["draft"]
    rounds = state.get("rounds", 0)
    if rounds >= max_rounds or not plan.need_retrieval:
        return True
    if draft is not None and draft.not_found and draft.note == DraftNote.ABSENT_TERMS and rounds >= 1:
        return True  # the corpus lacks the question's distinctive words: more rounds will not add them
    if draft is not None and draft.not_found and draft.note in (DraftNote.ABSENT_FROM_CORPUS, DraftNote.WEAK_YES):
        return True  # the evidence is weak and a question word occurs nowhere in the corpus, or what was
        # found is too weak to say the project has what a question asks it has
    return next_plan(plan, state.get("evidence") or [], state.get("tried") or []) is None
