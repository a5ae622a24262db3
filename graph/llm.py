"""The LLM path: planner, tool-calling agent loop and final structured answer over any OpenAI-compatible server.

Every call is retried with backoff on timeouts, 429/5xx and invalid JSON; after the last retry the caller gets the
rules-based plan or the extractive answer instead, marked ``degraded``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, Field, ValidationError

from sift.chat import is_transient
from sift.errors import SiftError
from sift.graph import prompts
from sift.graph.context import AskContext
from sift.graph.extractive import write_extractive
from sift.graph.retrieval import build_evidence
from sift.graph.state import Citation, Draft, Evidence, Plan
from sift.models import Filters, Hit
from sift.retrievers.docql import execute, resolve_kb
from sift.retrievers.files import read_file_lines

log = logging.getLogger(__name__)
T = TypeVar("T")
MAX_TOOL_STEPS = 6


class LLMPlan(BaseModel):
    """The planner's structured output."""

    question_type: str = "explain"
    need_retrieval: bool = True
    standalone: str = ""
    identifiers: list[str] = Field(default_factory=list)
    key_terms: list[str] = Field(default_factory=list)
    intent: str = "both"
    index_type: str = "all"
    docql: list[str] = Field(default_factory=list)
    subqueries: list[str] = Field(default_factory=list)


class LLMCitation(BaseModel):
    """A citation in the final answer: evidence number and, optionally, narrower lines of that file."""

    evidence_id: int
    start_line: int | None = None
    end_line: int | None = None


class LLMAnswer(BaseModel):
    """The final structured answer."""

    answer: str
    citations: list[LLMCitation] = Field(default_factory=list)
    not_found: bool = False


class InvalidOutput(ValueError):
    """The model's reply did not parse into the expected schema."""


async def with_retries(ctx: AskContext, call: Callable[[], Awaitable[T]]) -> T:
    """Run ``call``; on timeout, transport errors, 429/5xx or invalid output retry with exponential backoff."""
    attempt = 0
    while True:
        try:
            return await asyncio.wait_for(call(), timeout=ctx.settings.llm_timeout_s + 1)
        except Exception as exc:  # noqa: BLE001 - any upstream failure is retried, then degraded by the caller
            if not _retryable(exc) or attempt >= ctx.limits.llm_retries:
                raise
            attempt += 1
            delay = ctx.limits.llm_backoff_s * (2 ** (attempt - 1))
            log.warning("llm call failed (%s); retry %d in %.2fs", type(exc).__name__, attempt, delay)
            await asyncio.sleep(delay)


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, InvalidOutput | ValidationError | json.JSONDecodeError | TimeoutError):
        return True
    return is_transient(exc)


def _tokens(msg: Any) -> int:
    usage = getattr(msg, "usage_metadata", None) or {}
    return int(usage.get("total_tokens") or 0)


def parse_json(content: Any, schema: type[BaseModel]) -> BaseModel:
    """Parse a model reply (optionally fenced) into ``schema``; InvalidOutput when it does not fit."""
    text = content if isinstance(content, str) else json.dumps(content)
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return schema.model_validate_json(text)
    except (ValidationError, ValueError) as exc:
        raise InvalidOutput(f"reply is not a valid {schema.__name__}: {str(exc)[:200]}") from exc


async def plan_with_llm(ctx: AskContext, question: str, history: Sequence[dict[str, Any]],
                        rules: Plan) -> tuple[Plan, int]:
    """One structured-output planner call; the rules' plan on failure. Returns the plan and tokens used."""
    messages = [SystemMessage(prompts.PLANNER_SYSTEM), HumanMessage(prompts.planner_user(question, history))]
    tokens = 0

    async def call() -> LLMPlan:
        nonlocal tokens
        reply = await ctx.chat_model.ainvoke(messages, response_format={"type": "json_object"})
        tokens += _tokens(reply)
        return parse_json(reply.content, LLMPlan)  # type: ignore[return-value]

    try:
        out = await with_retries(ctx, call)
    except Exception as exc:  # noqa: BLE001 - degrade to the rules
        log.warning("llm planner failed (%s); using the rules", type(exc).__name__)
        return rules, tokens
    update: dict[str, Any] = {"standalone": out.standalone or rules.standalone}
    if out.docql:
        update["docql"] = list(dict.fromkeys([*rules.docql, *out.docql]))[:6]
    if out.subqueries:
        update["subqueries"] = list(dict.fromkeys([update["standalone"], *out.subqueries]))[:4]
    if out.index_type in ("file", "function", "doc", "all"):
        update["index_type"] = out.index_type
    if out.identifiers:
        update["identifiers"] = list(dict.fromkeys([*rules.identifiers, *out.identifiers]))
    return rules.model_copy(update=update), tokens


def tool_specs() -> list[dict[str, Any]]:
    """OpenAI tool definitions for search, list_file_content and docql (seed 003)."""
    return prompts.TOOL_SPECS


