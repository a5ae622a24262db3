"""The wiring: planner → retrieve (Send fan-out) → fuse → generate → check → fallback ↺ | summarize → end."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from sift.graph import nodes
from sift.graph.context import AskContext
from sift.graph.state import AskInput, AskOutput, AskState


def _with_context(fn: Callable[..., Any], provide: Callable[[], AskContext] | None) -> Callable[..., Any]:
    """``fn`` as-is, or wrapped so a run without a usable context (Studio) gets ``provide()``'s."""
    if provide is None:
        return fn
    takes_runtime = "runtime" in inspect.signature(fn).parameters
    is_async = inspect.iscoroutinefunction(fn)

    def usable(runtime: Runtime[AskContext]) -> bool:
        return isinstance(runtime.context, AskContext)

    def resolve(runtime: Runtime[AskContext]) -> Runtime[AskContext]:
        return runtime if usable(runtime) else runtime.override(context=provide())

    if is_async:
        async def node(state: Any, runtime: Runtime[AskContext]) -> Any:
            if not usable(runtime):  # opening the database and embedder blocks: keep it off the event loop
                runtime = runtime.override(context=await asyncio.to_thread(provide))
            return await (fn(state, runtime) if takes_runtime else fn(state))
        return node

    def route(state: Any, runtime: Runtime[AskContext]) -> Any:
        return fn(state, resolve(runtime)) if takes_runtime else fn(state)
    return route


def build_graph(provide: Callable[[], AskContext] | None = None) -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer (the app) or without one (``langgraph dev``).

    ``provide`` supplies the run context when the caller cannot pass one (Studio sends only JSON).
    """
    w = lambda fn: _with_context(fn, provide)  # noqa: E731
    # Studio sends a JSON context (often ``{}``) that LangGraph would coerce into the schema; AskContext holds
    # live resources and has no defaults for them, so a provided graph declares none and uses ``provide()``'s.
    schema = AskContext if provide is None else None
    g = StateGraph(AskState, context_schema=schema, input_schema=AskInput, output_schema=AskOutput)
    g.add_node("planner", w(nodes.planner))
    g.add_node("retrieve", w(nodes.retrieve))
    g.add_node("fuse", w(nodes.fuse))
    g.add_node("generate", w(nodes.generate))
    g.add_node("check", w(nodes.check))
    g.add_node("fallback", w(nodes.fallback))
    g.add_node("summarize", w(nodes.summarize))
    g.add_edge(START, "planner")
    g.add_conditional_edges("planner", nodes.route_retrieve, ["retrieve", "generate"])
    g.add_edge("retrieve", "fuse")
    g.add_edge("fuse", "generate")
    g.add_edge("generate", "check")
    g.add_conditional_edges("check", w(nodes.route_check), ["fallback", "summarize", END])
    g.add_conditional_edges("fallback", nodes.route_retrieve, ["retrieve", "generate"])
    g.add_edge("summarize", END)
    return g


def compile_graph(checkpointer: Any = None) -> Any:
    """The compiled graph, checkpointed by ``checkpointer`` when given."""
    return build_graph().compile(checkpointer=checkpointer, name="sift-ask")
