"""Writes ingestion state: knowledge bases, generations, file versions and their rows.

See ``sift.db.tables`` for the generation visibility rule this module maintains; readers use ``sift.catalog``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from sift.catalog import KbRef, generation_dir, get_kb, kb_index_dir, keyword_dir, oldest_needed
from sift.db import advisory_key, is_postgres, visible_in
from sift.db.tables import Chunk, Entity, File, Generation, GenerationLease, KnowledgeBase, Node, Ref

#: PostgreSQL advisory lock held while a transaction allocates node ids (max(id) + 1 … + n).
NODE_ID_LOCK = advisory_key("sift", "nodes.id")


def ensure_kb(conn: Connection, name: str, tenant: str, root: Path, public: bool = False) -> KbRef:
    """Get or create the knowledge base; a new root path replaces the old one."""
    row = conn.execute(
        select(KnowledgeBase).where(KnowledgeBase.name == name, KnowledgeBase.tenant == tenant)
    ).first()
    if row is None:
        conn.execute(
            insert(KnowledgeBase).values(name=name, tenant=tenant, root_path=str(root), public=public,
                                         current_generation=0)
        )
    elif row.root_path != str(root):
        conn.execute(update(KnowledgeBase).where(KnowledgeBase.id == row.id).values(root_path=str(root)))
    return get_kb(conn, name, tenant)


def discard_unpublished(conn: Connection, kb: KbRef, index_root: Path) -> int:
    """Undo what a crashed run left behind: rows of unpublished generations, closes it made, its index dirs."""
    stale = conn.execute(
        select(File.id).where(File.kb_id == kb.id, File.gen_from > kb.generation)
    ).scalars().all()
    _delete_file_rows(conn, stale)
    conn.execute(
        update(File).where(File.kb_id == kb.id, File.gen_to > kb.generation).values(gen_to=None)
    )
    numbers = conn.execute(
        select(Generation.number).where(Generation.kb_id == kb.id, Generation.number > kb.generation)
    ).scalars().all()
    for number in numbers:
        remove_index_dirs(index_root, kb.id, number)
    # Half-built index directories of killed runs (the kb lock guarantees no builder is alive).
    for partial in kb_index_dir(index_root, kb.id).glob(".g*.building-*"):
        shutil.rmtree(partial, ignore_errors=True)
    conn.execute(
        update(Generation)
        .where(Generation.kb_id == kb.id, Generation.number > kb.generation)
        .values(status="abandoned")
    )
    return len(stale)


def remove_index_dirs(index_root: Path, kb_id: int, number: int) -> None:
    """Delete a generation's index directory and its keyword-only one."""
    shutil.rmtree(generation_dir(index_root, kb_id, number), ignore_errors=True)
    shutil.rmtree(keyword_dir(index_root, kb_id, number), ignore_errors=True)


def next_generation(conn: Connection, kb: KbRef) -> int:
    """A generation number never used before for this knowledge base."""
    top = conn.execute(select(func.max(Generation.number)).where(Generation.kb_id == kb.id)).scalar()
    number = max(top or 0, kb.generation) + 1
    conn.execute(insert(Generation).values(kb_id=kb.id, number=number, status="building"))
    return number


def drop_generation(conn: Connection, kb_id: int, number: int) -> None:
    """Forget a generation that was started but turned out to have nothing to publish."""
    conn.execute(delete(Generation).where(Generation.kb_id == kb_id, Generation.number == number))


def visible_files(conn: Connection, kb_id: int, generation: int,
                  chunking: int | None = None) -> dict[str, tuple[int, str]]:
    """path → (file id, content hash) of the file versions in ``generation``. With ``chunking``, a file chunked
    by another version of the chunker has an empty hash, so an ingest takes it as changed and chunks it again."""
    rows = conn.execute(
        select(File.path, File.id, File.content_hash, File.chunking)
        .where(File.kb_id == kb_id, visible_in(File, generation))
    )
    return {r.path: (r.id, r.content_hash if chunking is None or r.chunking == chunking else "") for r in rows}


def close_files(conn: Connection, file_ids: Iterable[int], generation: int) -> None:
    """Mark file versions as replaced or deleted as of ``generation``."""
    ids = list(file_ids)
    for i in range(0, len(ids), 500):
        conn.execute(update(File).where(File.id.in_(ids[i : i + 500])).values(gen_to=generation))


def _delete_file_rows(conn: Connection, file_ids: Sequence[int]) -> None:
    for i in range(0, len(file_ids), 500):
        ids = file_ids[i : i + 500]
        for table in (Chunk, Node, Entity, Ref):
            conn.execute(delete(table).where(table.file_id.in_(ids)))
        conn.execute(delete(File).where(File.id.in_(ids)))


@dataclass(slots=True)
class FileBatch:
    """Rows of several parsed files, written in one transaction; node/chunk refs are file-local indices."""

    files: list[dict[str, Any]]
    nodes: list[list[dict[str, Any]]]
    chunks: list[list[dict[str, Any]]]
    entities: list[list[dict[str, Any]]]
    refs: list[list[dict[str, Any]]]

    def __len__(self) -> int:
        return len(self.files)