def _run_tool(ctx: AskContext, kb: str, tenant: str, name: str, args: dict[str, Any]) -> tuple[str, list[Hit]]:
    """Execute one tool call; returns the text shown to the model and the hits that join the evidence."""
    try:
        if name == "search":
            result = ctx.searcher.search(str(args.get("question", "")), Filters(kb=kb, tenant=tenant),
                                         k=max(1, min(int(args.get("top_k", 5)), 10)),
                                         index_type=str(args.get("index_type", "all")))
            return json.dumps(result.as_dict()["files"])[:6000], list(result.hits)
        if name == "list_file_content":
            lines = read_file_lines(ctx.engine, kb, str(args.get("file_path", "")), args.get("start_line"),
                                    args.get("end_line"), tenant=tenant)
            hit = Hit(chunk_id=None, node_id=None, path=lines.path, start_line=lines.start_line,
                      end_line=max(lines.start_line, lines.end_line), kind="lines", name=lines.path, score=0.0,
                      channel="file", rank=1, channels=("file",))
            return lines.numbered()[:6000], [hit]
        if name == "docql":
            kb_id, gen = resolve_kb(ctx.engine, kb, tenant)
            result = execute(ctx.engine, kb_id, gen, str(args.get("query", "")), limit=10)
            from sift.retrievers.docql import result_hits

            return json.dumps(result["files"])[:6000], result_hits(result, 10)
        return f"unknown tool {name!r}", []
    except SiftError as exc:
        return f"error: {exc.message}", []


def _evidence_block(evidence: Sequence[Evidence]) -> str:
    return "\n\n".join(f"{e.label()} {e.kind} {e.name}\n{e.text[:1500]}" for e in evidence)


async def generate_with_llm(ctx: AskContext, state: dict[str, Any]) -> tuple[Draft, list[Evidence]]:
    """The agent loop: tool calls until a final JSON answer; on repeated failure, the extractive answer (degraded).

    Returns the draft and the full evidence list when tools added evidence (else an empty list).
    """
    kb, tenant, plan = state["kb"], state.get("tenant") or "default", state["plan"]
    evidence: list[Evidence] = list(state.get("evidence") or [])
    added = False
    tokens = 0
    messages: list[BaseMessage] = [
        SystemMessage(prompts.AGENT_SYSTEM),
        HumanMessage(prompts.agent_user(plan.standalone or state["question"], _evidence_block(evidence),
                                        plan.k_citations)),
    ]
    model = ctx.chat_model.bind_tools(tool_specs())
    try:
        for step in range(MAX_TOOL_STEPS + 1):
            final_only = step == MAX_TOOL_STEPS
            runner = ctx.chat_model if final_only else model
            if final_only:
                messages.append(HumanMessage(prompts.FORCE_FINAL))

            async def call(runner: Any = runner) -> AIMessage:
                nonlocal tokens
                reply = await runner.ainvoke(messages)
                tokens += _tokens(reply)
                if not reply.tool_calls:
                    parse_json(reply.content, LLMAnswer)
                return reply

            reply = await with_retries(ctx, call)
            messages.append(reply)
            if not reply.tool_calls:
                answer = parse_json(reply.content, LLMAnswer)
                draft = _draft(answer, evidence, tokens)  # type: ignore[arg-type]
                return draft, evidence if added else []
            for tc in reply.tool_calls:
                text, hits = await asyncio.to_thread(_run_tool, ctx, kb, tenant, tc["name"], tc.get("args") or {})
                if hits:
                    before = len(evidence)
                    evidence = await asyncio.to_thread(build_evidence, ctx.engine, kb, tenant, hits,
                                                       min(24, len(evidence) + 5), evidence)
                    added = added or len(evidence) > before
                    new = evidence[before:]
                    text += "\n\nEvidence added:\n" + _evidence_block(new)
                messages.append(ToolMessage(content=text, tool_call_id=tc["id"]))
    except Exception as exc:  # noqa: BLE001 - degrade to the extractive writer and say so
        log.warning("llm answer failed (%s); degrading to the extractive answer", type(exc).__name__)
        draft = write_extractive(plan, evidence, state.get("idf") or {}, kb)
        note = f"LLM unavailable ({type(exc).__name__}); extractive answer"
        return draft.model_copy(update={"degraded": True, "note": note, "tokens": tokens}), \
            evidence if added else []
    raise AssertionError("unreachable")


def _draft(answer: LLMAnswer, evidence: Sequence[Evidence], tokens: int) -> Draft:
    by_id = {e.id: e for e in evidence}
    citations = []
    for c in answer.citations:
        e = by_id.get(c.evidence_id)
        path = e.path if e else ""
        start = c.start_line or (e.start_line if e else 0)
        end = c.end_line or (e.end_line if e else 0)
        citations.append(Citation(evidence_id=c.evidence_id, path=path, start_line=start, end_line=end))
    return Draft(text=answer.answer, citations=citations, mode="llm", tokens=tokens, not_found=answer.not_found)


async def summarize_with_llm(ctx: AskContext, state: dict[str, Any]) -> Draft | None:
    """The forced summary: no tools, only the gathered evidence; None when the model fails."""
    evidence = state.get("evidence") or []
    messages = [SystemMessage(prompts.SUMMARY_SYSTEM),
                HumanMessage(prompts.agent_user(state["plan"].standalone, _evidence_block(evidence), 1))]
    tokens = 0

    async def call() -> LLMAnswer:
        nonlocal tokens
        reply = await ctx.chat_model.ainvoke(messages)
        tokens += _tokens(reply)
        return parse_json(reply.content, LLMAnswer)  # type: ignore[return-value]

    try:
        answer = await with_retries(ctx, call)
    except Exception as exc:  # noqa: BLE001
        log.warning("llm summary failed (%s)", type(exc).__name__)
        return None
    return _draft(answer, evidence, tokens)
