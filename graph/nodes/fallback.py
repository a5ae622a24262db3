"""The fallback node: the next strategy's plan (``graph/strategies.py``) for another retrieval round."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from sift.graph.context import AskContext
from sift.graph.progress import emit, fell_back
from sift.graph.state import AskState, reset
from sift.graph.strategies import KEEPS_EVIDENCE, next_plan


async def fallback(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Change the plan (widen, switch level, DocQL by name, read files, narrow domain) and retrieve again."""
    plan, evidence = state["plan"], state.get("evidence") or []
    tried = state.get("tried") or []
    new = next_plan(plan, evidence, tried)
    assert new is not None  # route_check only comes here when a strategy is left
    keep = evidence if new.strategy in KEEPS_EVIDENCE else []
    rounds = state.get("rounds", 0) + 1
    emit(runtime, fell_back(new, rounds))
    return {"plan": new, "rounds": rounds, "fallbacks": state.get("fallbacks", 0) + 1,
            "tried": [*tried, new.strategy], "evidence": reset(keep), "draft": None, "verdict": None}