def new_batch() -> FileBatch:
    """An empty batch."""
    return FileBatch([], [], [], [], [])


def _link(rows: list[dict[str, Any]], index_key: str, id_key: str, base: int, file_id: int,
          out: list[dict[str, Any]]) -> None:
    """Give each row its file and turn its in-file node index (``index_key``) into a node id (``id_key``)."""
    for row in rows:
        index = row.pop(index_key)
        row[id_key] = None if index is None else base + index
        row["file_id"] = file_id
        out.append(row)


def write_batch(conn: Connection, batch: FileBatch) -> tuple[int, int]:
    """Insert a batch of file versions with their nodes, chunks, entities and refs; returns (nodes, chunks).

    Node ids are allocated here, after the file insert has taken SQLite's write lock (on PostgreSQL, a
    transaction-level advisory lock that concurrent ingests of other knowledge bases wait for), so parent ids
    and chunk → node links can be set in the same single pass.
    """
    if not batch.files:
        return 0, 0
    file_ids = conn.execute(
        insert(File).returning(File.id, sort_by_parameter_order=True), batch.files
    ).scalars().all()
    if is_postgres(conn):
        conn.execute(select(func.pg_advisory_xact_lock(NODE_ID_LOCK)))
    next_node = (conn.execute(select(func.max(Node.id))).scalar() or 0) + 1
    node_rows: list[dict[str, Any]] = []
    chunk_rows: list[dict[str, Any]] = []
    entity_rows: list[dict[str, Any]] = []
    ref_rows: list[dict[str, Any]] = []
    for file_id, nodes, chunks, entities, refs in zip(
        file_ids, batch.nodes, batch.chunks, batch.entities, batch.refs, strict=True
    ):
        base = next_node
        next_node += len(nodes)
        for row in nodes:
            row["id"] = base + row.pop("_index")
        _link(nodes, "_parent", "parent_id", base, file_id, node_rows)
        _link(chunks, "_node", "node_id", base, file_id, chunk_rows)
        _link(entities, "_node", "node_id", base, file_id, entity_rows)
        _link(refs, "_caller", "caller_node_id", base, file_id, ref_rows)
    for table, rows in ((Node, node_rows), (Chunk, chunk_rows), (Entity, entity_rows), (Ref, ref_rows)):
        if rows:
            conn.execute(insert(table), rows)
    return len(node_rows), len(chunk_rows)


def publish(conn: Connection, kb: KbRef, number: int, index_path: Path | None, stats: dict[str, Any]) -> None:
    """Make ``number`` the serving generation (one short transaction) and retire the one it replaces;
    ``index_path`` is its index directory relative to the index root."""
    conn.execute(
        update(Generation)
        .where(Generation.kb_id == kb.id, Generation.number == kb.generation)
        .values(status="retired")
    )
    conn.execute(
        update(Generation)
        .where(Generation.kb_id == kb.id, Generation.number == number)
        .values(status="published", index_path=str(index_path) if index_path else None, stats=stats,
                published_at=func.now())
    )
    conn.execute(
        update(KnowledgeBase)
        .where(KnowledgeBase.id == kb.id)
        .values(current_generation=number, updated_at=func.now())
    )


def collect_garbage(conn: Connection, kb_id: int, serving: int, index_root: Path, grace_s: float = 300.0) -> int:
    """Drop file versions, index dirs and leases that no generation anyone may still read needs.

    The rule: the serving generation G and the one published before it are kept (requests that started before the
    swap finish on it); when replicas keep leases, an older generation is kept instead while any replica has used
    it within ``grace_s`` seconds (see ``retrievers.base.IndexCache``), and the previous one only while leased.
    Generations abandoned by interrupted runs are dropped wherever their numbers fall. Generations still
    ``building`` are left to :func:`discard_unpublished`, which runs under the kb's lock.
    """
    keep_from = oldest_needed(conn, kb_id, serving, grace_s)
    dead = conn.execute(
        select(File.id).where(File.kb_id == kb_id, File.gen_to.is_not(None), File.gen_to <= keep_from)
    ).scalars().all()
    _delete_file_rows(conn, list(dead))
    old = conn.execute(
        select(Generation.number).where(
            Generation.kb_id == kb_id,
            ((Generation.number < keep_from) & Generation.status.in_(["retired", "abandoned", "published"]))
            | ((Generation.number < serving) & (Generation.status == "abandoned")),
        )
    ).scalars().all()
    for number in old:
        remove_index_dirs(index_root, kb_id, number)
    if old:
        conn.execute(delete(Generation).where(Generation.kb_id == kb_id, Generation.number.in_(old)))
    conn.execute(delete(GenerationLease).where(GenerationLease.kb_id == kb_id,
                                               GenerationLease.generation < keep_from))
    return len(dead)
