"""The LLM calls over any OpenAI-compatible server: the planner, the structured final answer and the summary.

The tool-calling loop itself is graph steps (``graph/agent.py``); this module holds the calls. Every reply is
capped at ``max_tokens``, and one that stops for length is invalid output. A failed call is handled by what the
failure means (``sift.chat.classify``): timeouts, 429 and 5xx are retried with backoff; invalid output is retried
with the reason told to the model; 401/403/404 and other 4xx fail at once; after that the caller gets the
rules-based plan or the extractive answer instead, marked ``degraded`` with ``sift.chat.describe``'s reason.
Structured replies ask for ``response_format: json_schema``; a server that refuses it (HTTP 400, or llama-cpp-python's
500) gets JSON mode with the same schema (``{"type": "json_object", "schema": …}``, grammar-constrained on llama.cpp),
and the reply is validated by the same pydantic model either way.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from sift.chat import CutOff, InvalidOutput, check_finished, classify, cut_off_reason, describe
from sift.graph import prompts
from sift.graph.budget import evidence_block, messages_tokens, prompt_room, shown_ids
from sift.graph.context import AskContext
from sift.graph.models import Citation, Draft, Evidence, Plan
from sift.graph.state import AskState
from sift.retrievers.question import question_shape

log = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
__all__ = ["InvalidOutput", "LLMAnswer", "LLMPlan", "plan_with_llm", "structured", "with_retries"]


class LLMPlan(BaseModel):
    """The planner's structured output."""

    question_type: str = Field("explain", max_length=20)
    need_retrieval: bool = True
    standalone: str = Field("", max_length=400)
    identifiers: list[str] = Field(default_factory=list, max_length=8)
    key_terms: list[str] = Field(default_factory=list, max_length=12)
    intent: str = Field("both", max_length=10)
    index_type: str = Field("all", max_length=10)
    docql: list[str] = Field(default_factory=list, max_length=6)
    subqueries: list[str] = Field(default_factory=list, max_length=4)


class LLMCitation(BaseModel):
    """A citation in the final answer: evidence number and, optionally, narrower lines of that file."""

    evidence_id: int = Field(ge=1, le=999, description="The [n] of the evidence item cited.")
    start_line: int | None = Field(None, ge=1, le=10**6, description="First cited line, when narrower.")
    end_line: int | None = Field(None, ge=1, le=10**6, description="Last cited line, when narrower.")


class LLMAnswer(BaseModel):
    """The final structured answer."""

    answer: str = Field(max_length=3000, description="The answer; every sentence ends with the [n] markers it "
                                                      "relies on.")
    citations: list[LLMCitation] = Field(default_factory=list, max_length=12)
    not_found: bool = Field(False, description="True when the evidence does not answer the question.")


async def with_retries(ctx: AskContext, call: Callable[[], Awaitable[T]],
                       on_retry: Callable[[Exception], None] | None = None) -> T:
    """Run ``call``; retry transient failures and invalid output with exponential backoff (``on_retry`` sees
    each failure first); anything else, or the last failure, is raised."""
    attempt = 0
    while True:
        try:
            return await asyncio.wait_for(call(), timeout=ctx.settings.llm_timeout_s + 1)
        except Exception as exc:  # noqa: BLE001 - classified: retried, or raised for the caller to degrade
            if classify(exc) not in ("transient", "output") or attempt >= ctx.limits.llm_retries:
                raise
            attempt += 1
            delay = ctx.limits.llm_backoff_s * (2 ** (attempt - 1))
            log.warning("llm call failed (%s); retry %d in %.2fs", type(exc).__name__, attempt, delay)
            if on_retry is not None:
                on_retry(exc)
            await asyncio.sleep(delay)


def token_count(msg: Any) -> int:
    """Total tokens a reply reports (0 when the server does not say)."""
    usage = getattr(msg, "usage_metadata", None) or {}
    return int(usage.get("total_tokens") or 0)


