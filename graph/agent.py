"""The LLM agent loop as graph steps: ``agent`` ⇄ ``tools`` (one tool call per step), then the writer.

Each model call and each tool call is its own step, so Studio shows them, the checkpointer records them and any
of them can be replayed. The loop is bounded: at most ``MAX_TOOL_STEPS`` model turns with tools per round, then
the answer is written. A turn asks for tools natively or through the JSON protocol (``graph/tool_protocol.py``,
``SIFT_LLM_TOOLS``): a server that rejects tools, or with ``auto`` a model whose first turn calls none, gets the
JSON protocol for the rest of the question. The writer is ``answer`` (structured output over the evidence) when
the model writes, else the extractive ``generate`` (``SIFT_LLM_ROLES``). Any failure after the retries degrades
to the extractive answer, marked ``degraded`` with the reason, and sets the model aside for the question.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolCall, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from sift.chat import check_finished, describe
from sift.graph import llm, prompts
from sift.graph.context import AskContext
from sift.graph.models import Draft, Evidence, Verdict
from sift.graph.retrieval import build_evidence
from sift.graph.state import AskState, reset
from sift.graph.tool_protocol import parse_step, rejects_tools, repeats, step_schema, turn_messages
from sift.graph.tools import run_tool
from sift.graph.writer import write as write_extractive

log = logging.getLogger(__name__)

MAX_TOOL_STEPS = 6  # model turns with tools per round; the next one must answer
MAX_TOOL_CALLS = 12  # tool calls run per round; calls past it are answered "not run" in one step
MAX_EVIDENCE = 24  # tools stop adding evidence past this many items
EVIDENCE_PER_CALL = 5
Writer = Literal["answer", "generate"]


def use_agent(state: AskState, runtime: Runtime[AskContext]) -> bool:
    """Whether the model calls tools before the answer: it plays the agent, the question needs retrieval and the
    model has not been set aside for this question."""
    return runtime.context.uses_llm("agent") and state["plan"].need_retrieval and not state.get("llm_failed")


def writer(state: AskState, runtime: Runtime[AskContext]) -> Writer:
    """Who writes the answer: the model (``answer``) when it plays the writer and has not failed this question,
    else the extractive writer (``generate``)."""
    ok = runtime.context.uses_llm("writer") and state["plan"].need_retrieval and not state.get("llm_failed")
    return "answer" if ok else "generate"


def route_writer(state: AskState, runtime: Runtime[AskContext]) -> Literal["agent", "answer", "generate"]:
    """After retrieval: the agent loop when the model plays it, else the writer."""
    return "agent" if use_agent(state, runtime) else writer(state, runtime)


def _extractive(state: AskState) -> Draft:
    return write_extractive(state["plan"], state.get("evidence") or [], state.get("idf") or {}, state["kb"])


def degraded(state: AskState, reason: str, tokens: int, draft: Draft | None = None) -> dict[str, Any]:
    """The extractive answer (``draft``, or written now) instead of the model's, marked degraded; the model is set
    aside, ``reason`` says why.

    The draft keeps the extractive writer's own note: the routers branch on it (a not-found whose words the corpus
    lacks ends the search), so the run goes on exactly as the extractive mode's would."""
    log.warning("llm answer failed (%s); degrading to the extractive answer", reason)
    draft = draft if draft is not None else _extractive(state)
    return {"draft": draft.model_copy(update={"degraded": True, "tokens": tokens}),
            "llm_failed": reason, "tokens": state.get("tokens", 0) + tokens}


def set_aside(state: AskState, verdict: Verdict) -> dict[str, Any] | None:
    """For a model's answer checked as written (``verdict``): None when it stands, else the extractive answer,
    degraded with the reason, and the model set aside for the rest of the question.

    It does not stand when it fails the evidence check, nor when the extractive writer finds no answer in the same
    evidence: the model may word and choose what the evidence says, but not overrule the abstention rules
    (``writer.abstention``), which a model that cites the closest evidence for a question it cannot answer would
    otherwise turn into an answer."""
    if not verdict.ok:
        shown = "; ".join(verdict.problems[:2]) or "no valid citation"
        return degraded(state, f"the model's answer failed the evidence check ({shown}); extractive answer", 0)
    written = _extractive(state)
    if written.not_found:
        return degraded(state, "the model answered where the evidence supports no answer (the extractive writer "
                               "finds none); extractive answer", 0, written)
    return None


async def _native_turn(ctx: AskContext, prompt: list[Any]) -> tuple[AIMessage, int]:
    runner = ctx.require_chat_model().bind_tools(prompts.TOOL_SPECS)
    spent = 0

    async def call() -> AIMessage:
        nonlocal spent
        reply = await runner.ainvoke(prompt)
        spent += llm.token_count(reply)
        check_finished(reply, ctx.settings.llm_max_tokens)
        return reply

    return await llm.with_retries(ctx, call), spent


