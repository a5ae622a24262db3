"""The first node: read the question (``message``, or its alias ``question``) and check the knowledge base.

REST sends ``message``; Studio and older callers may send ``question``. Either way the rest of the graph reads
``state["question"]``. A missing or unknown knowledge base is a clear error naming the field and the knowledge
bases the tenant has, instead of a ``KeyError`` deep inside a later node.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from sqlalchemy import Engine, select

from sift.db.tables import KnowledgeBase
from sift.errors import InvalidQuery, NotFound
from sift.graph.context import AskContext
from sift.graph.state import AskState
from sift.models import MAX_QUESTION_CHARS
from sift.retrievers.question import question_shape


# LangGraph's server shows the message of a ValueError to the Studio user and hides other exceptions' messages;
# these stay ``SiftError``s for sift's own error mapping (400 and 404).
class BadInput(InvalidQuery, ValueError):
    """The run's input lacks the question or the knowledge base, or the question is too long."""


class UnknownKb(NotFound, ValueError):
    """The input names a knowledge base the tenant does not have."""


class IntakeState(AskState, total=False):
    """What ``intake`` reads: the state plus the input's ``message`` (not a field the other nodes see)."""

    message: str | None


def known_kbs(engine: Engine, tenant: str) -> list[str]:
    """Names of the tenant's knowledge bases, sorted."""
    with engine.connect() as conn:
        rows = conn.execute(select(KnowledgeBase.name).where(KnowledgeBase.tenant == tenant)
                            .order_by(KnowledgeBase.name)).scalars().all()
    return list(rows)


def _names(kbs: list[str]) -> str:
    return ", ".join(kbs) if kbs else "none yet (run `sift ingest PATH --kb NAME`)"


def check_kb(engine: Engine, kb: str | None, tenant: str) -> None:
    """Raise ``BadInput`` (no kb) or ``UnknownKb``, naming the field and the known knowledge bases."""
    if not kb or not isinstance(kb, str):
        raise BadInput(f"the input needs `kb`, the knowledge base to answer from; known: "
                           f"{_names(known_kbs(engine, tenant))}", field="kb")
    kbs = known_kbs(engine, tenant)
    if kb not in kbs:
        raise UnknownKb(f"unknown knowledge base `kb`={kb!r}; known: {_names(kbs)}", field="kb")


def read_question(state: dict[str, Any]) -> str:
    """The question of this run: ``message``, else ``question``; ``BadInput`` when empty or too long."""
    raw = state.get("message") or state.get("question") or ""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        raise BadInput("the input needs `message`, the question to answer (`question` is accepted as an "
                           "alias)", field="message")
    if len(text) > MAX_QUESTION_CHARS:
        raise BadInput(f"`message` is longer than {MAX_QUESTION_CHARS} characters", field="message")
    return text


async def intake(state: IntakeState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Normalise the input into ``question`` and read its shape, check ``kb``, and clear the previous question's
    agent transcript."""
    question = read_question(dict(state))
    tenant = state.get("tenant") or "default"
    await asyncio.to_thread(check_kb, runtime.context.engine, state.get("kb"), tenant)
    # ``message`` is cleared so a later turn that sends only ``question`` is not answered with this one.
    return {"question": question, "shape": question_shape(question), "message": None, "tenant": tenant,
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)], "agent_steps": 0, "agent_round": -1}
