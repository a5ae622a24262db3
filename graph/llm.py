"""The LLM calls over any OpenAI-compatible server: the planner, the structured final answer and the summary.

The tool-calling loop itself is graph steps (``graph/agent.py``); this module holds the calls. Every call is
retried with backoff on timeouts, 429/5xx and invalid output; after the last retry the caller gets the
rules-based plan or the extractive answer instead, marked ``degraded``. The final answer uses the model's
structured output (``with_structured_output``, JSON-schema method); a server that rejects a JSON schema
``response_format`` gets JSON mode, validated by the same pydantic model.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from sift.chat import is_transient
from sift.graph import prompts
from sift.graph.context import AskContext
from sift.graph.state import AskState, Citation, Draft, Evidence, Plan
from sift.graph.tools import evidence_block

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


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

    evidence_id: int = Field(description="The [n] of the evidence item cited.")
    start_line: int | None = Field(None, description="First cited line, when narrower than the evidence.")
    end_line: int | None = Field(None, description="Last cited line, when narrower than the evidence.")


class LLMAnswer(BaseModel):
    """The final structured answer."""

    answer: str = Field(description="The answer; every sentence ends with the [n] markers it relies on.")
    citations: list[LLMCitation] = Field(default_factory=list)
    not_found: bool = Field(False, description="True when the evidence does not answer the question.")


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


def token_count(msg: Any) -> int:
    """Total tokens a reply reports (0 when the server does not say)."""
    usage = getattr(msg, "usage_metadata", None) or {}
    return int(usage.get("total_tokens") or 0)


async def plan_with_llm(ctx: AskContext, question: str, history: Sequence[dict[str, Any]],
                        rules: Plan) -> tuple[Plan, int]:
    """One structured-output planner call; the rules' plan on failure. Returns the plan and tokens used."""
    messages = [SystemMessage(prompts.PLANNER_SYSTEM), HumanMessage(prompts.planner_user(question, history))]
    try:
        out, tokens = await structured(ctx, LLMPlan, messages)
    except Exception as exc:  # noqa: BLE001 - degrade to the rules
        log.warning("llm planner failed (%s); using the rules", type(exc).__name__)
        return rules, 0
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


async def structured(ctx: AskContext, schema: type[M], messages: Sequence[BaseMessage]) -> tuple[M, int]:
    """One reply parsed into ``schema``, with the tokens spent: JSON-schema structured output, or JSON mode
    validated by pydantic when the server rejects a JSON schema (HTTP 400). Raises after the last retry."""
    tokens = 0
    for method in ("json_schema", "json_mode"):
        runner = ctx.require_chat_model().with_structured_output(schema, method=method, include_raw=True)

        async def call(runner: Any = runner) -> M:
            nonlocal tokens
            out = await runner.ainvoke(list(messages))
            tokens += token_count(out["raw"])
            if out.get("parsing_error") is not None or not isinstance(out.get("parsed"), schema):
                raise InvalidOutput(f"reply is not a valid {schema.__name__}: {str(out.get('parsing_error'))[:200]}")
            return out["parsed"]

        try:
            return await with_retries(ctx, call), tokens
        except Exception as exc:
            if method == "json_schema" and getattr(exc, "status_code", None) == 400:
                log.info("the server rejected a JSON schema response_format; using JSON mode")
                continue
            raise
    raise AssertionError("unreachable")


def to_draft(answer: LLMAnswer, evidence: Sequence[Evidence], tokens: int) -> Draft:
    """The checked-answer draft for a structured answer: citations resolved against the evidence."""
    return _draft(answer, evidence, tokens)


async def summarize_with_llm(ctx: AskContext, state: AskState) -> Draft | None:
    """The forced summary: no tools, only the gathered evidence; None when the model fails."""
    evidence = state.get("evidence") or []
    messages = [SystemMessage(prompts.SUMMARY_SYSTEM),
                HumanMessage(prompts.agent_user(state["plan"].standalone, evidence_block(evidence), 1))]
    try:
        answer, tokens = await structured(ctx, LLMAnswer, messages)
    except Exception as exc:  # noqa: BLE001
        log.warning("llm summary failed (%s)", type(exc).__name__)
        return None
    return _draft(answer, evidence, tokens)
