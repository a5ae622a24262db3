"""Thread ownership and the question/answer record, both in the database (no process memory involved)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, update

from sift.db.api_tables import QaRecord, Thread
from sift.errors import Conflict, NotFound

TITLE_CHARS = 120


def new_thread_id() -> str:
    """A fresh, unguessable thread id."""
    return uuid.uuid4().hex


def _thread_row(conn: Any, thread_id: str, tenant: str) -> Any:
    row = conn.execute(select(Thread).where(Thread.thread_id == thread_id)).first()
    if row is None or row.tenant != tenant:
        raise NotFound(f"thread {thread_id!r} does not exist; omit thread_id to start a new one", field="thread_id")
    return row


def open_thread(engine: Engine, tenant: str, kb: str, thread_id: str | None, question: str) -> str:
    """The thread to answer in: a new one when ``thread_id`` is None, else an existing one of this tenant and kb."""
    with engine.begin() as conn:
        if thread_id is None:
            thread_id = new_thread_id()
            conn.execute(insert(Thread).values(thread_id=thread_id, tenant=tenant, kb=kb,
                                               title=question[:TITLE_CHARS], turns=0))
            return thread_id
        row = _thread_row(conn, thread_id, tenant)
        if row.kb != kb:
            raise Conflict(f"thread {thread_id!r} belongs to knowledge base {row.kb!r}; start a new thread for "
                           f"{kb!r}", field="kb")
    return thread_id


def get_thread(engine: Engine, thread_id: str, tenant: str) -> dict[str, Any]:
    """A thread of ``tenant`` with its recorded turns, oldest first (NotFound for anyone else's)."""
    with engine.connect() as conn:
        row = _thread_row(conn, thread_id, tenant)
        turns = conn.execute(
            select(QaRecord).where(QaRecord.tenant == tenant, QaRecord.thread_id == thread_id)
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


def delete_thread(engine: Engine, thread_id: str, tenant: str) -> None:
    """Forget a thread's ownership row (NotFound for anyone else's); its records stay for the audit trail."""
    with engine.begin() as conn:
        _thread_row(conn, thread_id, tenant)
        conn.execute(delete(Thread).where(Thread.thread_id == thread_id))


def record_turn(engine: Engine, tenant: str, kb: str, thread_id: str, question: str, answer: dict[str, Any] | None,
                *, status: str = "answered", error: str | None = None, timings: dict[str, Any] | None = None) -> int:
    """Store one question with its answer (or the error that ended it) and bump the thread."""
    a = answer or {}
    values = {
        "tenant": tenant, "kb": kb, "thread_id": thread_id, "question": question, "plan": a.get("plan"),
        "answer": a.get("text"), "citations": a.get("citations"), "grounded": a.get("grounded"),
        "mode": a.get("mode"), "rounds": a.get("rounds"), "fallbacks": a.get("fallbacks"),
        "tokens": _tokens(a.get("tokens")), "elapsed_ms": a.get("elapsed_ms"), "timings": timings,
        "status": status, "error": error,
    }
    with engine.begin() as conn:
        record_id = conn.execute(insert(QaRecord).values(**values).returning(QaRecord.id)).scalar_one()
        conn.execute(update(Thread).where(Thread.thread_id == thread_id)
                     .values(turns=Thread.turns + 1, updated_at=func.now()))
    return record_id


def _tokens(value: Any) -> int | None:
    if isinstance(value, dict):
        return int(sum(v for v in value.values() if isinstance(v, int | float)))
    return None if value is None else int(value)


def _thread_dict(row: Any) -> dict[str, Any]:
    return {"thread_id": row.thread_id, "kb": row.kb, "title": row.title, "turns": row.turns,
            "created_at": row.created_at, "updated_at": row.updated_at}


def _turn(row: Any) -> dict[str, Any]:
    return {"id": row.id, "question": row.question, "answer": row.answer, "citations": row.citations or [],
            "grounded": row.grounded, "status": row.status, "error": row.error, "created_at": row.created_at}
