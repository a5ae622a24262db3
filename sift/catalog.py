"""The read side of the catalog: which knowledge base, which generation, where its indexes live, which lines.

Ingestion (``sift.ingest.store``) writes knowledge bases, generations and file versions; everything that only
reads them — retrieval, the graph, the API — comes here, so no reader depends on the write side. Leases record
which generations replicas still read, so garbage collection keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select, update

from sift.db import visible_in
from sift.db.tables import File, Generation, GenerationLease, KnowledgeBase
from sift.errors import IndexNotReady, KbNotFound, NotFound
from sift.text import split_lines


@dataclass(frozen=True, slots=True)
class KbRef:
    """The identity and serving generation of a knowledge base."""

    id: int
    name: str
    tenant: str
    root_path: str
    public: bool
    generation: int


def _kb_ref(row: Any) -> KbRef:
    return KbRef(row.id, row.name, row.tenant, row.root_path, row.public, row.current_generation)


def get_kb(engine: Engine | Connection, name: str, tenant: str = "default") -> KbRef:
    """The knowledge base ``name`` of ``tenant``; NotFound if there is none."""
    stmt = select(KnowledgeBase).where(KnowledgeBase.name == name, KnowledgeBase.tenant == tenant)
    if isinstance(engine, Connection):
        row = engine.execute(stmt).first()
    else:
        with engine.connect() as conn:
            row = conn.execute(stmt).first()
    if row is None:
        raise KbNotFound(f"knowledge base {name!r} does not exist; create it with `sift ingest PATH --kb {name}`")
    return _kb_ref(row)


def get_serving_kb(engine: Engine, name: str, tenant: str = "default") -> KbRef:
    """Like :func:`get_kb`, but IndexNotReady while no generation has been published."""
    kb = get_kb(engine, name, tenant)
    if kb.generation < 1:
        raise IndexNotReady(f"knowledge base {name!r} has no published index yet; wait for its ingest to finish")
    return kb


def kb_index_dir(index_root: Path, kb_id: int) -> Path:
    """The directory holding every index generation of one knowledge base."""
    return index_root / f"kb{kb_id}"


def generation_dir(index_root: Path, kb_id: int, number: int) -> Path:
    """Where the index files of one generation live."""
    return kb_index_dir(index_root, kb_id) / f"g{number}"


def keyword_dir(index_root: Path, kb_id: int, number: int) -> Path:
    """Where a generation's keyword-only index lives until its vectors are published (``ingest.searchable``)."""
    return kb_index_dir(index_root, kb_id) / f"g{number}.keywords"


def index_dir_of(index_root: Path, kb_id: int, number: int, stored: str | None) -> Path:
    """The index directory of a generation whose ``index_path`` column holds ``stored``: a path relative to the
    index root (``kb3/g7``), so a data directory moved or copied elsewhere reads its own indexes."""
    if not stored:
        return generation_dir(index_root, kb_id, number)
    path = Path(stored)
    return path if path.is_absolute() else index_root / path


def read_lines(engine: Engine, kb: KbRef, path: str) -> list[str]:
    """The stored lines of ``path`` in the serving generation (NotFound when it is not in the knowledge base)."""
    with engine.connect() as conn:
        content = conn.execute(
            select(File.content).where(File.kb_id == kb.id, File.path == path, visible_in(File, kb.generation))
        ).scalar()
    if content is None:
        raise NotFound(f"{path!r} is not in knowledge base {kb.name!r}; list files with `sift docql '$.files' --kb {kb.name}`")
    return split_lines(content)


def touch_lease(conn: Connection, kb_id: int, generation: int, replica: str, now: datetime | None = None) -> None:
    """Record that ``replica`` is serving ``generation`` of ``kb_id`` (an upsert)."""
    now = now or utcnow()
    where = (GenerationLease.kb_id == kb_id, GenerationLease.generation == generation,
             GenerationLease.replica == replica)
    if conn.execute(update(GenerationLease).where(*where).values(last_used_at=now)).rowcount == 0:
        conn.execute(insert(GenerationLease).values(kb_id=kb_id, generation=generation, replica=replica,
                                                    last_used_at=now))


def utcnow() -> datetime:
    """Naive UTC now, as lease timestamps are stored."""
    return datetime.now(UTC).replace(tzinfo=None)


def previous_published(conn: Connection, kb_id: int, serving: int) -> int | None:
    """The generation that served before ``serving`` (numbers of abandoned runs in between are skipped)."""
    return conn.execute(
        select(func.max(Generation.number)).where(Generation.kb_id == kb_id, Generation.number < serving,
                                                  Generation.published_at.is_not(None))
    ).scalar()


def oldest_needed(conn: Connection, kb_id: int, serving: int, grace_s: float, now: datetime | None = None) -> int:
    """The oldest generation someone may still read: the serving one, any generation a replica used within
    ``grace_s``, and — when no replica keeps leases at all — the previously published one (in-flight reads)."""
    rows = conn.execute(
        select(GenerationLease.generation, func.max(GenerationLease.last_used_at))
        .where(GenerationLease.kb_id == kb_id).group_by(GenerationLease.generation)
    ).all()
    if not rows:
        previous = previous_published(conn, kb_id, serving)
        return serving if previous is None else previous
    cutoff = (now or utcnow()) - timedelta(seconds=grace_s)
    fresh = [g for g, last in rows if last >= cutoff and g < serving]
    return min([serving, *fresh])
