"""The wiring: planner → retrieve (Send fan-out) → fuse → generate → check → fallback ↺ | summarize → end."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from graph import nodes
from graph.context import AskContext
from graph.state import AskInput, AskOutput, AskState


def build_graph() -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer (the app) or without one (``langgraph dev``)."""
    g = StateGraph(AskState, context_schema=AskContext, input_schema=AskInput, output_schema=AskOutput)
    g.add_node("planner", nodes.planner)
    g.add_node("retrieve", nodes.retrieve)
    g.add_node("fuse", nodes.fuse)
    g.add_node("generate", nodes.generate)
    g.add_node("check", nodes.check)
    g.add_node("fallback", nodes.fallback)
    g.add_node("summarize", nodes.summarize)
    g.add_edge(START, "planner")
    g.add_conditional_edges("planner", nodes.route_retrieve, ["retrieve", "generate"])
    g.add_edge("retrieve", "fuse")
    g.add_edge("fuse", "generate")
    g.add_edge("generate", "check")
    g.add_conditional_edges("check", nodes.route_check, ["fallback", "summarize", END])
    g.add_conditional_edges("fallback", nodes.route_retrieve, ["retrieve", "generate"])
    g.add_edge("summarize", END)
    return g


def compile_graph(checkpointer: Any = None) -> Any:
    """The compiled graph, checkpointed by ``checkpointer`` when given."""
    return build_graph().compile(checkpointer=checkpointer, name="sift-ask")
