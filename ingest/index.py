"""Build the search indexes of one knowledge-base generation (the layout is ``sift.index.generation``'s).

The directory is built in a hidden sibling directory and renamed into place after the manifest is written, so
a directory that exists under its final name is always complete. ``build_keyword_index`` writes a generation's
BM25 index alone (seconds), which the pipeline publishes before ``build_indexes`` embeds (minutes to hours).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, Row, func, select

from sift.db import visible_in
from sift.db.tables import Chunk, File
from sift.embed import Embedder, EmbeddingCache, embed_with_cache
from sift.errors import IndexNotReady
from sift.index.bm25 import BM25Builder, BM25Index
from sift.index.generation import (
    KINDS,
    MANIFEST,
    MANIFEST_VERSION,
    file_checksums,
    load_indexes,
    vector_file,
    window_file,
)
from sift.index.vector import VectorIndex, VectorKind
from sift.ingest.chunk import WINDOW_CHARS, WINDOW_KINDS, embedding_text, text_hash, window_texts
from sift.models import index_level
from sift.tokenize import tokenize

log = logging.getLogger(__name__)

#: progress(phase, done, total): phase "embed" while embedding, "index" while writing files.
Progress = Callable[[str, int, int], None]
EMBED_STEP = 128  # texts per embedding call: progress moves every few seconds even on two CPU cores


@dataclass
class _Accumulator:
    ids: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in KINDS})
    vectors: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in KINDS})
    window_ids: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in WINDOW_KINDS})
    window_vectors: dict[str, list[np.ndarray]] = field(default_factory=lambda: {k: [] for k in WINDOW_KINDS})
    cached: int = 0
    computed: int = 0
    reused: int = 0
    windows_cached: int = 0
    windows_computed: int = 0


def build_indexes(
    engine: Engine,
    embedder: Embedder,
    kb_id: int,
    generation: int,
    out_dir: Path,
    *,
    previous_dir: Path | None = None,
    progress: Progress | None = None,
    vector_kind: VectorKind = "flat",
    batch_size: int = 1000,
) -> dict[str, Any]:
    """Embed the chunks visible in ``generation`` and write its indexes to ``out_dir``; returns stats.

    Vectors come, in order of preference, from ``previous_dir``'s indexes (same chunk id, same model), the
    embedding cache, or the embedder; only the last costs model time.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    tmp_dir = _fresh_tmp(out_dir)
    total = _count_chunks(engine, kb_id, generation)
    previous = _load_previous(previous_dir, embedder.model_id)
    cache = EmbeddingCache(engine)
    acc = _Accumulator()
    bm25 = BM25Builder()
    t_embed, done = 0.0, 0
    if progress:
        progress("embed", 0, total)
    for rows in _chunk_batches(engine, kb_id, generation, batch_size):
        ids = np.fromiter((r.id for r in rows), dtype=np.int64, count=len(rows))
        texts = [embedding_text(r.kind, r.path, r.name, r.heading_path, r.text) for r in rows]
        for chunk_id, text in zip(ids.tolist(), texts, strict=True):
            bm25.add(chunk_id, tokenize(text))
        t0 = time.perf_counter()
        step = (lambda n, base=done: progress("embed", base + n, total)) if progress else None
        vectors = _vectors_for(rows, ids, texts, embedder, cache, previous, acc, step)
        kinds = np.array([index_level(r.kind) for r in rows])
        for kind in KINDS:
            sel = kinds == kind
            acc.ids[kind].append(ids[sel])
            acc.vectors[kind].append(vectors[sel])
        _add_windows(rows, embedder, cache, acc)
        t_embed += time.perf_counter() - t0
        done += len(rows)
        if progress:
            progress("embed", done, total)
    t_write = time.perf_counter()
    manifest = _write(tmp_dir, embedder, kb_id, generation, vector_kind, acc, bm25.finish(), progress)
    _swap_in(tmp_dir, out_dir)
    seconds_write = time.perf_counter() - t_write
    elapsed = time.perf_counter() - started
    stats = {
        "chunks": manifest["counts"],
        "chunks_total": done,
        "embedded": acc.computed,
        "cached": acc.cached,
        "reused": acc.reused,
        "windows": {"count": sum(manifest["window_counts"].values()), "embedded": acc.windows_computed,
                    "cached": acc.windows_cached},
        "model_id": embedder.model_id,
        "seconds": {
            "read_tokenize": round(elapsed - t_embed - seconds_write, 3),
            "embed": round(t_embed, 3),
            "write": round(seconds_write, 3),
            "total": round(elapsed, 3),
        },
        "embed_chunks_per_s": (round((acc.computed + acc.windows_computed) / t_embed, 1)
                               if acc.computed + acc.windows_computed and t_embed else None),
    }
    log.info("kb %d generation %d indexed: %s", kb_id, generation, stats)
    return stats


