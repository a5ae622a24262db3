"""The wiring: intake → planner → retrieve (Send fan-out) → fuse → write → check → fallback ↺ | summarize → end.

The writer is the extractive ``generate``, or, with a chat model, the agent loop ``agent`` ⇄ ``tools`` (one tool
call per step) and then ``answer`` (structured output) or ``generate``, as ``SIFT_LLM_ROLES`` says.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from sift.graph import agent
from sift.graph.context import MAX_ROUNDS, AskContext
from sift.graph.intake import IntakeState, intake
from sift.graph.nodes.check import check, route_check
from sift.graph.nodes.fallback import fallback
from sift.graph.nodes.fuse import fuse
from sift.graph.nodes.generate import generate
from sift.graph.nodes.planner import planner
from sift.graph.nodes.retrieve import retrieve, route_retrieve
from sift.graph.nodes.summarize import summarize
from sift.graph.state import AskInput, AskOutput, AskState

#: Builds a run's ``AskContext`` from what the run was given (Studio's tunables, or nothing).
Provide = Callable[[Any], AskContext]
#: Steps a run may take: every round (the first and each fallback) at its longest, with the agent loop's model
#: turns and tool calls, plus intake, planner and summary.
RECURSION_LIMIT = (MAX_ROUNDS + 1) * (agent.MAX_TOOL_STEPS + agent.MAX_TOOL_CALLS + 8) + 3


def _with_context(fn: Callable[..., Any], provide: Provide | None) -> Callable[..., Any]:
    """``fn`` as-is, or wrapped so a run without a usable context (Studio) gets ``provide(its context)``."""
    if provide is None:
        return fn
    takes_runtime = "runtime" in inspect.signature(fn).parameters
    is_async = inspect.iscoroutinefunction(fn)

    def usable(runtime: Runtime[Any]) -> bool:
        return isinstance(runtime.context, AskContext) and runtime.context.engine is not None

    if is_async:
        async def node(state: Any, runtime: Runtime[Any]) -> Any:
            if not usable(runtime):  # opening the database and embedder blocks: keep it off the event loop
                runtime = runtime.override(context=await asyncio.to_thread(provide, runtime.context))
            return await (fn(state, runtime) if takes_runtime else fn(state))
        return node

    def route(state: Any, runtime: Runtime[Any]) -> Any:
        if takes_runtime and not usable(runtime):
            runtime = runtime.override(context=provide(runtime.context))
        return fn(state, runtime) if takes_runtime else fn(state)
    return route


def route_after_plan(state: AskState,
                     runtime: Runtime[AskContext]) -> list[Send] | Literal["agent", "answer", "generate"]:
    """Retrieve (the plan's fan-out), or straight to the writer when there is nothing to retrieve."""
    target = route_retrieve(state)
    return agent.route_writer(state, runtime) if target == "generate" else target


def build_graph(provide: Provide | None = None,
                context_schema: type[Any] = AskContext) -> StateGraph[AskState, Any, AskInput, AskOutput]:
    """The uncompiled graph; compile it with a checkpointer (the app) or without one (``langgraph dev``).

    ``provide`` supplies the run context when the caller cannot pass one (Studio sends only JSON), and
    ``context_schema`` is then what Studio may send instead: plain tunables.
    """
    w = lambda fn: _with_context(fn, provide)  # noqa: E731
    g = StateGraph(AskState, context_schema=context_schema, input_schema=AskInput, output_schema=AskOutput)
    g.add_node("intake", w(intake), input_schema=IntakeState)
    g.add_node("planner", w(planner))
    g.add_node("retrieve", w(retrieve))
    g.add_node("fuse", w(fuse))
    g.add_node("generate", w(generate))
    g.add_node("agent", w(agent.agent))
    g.add_node("tools", w(agent.tools))
    g.add_node("answer", w(agent.answer))
    g.add_node("check", w(check))
    g.add_node("fallback", w(fallback))
    g.add_node("summarize", w(summarize))
    g.add_edge(START, "intake")
    g.add_edge("intake", "planner")
    g.add_conditional_edges("planner", w(route_after_plan), ["retrieve", "agent", "answer", "generate"])
    g.add_edge("retrieve", "fuse")
    g.add_conditional_edges("fuse", w(agent.route_writer), ["agent", "answer", "generate"])
    g.add_edge("generate", "check")
    g.add_conditional_edges("agent", w(agent.route_agent), ["tools", "answer", "generate", "check"])
    g.add_conditional_edges("tools", w(agent.route_tools), ["tools", "agent", "answer", "generate"])
    g.add_edge("answer", "check")
    g.add_conditional_edges("check", w(route_check), ["fallback", "summarize", END])
    g.add_conditional_edges("fallback", w(route_after_plan), ["retrieve", "agent", "answer", "generate"])
    g.add_edge("summarize", END)
    return g


def compile_graph(
    checkpointer: BaseCheckpointSaver | None = None,
) -> CompiledStateGraph[AskState, AskContext, AskInput, AskOutput]:
    """The compiled graph, checkpointed by ``checkpointer`` when given."""
    return build_graph().compile(checkpointer=checkpointer, name="sift-ask")