def response_formats(name: str, schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The structured-output request (``json_schema``) and its JSON-mode fallback carrying the same schema."""
    return ({"type": "json_schema", "json_schema": {"name": name, "schema": schema}},
            {"type": "json_object", "schema": schema})


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def reply_json(reply: AIMessage) -> Any:
    """The JSON value a reply holds (a Markdown fence around it is allowed); ``InvalidOutput`` otherwise."""
    text = reply.content if isinstance(reply.content, str) else ""
    m = _FENCE.match(text)
    try:
        return json.loads(m.group(1) if m else text)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(f"the reply is not JSON ({exc.msg} at {exc.pos}): {text[:120]!r}") from None


async def structured_json(ctx: AskContext, name: str, schema: dict[str, Any], messages: Sequence[BaseMessage],
                          parse: Callable[[Any], T]) -> tuple[T, int]:
    """One reply constrained to ``schema`` and turned into a value by ``parse`` (which raises ``InvalidOutput``
    or ``ValidationError``), with the tokens spent. A retry after invalid output tells the model what was wrong."""
    tokens = 0
    model = ctx.require_chat_model()
    strict, loose = response_formats(name, schema)
    for fmt in (strict, loose):
        prompt = list(messages)

        async def call(fmt: dict[str, Any] = fmt, prompt: list[BaseMessage] = prompt) -> T:
            nonlocal tokens
            try:
                reply = await model.bind(response_format=fmt).ainvoke(prompt)
            except Exception as exc:
                if type(exc).__name__ == "LengthFinishReasonError":  # openai's parse API stops at a length stop
                    raise CutOff(cut_off_reason(ctx.settings.llm_max_tokens)) from exc
                raise
            tokens += token_count(reply)
            check_finished(reply, ctx.settings.llm_max_tokens)
            return parse(reply_json(reply))

        def told(exc: Exception, prompt: list[BaseMessage] = prompt) -> None:
            if classify(exc) == "output":  # the same prompt at temperature 0 would get the same reply
                del prompt[len(messages):]
                prompt.append(HumanMessage(prompts.invalid_reply(_reason(exc))))

        try:
            return await with_retries(ctx, call, told), tokens
        except Exception as exc:
            if fmt is strict and classify(exc) == "schema":
                log.info("the server refused a json_schema response_format; using JSON mode with the schema")
                continue
            raise
    raise AssertionError("unreachable")


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
    return str(exc)[:200]


async def structured(ctx: AskContext, schema: type[M], messages: Sequence[BaseMessage]) -> tuple[M, int]:
    """One reply parsed into ``schema`` (see ``structured_json``), with the tokens spent."""
    return await structured_json(ctx, schema.__name__, schema.model_json_schema(), messages, schema.model_validate)


async def plan_with_llm(ctx: AskContext, question: str, history: Sequence[dict[str, Any]],
                        rules: Plan) -> tuple[Plan, int, str | None]:
    """One structured-output planner call merged into the rules' plan; on failure the rules' plan, saying why
    (``planner_note``). Returns the plan, the tokens used, and the reason to set the model aside for the question
    when the failure says the configuration is wrong (401, 403, 404)."""
    messages = [SystemMessage(prompts.PLANNER_SYSTEM), HumanMessage(prompts.planner_user(question, history))]
    try:
        out, tokens = await structured(ctx, LLMPlan, messages)
    except Exception as exc:  # noqa: BLE001 - degrade to the rules
        log.warning("llm planner failed (%s); using the rules", type(exc).__name__)
        note = describe(exc, ctx.settings)
        return rules.model_copy(update={"planner_note": note}), 0, note if classify(exc) == "fatal" else None
    update: dict[str, Any] = {"standalone": out.standalone.strip() or rules.standalone, "planner": "llm"}
    if out.docql:
        update["docql"] = list(dict.fromkeys([*rules.docql, *out.docql]))[:6]
    if out.subqueries:
        update["subqueries"] = list(dict.fromkeys([update["standalone"], *out.subqueries]))[:4]
    if out.index_type in ("file", "function", "doc", "all"):
        update["index_type"] = out.index_type
    asked = " ".join([question, *(str(t.get("question", "")) + " " + str(t.get("answer", "")) for t in history)])
    named = [i for i in out.identifiers if i and i in asked]  # one the conversation never names is invented
    if named:
        update["identifiers"] = list(dict.fromkeys([*rules.identifiers, *named]))
    if update["standalone"] != rules.standalone:  # the model's rewording is the question the plan answers now
        update["question_shape"] = question_shape(update["standalone"])
    return rules.model_copy(update=update), tokens, None


def to_draft(answer: LLMAnswer, evidence: Sequence[Evidence], tokens: int) -> Draft:
    """The draft of a structured answer, its citations resolved against the evidence (checked by ``check``)."""
    by_id = {e.id: e for e in evidence}
    citations = []
    for c in answer.citations:
        e = by_id.get(c.evidence_id)
        path = e.path if e else ""
        start = c.start_line or (e.start_line if e else 0)
        end = c.end_line or (e.end_line if e else 0)
        if e is not None and not e.start_line <= start <= end <= e.end_line:  # a narrowing outside the item
            start, end = e.start_line, e.end_line  # is no narrowing: the item's own lines (the marker cites it)
        citations.append(Citation(evidence_id=c.evidence_id, path=path, start_line=start, end_line=end))
    return Draft(text=answer.answer, citations=citations, mode="llm", tokens=tokens, not_found=answer.not_found)


def writer_messages(ctx: AskContext, system: str, question: str, evidence: Sequence[Evidence], k: int,
                    closing: str) -> list[BaseMessage]:
    """The writer's prompt: instructions, then the evidence that fits the context (by rank), the question and
    ``closing``."""
    room = prompt_room(ctx.settings)
    fixed = [system, prompts.agent_user(question, "", k) + "\n\n" + closing]
    block = evidence_block(evidence, None if room is None else max(0, room - messages_tokens(fixed)))
    return [SystemMessage(system), HumanMessage(prompts.agent_user(question, block, k) + "\n\n" + closing)]


async def write_answer(ctx: AskContext, state: AskState, system: str, closing: str) -> Draft:
    """The final answer over the evidence as structured output; raises after the retries."""
    plan, evidence = state["plan"], state.get("evidence") or []
    messages = writer_messages(ctx, system, plan.standalone or state["question"], evidence, plan.k_citations,
                               closing)
    schema = answer_schema(shown_ids(messages[-1].text), ctx.settings.llm_max_tokens)
    answer, tokens = await structured_json(ctx, "LLMAnswer", schema, messages, LLMAnswer.model_validate)
    return to_draft(answer, evidence, tokens)


CITATIONS = 4  # citations a reply may list
CITATIONS_TOKENS = 140  # what they and the JSON around the answer may take of a reply (digits are a token each)


def answer_schema(ids: Sequence[int], max_tokens: int) -> dict[str, Any]:
    """``LLMAnswer``'s JSON schema with each citation's evidence number one of ``ids`` (those the prompt shows),
    so a constrained model cannot cite evidence it was not given, at most ``CITATIONS`` of them, and the answer
    short enough to end within ``max_tokens`` (1.5 characters a token): a model that rambles is made to close
    the object, not cut off."""
    schema = LLMAnswer.model_json_schema()
    if ids:
        schema["$defs"]["LLMCitation"]["properties"]["evidence_id"] = {"enum": list(ids), "type": "integer"}
    schema["properties"]["citations"]["maxItems"] = CITATIONS
    limit = schema["properties"]["answer"]["maxLength"]
    schema["properties"]["answer"]["maxLength"] = max(100, min(limit, 3 * (max_tokens - CITATIONS_TOKENS) // 2))
    return schema


async def summarize_with_llm(ctx: AskContext, state: AskState) -> Draft | None:
    """The forced summary: no tools, only the gathered evidence; None when the model fails."""
    try:
        return await write_answer(ctx, state, prompts.SUMMARY_SYSTEM, prompts.SUMMARY_CLOSING)
    except Exception as exc:  # noqa: BLE001
        log.warning("llm summary failed (%s)", type(exc).__name__)
        return None
