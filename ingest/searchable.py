"""Searchable first, embedded after: the keyword-only index an ingest publishes before it embeds.

Once the parsed rows are written, ``publish_keywords`` builds generation G+1's BM25 index (seconds) in its keyword
directory (``catalog.keyword_dir``) and publishes G+1 with it: BM25, smart search, DocQL, callers and the file
reader serve the new content at once, and the job row says ``ready = "searchable"``. The embeddings are then
computed into G+1's own index directory; ``publish_vectors`` points G+1 at it (one short transaction, which readers
pick up on their next search: ``retrievers.base.IndexCache``) and the job says ``ready = "complete"``.

A run killed while embedding leaves G+1 serving keyword search. The next run finds every file unchanged against
G+1 (nothing is parsed again) and its index incomplete, so it embeds into G+2, the vectors computed before the kill
coming from the embedding cache and unchanged chunks' vectors from ``vector_source``, the newest generation that
has them.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, select, update

from sift.catalog import KbRef, index_dir_of, keyword_dir
from sift.db.tables import Generation, IngestJob
from sift.ingest import store
from sift.ingest.job_rows import generation_stats


def publish_keywords(engine: Engine, kb: KbRef, number: int, index_root: Path, job_id: int,
                     summary: dict[str, Any], started: float) -> KbRef:
    """Publish generation ``number`` with its BM25 index alone and mark the job searchable; returns the knowledge
    base as it now serves."""
    from sift.ingest.index import build_keyword_index  # numpy and the BM25 builder load with the index

    index_dir = keyword_dir(index_root, kb.id, number)
    summary["keyword_index"] = build_keyword_index(engine, kb.id, number, index_dir)
    summary["searchable_seconds"] = round(time.perf_counter() - started, 3)
    summary["ready"] = "searchable"
    with engine.begin() as conn:
        store.publish(conn, kb, number, index_dir.relative_to(index_root),
                      {**generation_stats(summary), "vectors": False})
        conn.execute(update(IngestJob).where(IngestJob.id == job_id).values(ready="searchable"))
    return dataclasses.replace(kb, generation=number)


def publish_vectors(conn: Connection, kb: KbRef, index_dir: Path | None, index_root: Path,
                    stats: dict[str, Any]) -> None:
    """Point the serving generation of ``kb``, published keyword-only, at its full index directory."""
    conn.execute(update(Generation).where(Generation.kb_id == kb.id, Generation.number == kb.generation).values(
        index_path=str(index_dir.relative_to(index_root)) if index_dir is not None else None, stats=stats))


def drop_keyword_index(index_root: Path, kb: KbRef) -> None:
    """Delete the keyword-only directory of ``kb``'s serving generation, once its full index is published."""
    shutil.rmtree(keyword_dir(index_root, kb.id, kb.generation), ignore_errors=True)


def vector_source(engine: Engine, kb: KbRef, index_root: Path) -> Path | None:
    """The index directory of the newest generation up to the serving one that holds vectors (their vectors of
    unchanged chunks are reused), or None."""
    from sift.errors import IndexNotReady
    from sift.index.generation import has_vectors, read_manifest

    with engine.connect() as conn:
        rows = conn.execute(
            select(Generation.number, Generation.index_path)
            .where(Generation.kb_id == kb.id, Generation.number <= kb.generation,
                   Generation.status.in_(("published", "retired")), Generation.index_path.is_not(None))
            .order_by(Generation.number.desc()).limit(4)
        ).all()
    for row in rows:
        directory = index_dir_of(index_root, kb.id, row.number, row.index_path)
        try:
            if has_vectors(read_manifest(directory)):
                return directory
        except IndexNotReady:  # gone or damaged: an older one, or the embedding cache, serves instead
            continue
    return None