def build_keyword_index(engine: Engine, kb_id: int, generation: int, out_dir: Path, *,
                        batch_size: int = 1000) -> dict[str, Any]:
    """Write the BM25 index of the chunks visible in ``generation`` to ``out_dir`` as a keyword-only generation
    (manifest ``"vectors": false``; the same BM25 index ``build_indexes`` writes); returns stats."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    tmp_dir = _fresh_tmp(out_dir)
    bm25 = BM25Builder()
    counts = dict.fromkeys(KINDS, 0)
    for rows in _chunk_batches(engine, kb_id, generation, batch_size):
        for r in rows:
            bm25.add(r.id, tokenize(embedding_text(r.kind, r.path, r.name, r.heading_path, r.text)))
            counts[index_level(r.kind)] += 1
    index = bm25.finish()
    index.save(tmp_dir)
    _write_json(tmp_dir / MANIFEST, {
        "version": MANIFEST_VERSION, "kb_id": kb_id, "generation": generation, "model_id": None,
        "vectors": False, "counts": counts, "bm25": {"docs": len(index), "terms": len(index.terms)},
        "files": file_checksums(tmp_dir),
    })
    _swap_in(tmp_dir, out_dir)
    return {"chunks": counts, "seconds": round(time.perf_counter() - started, 3)}


def _fresh_tmp(out_dir: Path) -> Path:
    """An empty hidden directory beside ``out_dir`` to build it in (half-built ones of killed runs removed)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f".{out_dir.name}.building-*"):  # left by a killed run (the kb lock
        shutil.rmtree(stale, ignore_errors=True)  # guarantees no other builder of this kb is alive)
    tmp_dir = out_dir.with_name(f".{out_dir.name}.building-{os.getpid()}")
    tmp_dir.mkdir()
    return tmp_dir


def _count_chunks(engine: Engine, kb_id: int, generation: int) -> int:
    q = (
        select(func.count(Chunk.id))
        .join(File, Chunk.file_id == File.id)
        .where(File.kb_id == kb_id, visible_in(File, generation))
    )
    with engine.connect() as conn:
        return int(conn.execute(q).scalar_one())


def _chunk_batches(engine: Engine, kb_id: int, generation: int, batch_size: int) -> Iterator[Sequence[Row]]:
    q = (
        select(Chunk.id, Chunk.kind, Chunk.path, Chunk.name, Chunk.heading_path, Chunk.content_hash, Chunk.text)
        .join(File, Chunk.file_id == File.id)
        .where(File.kb_id == kb_id, visible_in(File, generation))
        .order_by(Chunk.id)
    )
    with engine.connect() as conn:
        result = conn.execution_options(yield_per=batch_size).execute(q)
        yield from result.partitions()


def _load_previous(previous_dir: Path | None, model_id: str) -> dict[str, tuple[VectorIndex, np.ndarray]]:
    """The previous generation's vector indexes when they exist and were made with the same model."""
    if previous_dir is None:
        return {}
    try:
        old = load_indexes(previous_dir, mmap=True)
    except (IndexNotReady, RuntimeError, OSError) as exc:
        log.warning("previous index at %s is unusable (%s); using the embedding cache", previous_dir, exc)
        return {}
    if old.model_id != model_id:
        return {}
    return {kind: (index, index.ids) for kind, index in old.vectors.items()}


