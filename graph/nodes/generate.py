"""The generate node: the extractive writer's draft (with a chat model, ``graph/agent.py`` writes it instead)."""

from __future__ import annotations

from typing import Any

from sift.graph.state import AskState
from sift.graph.writer import write


async def generate(state: AskState) -> dict[str, Any]:
    """Write the answer with the extractive writer (with a chat model, ``graph/agent.py`` writes it instead)."""
    plan, evidence = state["plan"], state.get("evidence") or []
    draft = write(plan, evidence, state.get("idf") or {}, state["kb"])
    return {"draft": draft}
