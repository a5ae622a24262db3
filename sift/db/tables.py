"""SQLAlchemy 2.0 tables. Alembic (``alembic/``) creates and migrates them; nothing calls ``create_all``.

Generations: a knowledge base serves ``knowledge_bases.current_generation`` = G. A file version row is visible
in G when ``gen_from <= G AND (gen_to IS NULL OR gen_to > G)``. An ingest run writes new file versions with
``gen_from = G+1`` and closes replaced/deleted ones with ``gen_to = G+1``; neither changes what G sees, so a
crash leaves G intact. Publishing is one UPDATE of ``current_generation``. Nodes, chunks, entities and refs
belong to one file version (``file_id``) and share its visibility.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base; ``Base.metadata`` is what Alembic migrates."""


class KnowledgeBase(Base):
    __tablename__ = "knowledge_bases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False, default="default")
    root_path: Mapped[str] = mapped_column(Text, nullable=False)
    public: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    current_generation: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())

    __table_args__ = (UniqueConstraint("tenant", "name", name="uq_kb_tenant_name"),)


class Generation(Base):
    __tablename__ = "generations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"), nullable=False)
    number: Mapped[int] = mapped_column(Integer, nullable=False)
    # building | published | retired | abandoned
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    index_path: Mapped[str | None] = mapped_column(Text)
    stats: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    published_at: Mapped[datetime | None] = mapped_column(DateTime)

    __table_args__ = (UniqueConstraint("kb_id", "number", name="uq_generation_kb_number"),)


class File(Base):
    __tablename__ = "files"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"), nullable=False)
    gen_from: Mapped[int] = mapped_column(Integer, nullable=False)
    gen_to: Mapped[int | None] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    language: Mapped[str] = mapped_column(String(40), nullable=False)
    source_type: Mapped[str] = mapped_column(String(10), nullable=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    size_bytes: Mapped[int] = mapped_column(Integer, nullable=False)
    line_count: Mapped[int] = mapped_column(Integer, nullable=False)
    parser: Mapped[str] = mapped_column(String(40), nullable=False)
    parse_error: Mapped[str | None] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text, nullable=False)
    chunking: Mapped[int] = mapped_column(Integer, nullable=False, server_default="1")  # ingest.chunk.CHUNKING

    __table_args__ = (
        Index("ix_files_kb_path", "kb_id", "path"),
        Index("ix_files_kb_gen", "kb_id", "gen_from", "gen_to"),
    )


class Node(Base):
    __tablename__ = "nodes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(Integer, nullable=False)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), nullable=False)
    parent_id: Mapped[int | None] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    language: Mapped[str] = mapped_column(String(40), nullable=False)
    source_type: Mapped[str] = mapped_column(String(10), nullable=False)
    kind: Mapped[str] = mapped_column(String(20), nullable=False)
    name: Mapped[str] = mapped_column(Text, nullable=False)
    qualified_name: Mapped[str] = mapped_column(Text, nullable=False)
    level: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    start_line: Mapped[int] = mapped_column(Integer, nullable=False)
    end_line: Mapped[int] = mapped_column(Integer, nullable=False)
    body_start_line: Mapped[int | None] = mapped_column(Integer)
    signature: Mapped[str | None] = mapped_column(Text)
    docstring: Mapped[str | None] = mapped_column(Text)
    anchor: Mapped[str | None] = mapped_column(Text)
    meta: Mapped[dict | None] = mapped_column(JSON)

    __table_args__ = (
        Index("ix_nodes_file", "file_id"),
        Index("ix_nodes_kb_kind_name", "kb_id", "kind", "name"),
        Index("ix_nodes_kb_name", "kb_id", "name"),
        Index("ix_nodes_kb_path", "kb_id", "path"),
        Index("ix_nodes_kb_level", "kb_id", "kind", "level"),
    )


