"""The LLM agent loop as graph steps: ``agent`` ⇄ ``tools`` (one tool call per step), then ``answer``.

Each model call and each tool call is its own step, so Studio shows them, the checkpointer records them and any
of them can be replayed. The loop is bounded as before: at most ``MAX_TOOL_STEPS`` model turns with tools per
round, then the answer is asked for with the tools withdrawn. The final answer is a separate structured-output call
(``answer``), as LangGraph's prebuilt agents produce their structured response. Any failure after the
retries degrades to the extractive answer, marked ``degraded``; the extractive path never enters this loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from sift.graph import llm, prompts
from sift.graph.context import AskContext
from sift.graph.extractive import write_extractive
from sift.graph.retrieval import build_evidence
from sift.graph.state import AskState, Draft, Evidence, reset
from sift.graph.tools import evidence_block, run_tool

log = logging.getLogger(__name__)

MAX_TOOL_STEPS = 6  # model turns with tools per round; the next one must answer
MAX_TOOL_CALLS = 12  # tool calls run per round; calls past it are answered "not run" in one step
MAX_EVIDENCE = 24  # tools stop adding evidence past this many items
EVIDENCE_PER_CALL = 5


def use_agent(state: AskState, runtime: Runtime[AskContext]) -> bool:
    """Whether the LLM writes the answer: a chat model is configured and the question needs retrieval."""
    return runtime.context.chat_model is not None and state["plan"].need_retrieval


def route_writer(state: AskState, runtime: Runtime[AskContext]) -> Literal["agent", "generate"]:
    """After retrieval: the LLM agent when configured, else the extractive writer."""
    return "agent" if use_agent(state, runtime) else "generate"


def _degraded(state: AskState, exc: Exception, tokens: int) -> Draft:
    log.warning("llm answer failed (%s); degrading to the extractive answer", type(exc).__name__)
    draft = write_extractive(state["plan"], state.get("evidence") or [], state.get("idf") or {}, state["kb"])
    return draft.model_copy(update={"degraded": True, "tokens": tokens,
                                    "note": f"LLM unavailable ({type(exc).__name__}); extractive answer"})


def _opening(state: AskState) -> list[AnyMessage]:
    """A round's first messages: the instructions, the evidence so far, the question and K."""
    plan = state["plan"]
    return [SystemMessage(prompts.AGENT_SYSTEM),
            HumanMessage(prompts.agent_user(plan.standalone or state["question"],
                                            evidence_block(state.get("evidence") or []), plan.k_citations))]


async def agent(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """One model turn: call tools (→ ``tools``) or say it is done (→ ``answer``); a failure → degraded draft."""
    ctx = runtime.context
    rounds = state.get("rounds", 0)
    fresh = state.get("agent_round", -1) != rounds  # a new round starts a new transcript
    opening = _opening(state) if fresh else []
    steps = 0 if fresh else state.get("agent_steps", 0)
    earlier = [] if fresh else list(state.get("messages") or [])
    prompt = [*earlier, *opening]
    runner = ctx.require_chat_model().bind_tools(prompts.TOOL_SPECS)
    spent = 0

    async def call() -> AIMessage:
        nonlocal spent
        reply = await runner.ainvoke(prompt)
        spent += llm.token_count(reply)
        return reply

    update: dict[str, Any] = {"agent_round": rounds, "agent_steps": steps + 1}
    try:
        reply = await llm.with_retries(ctx, call)
    except Exception as exc:  # noqa: BLE001 - degrade to the extractive writer and say so
        return {**update, "draft": _degraded(state, exc, spent), "tokens": state.get("tokens", 0) + spent}
    clear = [RemoveMessage(id=REMOVE_ALL_MESSAGES)] if fresh else []
    return {**update, "messages": [*clear, *opening, reply], "tokens": state.get("tokens", 0) + spent}


def _pending(messages: list[AnyMessage]) -> list[ToolCall]:
    """Tool calls of the last model turn that have no result yet, in the order the model asked for them."""
    for last in range(len(messages) - 1, -1, -1):
        turn = messages[last]
        if isinstance(turn, AIMessage):
            done = {m.tool_call_id for m in messages[last + 1:] if isinstance(m, ToolMessage)}
            return [tc for tc in turn.tool_calls if tc["id"] not in done]
    return []


def route_agent(state: AskState) -> Literal["tools", "answer", "check"]:
    """A degraded draft → ``check``; pending tool calls → ``tools``; otherwise → ``answer``."""
    if state.get("draft") is not None:
        return "check"
    return "tools" if _pending(list(state.get("messages") or [])) else "answer"


def _calls_run(messages: list[AnyMessage]) -> int:
    return sum(1 for m in messages if isinstance(m, ToolMessage) and m.status != "error")


def route_tools(state: AskState) -> Literal["tools", "agent", "answer"]:
    """More tool calls of the same turn → ``tools`` again; else back to the model, or, once it has had
    ``MAX_TOOL_STEPS`` turns with tools or ``MAX_TOOL_CALLS`` calls, on to the answer (tools withdrawn)."""
    messages = list(state.get("messages") or [])
    if _pending(messages):
        return "tools"
    spent = state.get("agent_steps", 0) >= MAX_TOOL_STEPS or _calls_run(messages) >= MAX_TOOL_CALLS
    return "answer" if spent else "agent"


async def tools(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Run the next pending tool call; its hits join the evidence as new numbered items the model is shown.

    One call per step, so each is checkpointed on its own and can be replayed.
    """
    ctx = runtime.context
    kb, tenant = state["kb"], state.get("tenant") or "default"
    messages = list(state.get("messages") or [])
    pending = _pending(messages)
    if _calls_run(messages) >= MAX_TOOL_CALLS:  # the round's budget is spent: answer the rest unrun, at once
        return {"messages": [ToolMessage(content=f"not run: this round's {MAX_TOOL_CALLS} tool calls are spent",
                                         tool_call_id=c["id"], name=c["name"], status="error") for c in pending]}
    call = pending[0]
    text, hits = await asyncio.to_thread(run_tool, ctx, kb, tenant, call["name"], call.get("args") or {})
    evidence: list[Evidence] = list(state.get("evidence") or [])
    added: list[Evidence] = []
    if hits and len(evidence) < MAX_EVIDENCE:
        limit = min(MAX_EVIDENCE, len(evidence) + EVIDENCE_PER_CALL)
        grown = await asyncio.to_thread(build_evidence, ctx.engine, kb, tenant, hits, limit, evidence)
        added = grown[len(evidence):]
        if added:
            text += "\n\nEvidence added:\n" + evidence_block(added)
    update: dict[str, Any] = {"messages": [ToolMessage(content=text, tool_call_id=call["id"], name=call["name"])]}
    if added:
        update["evidence"] = reset(grown)
    return update


async def answer(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """The final answer as structured output over the round's transcript; a failure → degraded draft."""
    ctx = runtime.context
    evidence = state.get("evidence") or []
    messages = [*(state.get("messages") or []), HumanMessage(prompts.FINAL_ANSWER)]
    try:
        out, spent = await llm.structured(ctx, llm.LLMAnswer, messages)
    except Exception as exc:  # noqa: BLE001 - degrade to the extractive writer and say so
        return {"draft": _degraded(state, exc, 0)}
    draft = llm.to_draft(out, evidence, spent)
    return {"draft": draft, "tokens": state.get("tokens", 0) + spent}
