"""The thread store the REST API and the CLI share: who owns a conversation, its checkpointer key, its record.

A thread belongs to one tenant and one knowledge base. Its id is the client's: a chat bot may key threads as
``slack-C024BE91L``, and the first message to an id the tenant has not used creates the thread. The graph's
state lives in the checkpointer under ``checkpoint_id``, a uuid of the thread's own, so the same id in two tenants
names two conversations that never share state. Every question asked in a thread, through the API or
``sift ask``, is recorded in ``qa_records``. Only SQLAlchemy here: no graph, no model.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from sift.db.api_tables import QaRecord, Thread
from sift.errors import Conflict, InvalidQuery, NotFound
from sift.models import THREAD_ID, THREAD_ID_MAX

TITLE_CHARS = 120
_THREAD_ID = re.compile(THREAD_ID)


def new_thread_id() -> str:
    """A fresh, unguessable id (for a thread, or a thread's checkpointer key)."""
    return uuid.uuid4().hex


def check_thread_id(thread_id: str) -> str:
    """``thread_id`` when it matches ``THREAD_ID``; else ``InvalidQuery`` saying what an id may contain."""
    if not _THREAD_ID.fullmatch(thread_id):
        raise InvalidQuery(f"thread id {thread_id[:THREAD_ID_MAX + 8]!r} is not valid: use 1-{THREAD_ID_MAX} "
                           "letters, digits and _ - . : @ + = (no '/', spaces or control characters), not "
                           "starting with '.'", field="thread_id")
    return thread_id


def _row(conn: Connection, tenant: str, thread_id: str) -> Any:
    return conn.execute(select(Thread).where(Thread.tenant == tenant, Thread.thread_id == thread_id)).first()


def _owned(conn: Connection, tenant: str, thread_id: str) -> Any:
    row = _row(conn, tenant, thread_id)
    if row is None:
        raise NotFound(f"thread {thread_id!r} does not exist; send a message with this thread_id (or PUT "
                       f"/v1/threads/{thread_id}) to start it", field="thread_id")
    return row


def _create(engine: Engine, tenant: str, thread_id: str, kb: str, title: str | None,
            meta: dict[str, Any] | None) -> tuple[Any, bool]:
    """The thread's row, inserted when missing; ``(row, created)``. Two first messages racing on one id both
    end up in the one thread: the loser of the insert reads the winner's row."""
    with engine.connect() as conn:
        row = _row(conn, tenant, thread_id)
    if row is not None:
        return row, False
    try:
        with engine.begin() as conn:
            conn.execute(insert(Thread).values(tenant=tenant, thread_id=thread_id, checkpoint_id=new_thread_id(),
                                               kb=kb, title=title, meta=meta, turns=0))
            return _row(conn, tenant, thread_id), True
    except IntegrityError:
        with engine.connect() as conn:
            row = _row(conn, tenant, thread_id)
        if row is None:
            raise
        return row, False


def _same_kb(row: Any, kb: str) -> None:
    if row.kb != kb:
        raise Conflict(f"thread {row.thread_id!r} belongs to knowledge base {row.kb!r}; use another thread id for "
                       f"{kb!r}", field="kb")


def open_thread(engine: Engine, tenant: str, kb: str, thread_id: str | None, question: str) -> dict[str, Any]:
    """The thread of ``tenant`` to answer ``question`` in: a new one when ``thread_id`` is None, the tenant's
    thread of that id, or (first message to an unused id) a new thread of that id. Its dict has
    ``checkpoint_id``, the checkpointer key to run the graph under."""
    thread_id = new_thread_id() if thread_id is None else check_thread_id(thread_id)
    row, created = _create(engine, tenant, thread_id, kb, question[:TITLE_CHARS], None)
    if not created:
        _same_kb(row, kb)
        if row.title is None:  # made by PUT without a title: its first question names it
            with engine.begin() as conn:
                conn.execute(update(Thread).where(Thread.tenant == tenant, Thread.thread_id == thread_id)
                             .values(title=question[:TITLE_CHARS]))
    return {**_thread_dict(row), "checkpoint_id": row.checkpoint_id}


def put_thread(engine: Engine, tenant: str, thread_id: str, kb: str, *, title: str | None = None,
               meta: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
    """Create ``tenant``'s thread ``thread_id`` on ``kb`` (idempotent): ``(thread, created)``. For an existing
    thread, a given title or metadata replaces the stored one; another kb is a ``Conflict``."""
    check_thread_id(thread_id)
    row, created = _create(engine, tenant, thread_id, kb, title, meta)
    if created:
        return _thread_dict(row), True
    _same_kb(row, kb)
    changes = {k: v for k, v in (("title", title), ("meta", meta)) if v is not None}
    if changes:
        with engine.begin() as conn:
            conn.execute(update(Thread).where(Thread.tenant == tenant, Thread.thread_id == thread_id)
                         .values(**changes))
            row = _row(conn, tenant, thread_id)
    return _thread_dict(row), False


def checkpoint_id(engine: Engine, tenant: str, thread_id: str) -> str:
    """The checkpointer key of ``tenant``'s thread (NotFound for an unknown or another tenant's id)."""
    with engine.connect() as conn:
        return _owned(conn, tenant, thread_id).checkpoint_id


def get_thread(engine: Engine, tenant: str, thread_id: str) -> dict[str, Any]:
    """A thread of ``tenant`` with its recorded turns, oldest first (NotFound for anyone else's)."""
    with engine.connect() as conn:
        row = _owned(conn, tenant, thread_id)
        turns = conn.execute(
            select(QaRecord).where(QaRecord.tenant == tenant, QaRecord.thread_id == thread_id,
                                   QaRecord.checkpoint_id == row.checkpoint_id)
            .order_by(QaRecord.id)
        ).all()
    return {**_thread_dict(row), "messages": [_turn(t) for t in turns]}


def list_threads(engine: Engine, tenant: str, kb: str | None = None, limit: int = 50,
                 offset: int = 0) -> list[dict[str, Any]]:
    """``tenant``'s threads, most recently updated first."""
    stmt = select(Thread).where(Thread.tenant == tenant)
    if kb is not None:
        stmt = stmt.where(Thread.kb == kb)
    stmt = stmt.order_by(Thread.updated_at.desc(), Thread.thread_id).limit(limit).offset(offset)
    with engine.connect() as conn:
        return [_thread_dict(r) for r in conn.execute(stmt)]


def delete_thread(engine: Engine, tenant: str, thread_id: str) -> str:
    """Forget ``tenant``'s thread (NotFound for anyone else's) and return its checkpointer key, whose state the
    caller deletes; the thread's records stay for the audit trail."""
    with engine.begin() as conn:
        row = _owned(conn, tenant, thread_id)
        conn.execute(delete(Thread).where(Thread.tenant == tenant, Thread.thread_id == thread_id))
    return row.checkpoint_id


def record_turn(engine: Engine, tenant: str, kb: str, thread: dict[str, Any], question: str,
                answer: dict[str, Any] | None, *, status: str = "answered", error: str | None = None,
                timings: dict[str, Any] | None = None) -> int:
    """Store one question in ``thread`` (as ``open_thread`` returned it) with its answer, or the error that
    ended it, and bump the thread."""
    a = answer or {}
    thread_id = thread["thread_id"]
    values = {
        "tenant": tenant, "kb": kb, "thread_id": thread_id, "checkpoint_id": thread["checkpoint_id"],
        "question": question, "plan": a.get("plan"),
        "answer": a.get("text"), "citations": a.get("citations"), "grounded": a.get("grounded"),
        "mode": a.get("mode"), "rounds": a.get("rounds"), "fallbacks": a.get("fallbacks"),
        "tokens": _tokens(a.get("tokens")), "elapsed_ms": a.get("elapsed_ms"), "timings": timings,
        "status": status, "error": error,
    }
    with engine.begin() as conn:
        record_id = conn.execute(insert(QaRecord).values(**values).returning(QaRecord.id)).scalar_one()
        conn.execute(update(Thread).where(Thread.tenant == tenant, Thread.thread_id == thread_id,
                                          Thread.checkpoint_id == thread["checkpoint_id"])
                     .values(turns=Thread.turns + 1, updated_at=func.now()))
    return record_id


def _tokens(value: Any) -> int | None:
    if isinstance(value, dict):
        return int(sum(v for v in value.values() if isinstance(v, int | float)))
    return None if value is None else int(value)


def _thread_dict(row: Any) -> dict[str, Any]:
    return {"thread_id": row.thread_id, "kb": row.kb, "title": row.title, "metadata": row._mapping["metadata"] or {},
            "turns": row.turns, "created_at": row.created_at, "updated_at": row.updated_at}


def _turn(row: Any) -> dict[str, Any]:
    return {"id": row.id, "question": row.question, "answer": row.answer, "citations": row.citations or [],
            "grounded": row.grounded, "status": row.status, "error": row.error, "created_at": row.created_at}
