"""Progress events: what a node tells a streaming client it has done, written to LangGraph's custom stream.

The nodes that report progress (``planner``, each ``retrieve`` branch, ``fuse``, ``check``, ``fallback``) call
``emit`` with one of the events built here as their last step, through ``runtime.stream_writer``: a run streamed
with ``stream_mode="custom"`` receives it at once, and any other run (``ainvoke``, a node called directly) drops it.
``AskService.stream`` forwards them as ``(event, data)``. Their names and payloads are a contract (the API's SSE
events, ``sift ask --show-steps``, Studio's custom stream), so each event's shape has its one owner here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: the service imports ``read`` before LangGraph and the models load
    from langgraph.runtime import Runtime

    from sift.graph.models import ChannelResult, Evidence, Plan, Verdict

#: A progress event: its name and its payload.
Event = tuple[str, dict[str, Any]]


def emit(runtime: Runtime[Any], event: Event) -> None:
    """Write ``event`` to the run's custom stream (a no-op when no one streams it)."""
    name, data = event
    runtime.stream_writer({"event": name, "data": data})


def read(chunk: Any) -> Event | None:
    """The progress event a custom-stream chunk carries, or None for a chunk ``emit`` did not write."""
    if isinstance(chunk, dict) and isinstance(chunk.get("event"), str) and isinstance(chunk.get("data"), dict):
        return chunk["event"], chunk["data"]
    return None


def planned(plan: Plan) -> Event:
    """``plan``: what the planner decided, as the answer's ``plan`` shows it."""
    return "plan", plan.summary().model_dump()


def retrieved(result: ChannelResult) -> Event:
    """``retrieve``: one branch's channel, query, round, hit count, time and error (None when it succeeded)."""
    return "retrieve", {"channel": result.channel, "query": result.query, "round": result.round,
                        "hits": result.size, "elapsed_ms": result.elapsed_ms, "error": result.error}


def fused(evidence: list[Evidence]) -> Event:
    """``fuse``: how many evidence items the round numbered, each as ``[n] path:start-end name``."""
    return "fuse", {"evidence": len(evidence), "items": [e.label() + f" {e.name}" for e in evidence]}


def checked(verdict: Verdict) -> Event:
    """``check``: whether the draft's citations passed, the valid ones, and the problems found."""
    return "check", {"ok": verdict.ok, "valid": verdict.valid, "problems": verdict.problems}


def fell_back(plan: Plan, round_: int) -> Event:
    """``fallback``: the strategy of the next round's plan, and that round's number."""
    return "fallback", {"strategy": plan.strategy, "round": round_}