async def _json_turn(ctx: AskContext, prompt: list[Any], call_id: str, evidence: list[Evidence],
                     earlier: list[AnyMessage]) -> tuple[AIMessage, int]:
    """A JSON-protocol turn: the step the model chose, as an ``AIMessage`` with its JSON and its tool call (none
    when it is done, or when it repeats a call it made this round)."""
    holder: dict[str, Any] = {}

    def parse(value: Any) -> list[ToolCall]:
        holder["value"] = value
        return parse_step(value, call_id)

    schema = step_schema(prompts.TOOL_SPECS, [e.path for e in sorted(evidence, key=lambda e: e.id)],
                         done=bool(earlier))
    calls, spent = await llm.structured_json(ctx, "ToolStep", schema, prompt, parse)
    if repeats(calls, earlier):
        log.info("the model repeated a tool call of this round; the search is done")
        calls = []
    return AIMessage(content=json.dumps(holder["value"]), tool_calls=calls), spent


async def agent(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """One model turn: call tools (→ ``tools``) or say it is done (→ the writer); a failure → degraded draft."""
    ctx = runtime.context
    mode = ctx.settings.llm_tools
    rounds = state.get("rounds", 0)
    fresh = state.get("agent_round", -1) != rounds  # a new round starts a new transcript
    steps = 0 if fresh else state.get("agent_steps", 0)
    earlier: list[AnyMessage] = [] if fresh else list(state.get("messages") or [])
    protocol = state.get("tool_protocol") or ("json" if mode == "json" else "native")
    plan, evidence = state["plan"], state.get("evidence") or []

    def prompt(kind: str) -> list[Any]:
        return turn_messages(ctx, plan.standalone or state["question"], evidence, plan.k_citations, earlier, kind)

    spent = 0
    try:
        if protocol == "native":
            try:
                reply, spent = await _native_turn(ctx, prompt("native"))
                switch = mode == "auto" and not reply.tool_calls and not earlier
            except Exception as exc:
                if not rejects_tools(exc):
                    raise
                switch = True
            if switch:  # no tool support here: the JSON protocol from now on
                log.info("the model called no tool natively; using the JSON tool protocol")
                protocol = "json"
        if protocol == "json":
            reply, more = await _json_turn(ctx, prompt("json"), f"call_{rounds}_{steps}", evidence, earlier)
            spent += more
    except Exception as exc:  # noqa: BLE001 - degrade to the extractive writer and say so
        return {"agent_round": rounds, "agent_steps": steps + 1, **degraded(state, describe(exc, ctx.settings), spent)}
    clear = [RemoveMessage(id=REMOVE_ALL_MESSAGES)] if fresh else []
    return {"agent_round": rounds, "agent_steps": steps + 1, "tool_protocol": protocol,
            "messages": [*clear, reply], "tokens": state.get("tokens", 0) + spent}


def _pending(messages: list[AnyMessage]) -> list[ToolCall]:
    """Tool calls of the last model turn that have no result yet, in the order the model asked for them."""
    for last in range(len(messages) - 1, -1, -1):
        turn = messages[last]
        if isinstance(turn, AIMessage):
            done = {m.tool_call_id for m in messages[last + 1:] if isinstance(m, ToolMessage)}
            return [tc for tc in turn.tool_calls if tc["id"] not in done]
    return []


def route_agent(state: AskState, runtime: Runtime[AskContext]) -> Literal["tools", "answer", "generate", "check"]:
    """A degraded draft → ``check``; pending tool calls → ``tools``; otherwise → the writer."""
    if state.get("draft") is not None:
        return "check"
    return "tools" if _pending(list(state.get("messages") or [])) else writer(state, runtime)


def _calls_run(messages: list[AnyMessage]) -> int:
    return sum(1 for m in messages if isinstance(m, ToolMessage) and m.status != "error")


def route_tools(state: AskState, runtime: Runtime[AskContext]) -> Literal["tools", "agent", "answer", "generate"]:
    """More tool calls of the same turn → ``tools`` again; else back to the model, or, once it has had
    ``MAX_TOOL_STEPS`` turns with tools or ``MAX_TOOL_CALLS`` calls, on to the writer (tools withdrawn)."""
    messages = list(state.get("messages") or [])
    if _pending(messages):
        return "tools"
    spent = state.get("agent_steps", 0) >= MAX_TOOL_STEPS or _calls_run(messages) >= MAX_TOOL_CALLS
    return writer(state, runtime) if spent else "agent"


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
        if added:  # the model is shown their text in the evidence block of its next prompt
            text += "\n\nAdded as evidence: " + ", ".join(e.label() for e in added)
    update: dict[str, Any] = {"messages": [ToolMessage(content=text, tool_call_id=call["id"], name=call["name"])]}
    if added:
        update["evidence"] = reset(grown)
    return update


async def answer(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """The final answer as structured output over the evidence; a failure → degraded draft."""
    ctx = runtime.context
    try:
        draft = await llm.write_answer(ctx, state, prompts.WRITER_SYSTEM, prompts.FINAL_ANSWER)
    except Exception as exc:  # noqa: BLE001 - degrade to the extractive writer and say so
        return degraded(state, describe(exc, ctx.settings), 0)
    return {"draft": draft, "tokens": state.get("tokens", 0) + draft.tokens}
