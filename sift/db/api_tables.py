"""Tables owned by the REST service: API keys, conversation threads and the question/answer record.

Defined on ``sift.db.tables.Base`` so Alembic migrates them with the rest (``alembic/versions/0002_api.py``,
``0006_client_thread_ids.py``).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, Index, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.orm import Mapped, mapped_column

from sift.db.tables import Base
from sift.models import THREAD_ID_MAX


class ApiKey(Base):
    """A bearer key mapped to a tenant; only the SHA-256 of the key is stored."""

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False)
    name: Mapped[str | None] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(20), nullable=False)
    key_hash: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime)

    __table_args__ = (Index("ix_api_keys_tenant", "tenant"),)


class Thread(Base):
    """A conversation of one tenant: the checkpointer holds its graph state, this row says whose it is.

    ``thread_id`` is the id the client sees (chosen by the client, or a uuid when it did not name one) and is
    unique per tenant only; ``checkpoint_id`` is the checkpointer's key for it, unique overall, so the same
    client-chosen id in two tenants names two conversations that never share state.
    """

    __tablename__ = "threads"

    tenant: Mapped[str] = mapped_column(String(200), primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(THREAD_ID_MAX), primary_key=True)
    checkpoint_id: Mapped[str] = mapped_column(String(64), nullable=False)
    kb: Mapped[str] = mapped_column(String(200), nullable=False)
    title: Mapped[str | None] = mapped_column(Text)
    meta: Mapped[dict | None] = mapped_column("metadata", JSON)
    turns: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())

    __table_args__ = (
        UniqueConstraint("checkpoint_id", name="uq_threads_checkpoint_id"),
        Index("ix_threads_tenant_updated", "tenant", "updated_at"),
    )


class QaRecord(Base):
    """One question and its answer, asked through the API or `sift ask` (the per-tenant record)."""

    __tablename__ = "qa_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False)
    kb: Mapped[str] = mapped_column(String(200), nullable=False)
    thread_id: Mapped[str] = mapped_column(String(THREAD_ID_MAX), nullable=False)
    # the thread's checkpointer key: tells a deleted thread's records from those of a later one of the same id
    checkpoint_id: Mapped[str | None] = mapped_column(String(64))
    question: Mapped[str] = mapped_column(Text, nullable=False)
    plan: Mapped[dict | None] = mapped_column(JSON)
    answer: Mapped[str | None] = mapped_column(Text)
    citations: Mapped[list | None] = mapped_column(JSON)
    grounded: Mapped[bool | None] = mapped_column(Boolean)
    mode: Mapped[str | None] = mapped_column(String(20))
    rounds: Mapped[int | None] = mapped_column(Integer)
    fallbacks: Mapped[int | None] = mapped_column(Integer)
    tokens: Mapped[int | None] = mapped_column(Integer)
    elapsed_ms: Mapped[float | None] = mapped_column(Float)
    timings: Mapped[dict | None] = mapped_column(JSON)
    # answered | error | cancelled
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="answered")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())

    __table_args__ = (
        Index("ix_qa_tenant_thread", "tenant", "thread_id", "id"),
        Index("ix_qa_tenant_kb_created", "tenant", "kb", "created_at"),
    )


class TenantRoot(Base):
    """A server-side directory one tenant's ingest jobs may read; a tenant with none uses SIFT_ALLOWED_ROOTS."""

    __tablename__ = "tenant_roots"

    tenant: Mapped[str] = mapped_column(String(200), primary_key=True)
    root: Mapped[str] = mapped_column(Text, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
