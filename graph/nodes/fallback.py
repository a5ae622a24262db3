"""The fallback node: the next strategy's plan (``graph/strategies.py``) for another retrieval round."""

from __future__ import annotations

from typing import Any

from sift.graph.state import AskState, reset
from sift.graph.strategies import KEEPS_EVIDENCE, next_plan


async def fallback(state: AskState) -> dict[str, Any]:
    """Change the plan (widen, switch level, DocQL by name, read files, narrow domain) and retrieve again."""
    plan, evidence = state["plan"], state.get("evidence") or []
    tried = state.get("tried") or []
    new = next_plan(plan, evidence, tried)
    assert new is not None  # route_check only comes here when a strategy is left
    keep = evidence if new.strategy in KEEPS_EVIDENCE else []
    return {"plan": new, "rounds": state.get("rounds", 0) + 1, "fallbacks": state.get("fallbacks", 0) + 1,
            "tried": [*tried, new.strategy], "evidence": reset(keep), "draft": None, "verdict": None}
