"""The graph's typed state and its reducers; the models that flow through it live in ``graph/models.py``.

Evidence and channel results accumulate through ``merge_items``: a plain list update extends (deduplicated by
key), while ``reset(items)`` replaces. The planner and every fallback round reset what they mean to replace, so
nothing grows silently across rounds or across the turns of one thread.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Required, cast

from pydantic import BaseModel, Field

# LangGraph reads input/output schemas with pydantic, which needs typing_extensions' TypedDict on Python < 3.12
from typing_extensions import TypedDict

# Checkpoints written before the models moved to ``graph/models.py`` name this module as theirs: it still
# provides them (``graph/checkpointer.py``'s ``STATE_TYPES`` admits both), so those threads load and continue.
from sift.graph.models import (
    Answer,
    ChannelResult,
    Citation,
    Confidence,
    Draft,
    Evidence,
    Plan,
    RankedChunk,
    RetrieveTask,
    Verdict,
)
from sift.retrievers.question import QuestionShape

__all__ = [
    "Answer", "AskInput", "AskOutput", "AskState", "ChannelResult", "Citation", "Confidence", "Draft", "Evidence",
    "MAX_TURNS", "Plan", "RankedChunk", "Reset", "RetrieveTask", "Verdict", "add_messages", "keep_last_turns",
    "merge_items", "reset",
]


class Reset(BaseModel):
    """A reducer instruction: replace the channel's value with ``items``."""

    items: list[Any] = Field(default_factory=list)


def reset(items: list[Any] | None = None) -> Reset:
    """Replace a list channel's value (the start of a round or a turn)."""
    return Reset(items=list(items or []))


def _item_key(item: Any) -> Any:
    key = getattr(item, "key", None)
    if key is not None:
        return key
    if isinstance(item, dict):
        return item.get("key") or repr(sorted(item.items()))
    return repr(item)


def merge_items(current: list[Any] | None, update: list[Any] | Reset | None) -> list[Any]:
    """Reducer: ``Reset`` replaces; a list extends, skipping items whose key is already present."""
    if isinstance(update, Reset):
        return list(update.items)
    if isinstance(update, dict) and set(update) == {"items"}:  # a Reset after a JSON round trip
        return list(update["items"])
    base = list(current or [])
    seen = {_item_key(i) for i in base}
    for item in update or []:
        k = _item_key(item)
        if k not in seen:
            seen.add(k)
            base.append(item)
    return base


#: How many turns a thread keeps in its state: enough for follow-ups, bounded so a long thread's checkpoints do not
#: grow without end (the full history is in ``qa_records``).
MAX_TURNS = 20


def keep_last_turns(current: list[dict[str, Any]] | None, update: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Reducer: append the new turns and keep the last ``MAX_TURNS``."""
    return [*(current or []), *(update or [])][-MAX_TURNS:]


def add_messages(current: list[Any] | None, update: Any) -> list[Any]:
    """Reducer of the agent's transcript: LangGraph's ``add_messages``, imported on the first message, so that
    the answer's models (``Answer``, ``Citation``) can be imported without LangGraph and LangChain."""
    from langgraph.graph.message import add_messages as merge

    return cast("list[Any]", merge(current or [], update))  # a list in, a list out


class AskState(TypedDict, total=False):
    """Graph state. ``turns`` persists across the questions of a thread (the last ``MAX_TURNS``); the rest is
    reset per question."""

    question: str
    """The question as asked."""
    shape: QuestionShape | None
    """What the question's wording asks (``question_shape``), read at intake."""
    kb: str
    """The knowledge base it is asked about."""
    tenant: str
    """The tenant that owns the knowledge base."""
    started: float
    """Wall-clock start of the run (seconds since the epoch), for the time budget."""
    plan: Plan
    """The current plan: the planner's, or the last fallback round's."""
    results: Annotated[list[ChannelResult], merge_items]
    """The retrieve branches' results (ids and scores of chunks), reset per question."""
    evidence: Annotated[list[Evidence], merge_items]
    """The numbered evidence the answer may cite, reset per question."""
    draft: Draft | None
    """The answer before checking."""
    verdict: Verdict | None
    """The checker's decision over the draft."""
    rounds: int
    """Retrieval rounds run for this question."""
    fallbacks: int
    """Fallback strategies tried for this question."""
    tokens: int
    """Model tokens spent on this question."""
    tried: list[str]
    """Fallback strategies already used, so none repeats."""
    idf: dict[str, float]
    """The question terms' idf in the knowledge base (with the absent-term ceiling)."""
    answer: Answer | None
    """The final answer."""
    turns: Annotated[list[dict[str, Any]], keep_last_turns]
    """The thread's last ``MAX_TURNS`` questions with their answers, for follow-ups."""
    messages: Annotated[list[Any], add_messages]
    """The LLM agent's transcript of the current round."""
    agent_steps: int
    """Model calls the agent made in the current round."""
    agent_round: int
    """The round ``messages`` belongs to (-1: none yet this question)."""
    tool_protocol: Literal["native", "json"] | None
    """How the agent calls tools in this question (``SIFT_LLM_TOOLS``; ``auto`` starts native)."""
    llm_failed: str | None
    """Why the model was set aside for the rest of this question (a failure after the retries, or an answer
    that failed the evidence check), for ``degraded_reasons``; None while it is in use."""


class AskInput(TypedDict, total=False):
    """What a caller (or Studio) sends: the question (``message``, as over REST) and the knowledge base."""

    message: NotRequired[Annotated[str, Field(description="The question about the code or docs (as over REST).")]]
    question: NotRequired[Annotated[str, Field(description="Alias of `message`, kept for older callers.")]]
    kb: Required[Annotated[str, Field(description="Knowledge base to answer from (see `sift kb list`).")]]
    tenant: NotRequired[Annotated[str, Field(description="Tenant that owns the knowledge base.")]]


class AskOutput(TypedDict, total=False):
    """What a run returns."""

    answer: Answer | None
