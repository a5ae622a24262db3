"""The planner node: what the question is and how to search for it; resets the per-question state."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from langgraph.runtime import Runtime

from sift.errors import SiftError
from sift.graph import llm
from sift.graph.context import AskContext
from sift.graph.models import Plan
from sift.graph.planner import plan_question
from sift.graph.progress import emit, planned
from sift.graph.state import AskState, reset


async def planner(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Decide type, terms, channels, index level, DocQL, sub-queries, budget and K; reset per-question state."""
    ctx = runtime.context
    question, kb = state["question"].strip(), state["kb"]
    history = state.get("turns") or []
    rules = plan_question(question, kb, history, llm=ctx.chat_model is not None, shape=state.get("shape"))
    plan, tokens, failed = rules, 0, None
    if ctx.uses_llm("planner") and rules.need_retrieval:
        plan, tokens, failed = await llm.plan_with_llm(ctx, question, history, rules)
    if plan.need_retrieval and hasattr(ctx.searcher, "warm"):
        await _warm(ctx, kb, state.get("tenant") or "default", plan)
    emit(runtime, planned(plan))
    return {"plan": plan, "results": reset(), "evidence": reset(), "draft": None, "verdict": None, "answer": None,
            "rounds": 0, "fallbacks": 0, "tokens": tokens, "tried": [], "idf": {}, "started": time.time(),
            "tenant": state.get("tenant") or "default", "llm_failed": failed, "tool_protocol": None,
            "agent_round": -1}


async def _warm(ctx: AskContext, kb: str, tenant: str, plan: Plan) -> None:
    """Load the kb's indexes and the query encoder before the branches' time budgets start.

    A cold process (the CLI) would otherwise spend a branch's budget loading, lose the vector channel and answer
    differently from a warm server. Errors are left to the branches, which report them per channel.
    """
    with contextlib.suppress(SiftError):
        await asyncio.to_thread(ctx.searcher.warm, kb, tenant, vector="vector" in plan.channels)