def _vectors_for(
    rows: Sequence[Row],
    ids: np.ndarray,
    texts: list[str],
    embedder: Embedder,
    cache: EmbeddingCache,
    previous: dict[str, tuple[VectorIndex, np.ndarray]],
    acc: _Accumulator,
    step: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Vectors of ``rows``: reused from the previous generation, from the cache, or embedded ``EMBED_STEP`` at a
    time; ``step(n)`` is told how many of the rows are done after each embedding call."""
    out = np.zeros((len(rows), embedder.dim), dtype=np.float32)
    todo = np.ones(len(rows), dtype=bool)
    kinds = np.array([index_level(r.kind) for r in rows])
    for kind, (index, old_ids) in previous.items():
        sel = np.flatnonzero((kinds == kind) & np.isin(ids, old_ids))
        if len(sel):
            out[sel] = index.vectors_for(ids[sel])
            todo[sel] = False
            acc.reused += len(sel)
    rest = np.flatnonzero(todo)
    for start in range(0, len(rest), EMBED_STEP):
        part = rest[start : start + EMBED_STEP]
        items = [(rows[i].content_hash, texts[i]) for i in part]
        by_hash, cached, computed = embed_with_cache(embedder, cache, items)
        acc.cached += cached
        acc.computed += computed
        out[part] = np.stack([by_hash[h] for h, _ in items])
        if step:
            step(len(rows) - len(rest) + start + len(part))
    return out


def _add_windows(rows: Sequence[Row], embedder: Embedder, cache: EmbeddingCache, acc: _Accumulator) -> None:
    """Embed the windows of the long function and doc chunks among ``rows`` (through the embedding cache, by the
    hash of each window's text) and keep them under their chunk's id."""
    owners: list[tuple[int, str]] = []
    items: list[tuple[str, str]] = []
    for r in rows:
        for text in window_texts(r.kind, r.path, r.name, r.text):
            owners.append((r.id, r.kind))
            items.append((text_hash(text), text))
    for start in range(0, len(items), EMBED_STEP):
        part = items[start:start + EMBED_STEP]
        by_hash, cached, computed = embed_with_cache(embedder, cache, part)
        acc.windows_cached += cached
        acc.windows_computed += computed
        vectors = np.stack([by_hash[h] for h, _ in part])
        kinds = np.array([k for _, k in owners[start:start + EMBED_STEP]])
        ids = np.array([i for i, _ in owners[start:start + EMBED_STEP]], dtype=np.int64)
        for kind in WINDOW_KINDS:
            sel = kinds == kind
            if sel.any():
                acc.window_ids[kind].append(ids[sel])
                acc.window_vectors[kind].append(vectors[sel])


def _write(
    tmp_dir: Path,
    embedder: Embedder,
    kb_id: int,
    generation: int,
    vector_kind: VectorKind,
    acc: _Accumulator,
    bm25: BM25Index,
    progress: Progress | None,
) -> dict[str, Any]:
    chunk_ids: dict[str, list[int]] = {}
    for step, kind in enumerate(KINDS, 1):
        ids = np.concatenate(acc.ids[kind]) if acc.ids[kind] else np.zeros(0, dtype=np.int64)
        vecs = np.vstack(acc.vectors[kind]) if acc.vectors[kind] else np.zeros((0, embedder.dim), np.float32)
        VectorIndex.build(ids, vecs, vector_kind, dim=embedder.dim).save(vector_file(tmp_dir, kind))
        chunk_ids[kind] = ids.tolist()
        if progress:
            progress("index", step, len(KINDS) + 1)
    window_counts: dict[str, int] = {}
    for kind in WINDOW_KINDS:
        ids = np.concatenate(acc.window_ids[kind]) if acc.window_ids[kind] else np.zeros(0, dtype=np.int64)
        vecs = (np.vstack(acc.window_vectors[kind]) if acc.window_vectors[kind]
                else np.zeros((0, embedder.dim), np.float32))
        VectorIndex.build(ids, vecs, vector_kind, dim=embedder.dim).save(window_file(tmp_dir, kind))
        window_counts[kind] = len(ids)
    bm25.save(tmp_dir)
    manifest = {
        "version": MANIFEST_VERSION,
        "kb_id": kb_id,
        "generation": generation,
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "vector_kind": vector_kind,
        "counts": {k: len(v) for k, v in chunk_ids.items()},
        "window_chars": WINDOW_CHARS,
        "window_counts": window_counts,
        "bm25": {"docs": len(bm25), "terms": len(bm25.terms)},
        "chunk_ids": chunk_ids,
        "files": file_checksums(tmp_dir),
    }
    _write_json(tmp_dir / MANIFEST, manifest)
    if progress:
        progress("index", len(KINDS) + 1, len(KINDS) + 1)
    return manifest


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _swap_in(tmp_dir: Path, out_dir: Path) -> None:
    """Move the finished directory to its final name (replacing a stale one of the same generation)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.replace(tmp_dir, out_dir)