class Chunk(Base):
    __tablename__ = "chunks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(Integer, nullable=False)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), nullable=False)
    node_id: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(10), nullable=False)
    source_type: Mapped[str] = mapped_column(String(10), nullable=False)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    language: Mapped[str] = mapped_column(String(40), nullable=False)
    # The display name, computed from the identity columns below when the chunk is cut (sift.models.display_name).
    name: Mapped[str] = mapped_column(Text, nullable=False)
    symbol: Mapped[str] = mapped_column(Text, nullable=False, server_default="")
    part: Mapped[int | None] = mapped_column(Integer)
    module_code: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())
    heading_path: Mapped[str | None] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer, nullable=False)
    end_line: Mapped[int] = mapped_column(Integer, nullable=False)
    public: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    content_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)

    __table_args__ = (
        Index("ix_chunks_file", "file_id"),
        Index("ix_chunks_kb_kind", "kb_id", "kind"),
        Index("ix_chunks_hash", "content_hash"),
    )


class Entity(Base):
    __tablename__ = "entities"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(Integer, nullable=False)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), nullable=False)
    node_id: Mapped[int | None] = mapped_column(Integer)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    type: Mapped[str] = mapped_column(String(20), nullable=False)
    name: Mapped[str] = mapped_column(Text, nullable=False)
    detail: Mapped[str | None] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer, nullable=False)
    end_line: Mapped[int] = mapped_column(Integer, nullable=False)

    __table_args__ = (
        Index("ix_entities_file", "file_id"),
        Index("ix_entities_kb_type_name", "kb_id", "type", "name"),
    )


class Ref(Base):
    """A call site recorded at ingestion (name-based resolution)."""

    __tablename__ = "refs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(Integer, nullable=False)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), nullable=False)
    path: Mapped[str] = mapped_column(Text, nullable=False)
    caller_node_id: Mapped[int | None] = mapped_column(Integer)
    caller_name: Mapped[str | None] = mapped_column(Text)
    callee: Mapped[str] = mapped_column(Text, nullable=False)
    callee_name: Mapped[str] = mapped_column(Text, nullable=False)  # last dotted component, for lookup
    callee_qualified: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int] = mapped_column(Integer, nullable=False)
    # The callee is a name the calling function binds itself (``ParsedRef.bound_locally``): no definition's caller.
    bound_locally: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())

    __table_args__ = (
        Index("ix_refs_file", "file_id"),
        Index("ix_refs_kb_callee", "kb_id", "callee_name"),
        Index("ix_refs_kb_caller", "kb_id", "caller_name"),
    )


class EmbeddingCache(Base):
    """Vectors keyed by (model id, content hash): unchanged text is never embedded twice."""

    __tablename__ = "embedding_cache"

    model_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    dim: Mapped[int] = mapped_column(Integer, nullable=False)
    vector: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class IngestJob(Base):
    __tablename__ = "ingest_jobs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kb_id: Mapped[int] = mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"), nullable=False)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False, default="default")
    source_path: Mapped[str] = mapped_column(Text, nullable=False)
    # queued | running | succeeded | failed
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    # null | searchable (keyword search serves the new content) | complete (its vectors are published too)
    ready: Mapped[str | None] = mapped_column(String(20))
    generation: Mapped[int | None] = mapped_column(Integer)
    progress: Mapped[dict | None] = mapped_column(JSON)
    stats: Mapped[dict | None] = mapped_column(JSON)
    failures: Mapped[list | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    worker: Mapped[str | None] = mapped_column(String(200))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    elapsed_s: Mapped[float | None] = mapped_column(Float)
    # The process running the job: on its own host, a pid whose start time no longer matches means it is gone.
    host: Mapped[str | None] = mapped_column(String(200))
    pid: Mapped[int | None] = mapped_column(Integer)
    pid_started: Mapped[int | None] = mapped_column(BigInteger)

    # AUTOINCREMENT: a job id is never handed out twice, even after its kb (and the row) is deleted.
    __table_args__ = (Index("ix_jobs_kb_status", "kb_id", "status"), {"sqlite_autoincrement": True})


class GenerationLease(Base):
    """A replica's use of a generation: garbage collection keeps a generation while any lease on it is fresh."""

    __tablename__ = "generation_leases"

    kb_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(Integer, primary_key=True)
    replica: Mapped[str] = mapped_column(String(200), primary_key=True)
    last_used_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
