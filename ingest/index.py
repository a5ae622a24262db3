"""Build the search indexes of one knowledge-base generation (the layout is ``sift.index.generation``'s).

The directory is built in a hidden sibling directory and renamed into place after the manifest is written, so
a directory that exists under its final name is always complete. ``build_keyword_index`` writes a generation's
BM25 index alone (seconds), which the pipeline publishes before ``build_indexes`` embeds (minutes to hours).

Memory stays bounded at any repository size: chunks are read from the database a batch at a time, ``build_indexes``
takes the BM25 index the keyword-only generation already holds (or builds it before embedding, not beside the
vectors), and each batch's vectors go to a spool on disk (``spool.py``) from which the FAISS indexes are made one
at a time.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, Row, Select, func, select

from sift.db import visible_in
from sift.db.tables import Chunk, File
from sift.embed import Embedder, EmbeddingCache, embed_with_cache
from sift.errors import IndexNotReady
from sift.index.bm25 import MATRIX_FILE, VOCAB_FILE, BM25Builder, BM25Index
from sift.index.generation import (
    KINDS,
    MANIFEST,
    MANIFEST_VERSION,
    file_checksums,
    has_vectors,
    load_vector_indexes,
    read_manifest,
    vector_file,
    verify_files,
    window_file,
)
from sift.index.vector import VectorIndex, VectorKind
from sift.ingest.chunk import WINDOW_CHARS, WINDOW_KINDS, embedding_text, text_hash, window_texts
from sift.ingest.spool import VectorSpool
from sift.models import index_level
from sift.tokenize import tokenize

log = logging.getLogger(__name__)

#: progress(phase, done, total): phase "embed" while embedding, "index" while writing files.
Progress = Callable[[str, int, int], None]
EMBED_STEP = 128  # texts per embedding call: progress moves every few seconds even on two CPU cores


@dataclass
class _Accumulator:
    """Where a build's vectors go (a spool per index file) and how each was obtained."""

    spools: dict[str, VectorSpool]
    window_spools: dict[str, VectorSpool]
    cached: int = 0
    computed: int = 0
    reused: int = 0
    windows_cached: int = 0
    windows_computed: int = 0
    seconds_embed: float = 0.0

    @classmethod
    def in_dir(cls, directory: Path, dim: int) -> _Accumulator:
        return cls({k: VectorSpool(vector_file(directory, k), dim) for k in KINDS},
                   {k: VectorSpool(window_file(directory, k), dim) for k in WINDOW_KINDS})


def build_indexes(
    engine: Engine,
    embedder: Embedder,
    kb_id: int,
    generation: int,
    out_dir: Path,
    *,
    previous_dir: Path | None = None,
    keyword_dir: Path | None = None,
    progress: Progress | None = None,
    vector_kind: VectorKind = "flat",
    batch_size: int = 1000,
) -> dict[str, Any]:
    """Embed the chunks visible in ``generation`` and write its indexes to ``out_dir``; returns stats.

    Vectors come, in order of preference, from ``previous_dir``'s indexes (same chunk id, same model), the
    embedding cache, or the embedder; only the last costs model time. The BM25 index is ``keyword_dir``'s (the
    keyword-only generation published before embedding) when it indexes exactly these chunks, else built here.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    tmp_dir = _fresh_tmp(out_dir)
    try:
        total = _count_chunks(engine, kb_id, generation)
        tick = (lambda: progress("embed", 0, total)) if progress else None
        bm25 = _keyword_files(engine, kb_id, generation, tmp_dir, keyword_dir, batch_size, tick)
        acc = _Accumulator.in_dir(tmp_dir, embedder.dim)
        done = _embed_all(engine, embedder, kb_id, generation, total, previous_dir, acc, progress, batch_size)
        t_write = time.perf_counter()
        manifest = _write(tmp_dir, embedder, kb_id, generation, vector_kind, acc, bm25, progress)
        _swap_in(tmp_dir, out_dir)
    except BaseException:
        shutil.rmtree(tmp_dir, ignore_errors=True)  # its spools can be as large as the vectors
        raise
    seconds_write = time.perf_counter() - t_write
    elapsed = time.perf_counter() - started
    passages = acc.computed + acc.windows_computed
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
            "read_tokenize": round(elapsed - acc.seconds_embed - seconds_write, 3),
            "embed": round(acc.seconds_embed, 3),
            "write": round(seconds_write, 3),
            "total": round(elapsed, 3),
        },
        "embed_chunks_per_s": round(passages / acc.seconds_embed, 1) if passages and acc.seconds_embed else None,
    }
    log.info("kb %d generation %d indexed: %s", kb_id, generation, stats)
    return stats


def _embed_all(engine: Engine, embedder: Embedder, kb_id: int, generation: int, total: int,
               previous_dir: Path | None, acc: _Accumulator, progress: Progress | None, batch_size: int) -> int:
    """Embed the ``total`` chunks of ``generation`` (and their windows) batch by batch into ``acc``'s spools;
    returns how many there were."""
    previous = _load_previous(previous_dir, embedder.model_id)
    cache = EmbeddingCache(engine)
    done = 0
    if progress:
        progress("embed", 0, total)
    for rows in _chunk_batches(engine, kb_id, generation, batch_size):
        ids = np.fromiter((r.id for r in rows), dtype=np.int64, count=len(rows))
        texts = [embedding_text(r.kind, r.path, r.name, r.heading_path, r.text) for r in rows]
        t0 = time.perf_counter()
        step = (lambda n, base=done: progress("embed", base + n, total)) if progress else None
        vectors = _vectors_for(rows, ids, texts, embedder, cache, previous, acc, step)
        kinds = np.array([index_level(r.kind) for r in rows])
        for kind in KINDS:
            sel = kinds == kind
            acc.spools[kind].append(ids[sel], vectors[sel])
        _add_windows(rows, embedder, cache, acc)
        acc.seconds_embed += time.perf_counter() - t0
        done += len(rows)
        if progress:
            progress("embed", done, total)
    return done


def build_keyword_index(engine: Engine, kb_id: int, generation: int, out_dir: Path, *,
                        batch_size: int = 1000) -> dict[str, Any]:
    """Write the BM25 index of the chunks visible in ``generation`` to ``out_dir`` as a keyword-only generation
    (manifest ``"vectors": false``; the same BM25 index ``build_indexes`` writes); returns stats."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    tmp_dir = _fresh_tmp(out_dir)
    index, counts = _bm25_of(engine, kb_id, generation, batch_size)
    index.save(tmp_dir)
    _write_json(tmp_dir / MANIFEST, {
        "version": MANIFEST_VERSION, "kb_id": kb_id, "generation": generation, "model_id": None,
        "vectors": False, "counts": counts, "bm25": {"docs": len(index), "terms": len(index.terms)},
        "files": file_checksums(tmp_dir),
    })
    _swap_in(tmp_dir, out_dir)
    return {"chunks": counts, "seconds": round(time.perf_counter() - started, 3)}


def _bm25_of(engine: Engine, kb_id: int, generation: int, batch_size: int,
             tick: Callable[[], None] | None = None) -> tuple[BM25Index, dict[str, int]]:
    """The BM25 index of the chunks visible in ``generation`` (in chunk id order) and their count per kind;
    ``tick()`` before each batch (a progress report, where a stop request is checked)."""
    bm25 = BM25Builder()
    counts = dict.fromkeys(KINDS, 0)
    for rows in _chunk_batches(engine, kb_id, generation, batch_size):
        if tick:
            tick()
        for r in rows:
            bm25.add(r.id, tokenize(embedding_text(r.kind, r.path, r.name, r.heading_path, r.text)))
            counts[index_level(r.kind)] += 1
    return bm25.finish(), counts


def _keyword_files(engine: Engine, kb_id: int, generation: int, tmp_dir: Path, keyword_dir: Path | None,
                   batch_size: int, tick: Callable[[], None] | None) -> dict[str, int]:
    """Put the generation's BM25 files into ``tmp_dir`` before any vector is computed (so the index is never in
    memory beside them): linked from ``keyword_dir`` when its index holds exactly this generation's chunks, in
    the same order (chunk rows never change, so then its files are the ones a build would write), else built.
    Returns the manifest's ``bm25`` entry."""
    if keyword_dir is not None:
        linked = _link_keyword_index(engine, kb_id, generation, keyword_dir, tmp_dir)
        if linked is not None:
            return linked
    index, _ = _bm25_of(engine, kb_id, generation, batch_size, tick)
    index.save(tmp_dir)
    return {"docs": len(index), "terms": len(index.terms)}


def _link_keyword_index(engine: Engine, kb_id: int, generation: int, keyword_dir: Path,
                        tmp_dir: Path) -> dict[str, int] | None:
    """Link ``keyword_dir``'s BM25 files into ``tmp_dir`` when they index this generation's chunks; None when they
    do not (or are damaged, or gone)."""
    names = (MATRIX_FILE, VOCAB_FILE)
    try:
        manifest = read_manifest(keyword_dir)
        checks = verify_files(keyword_dir, manifest)
        if has_vectors(manifest) or any(checks.get(name, "unlisted") for name in names):
            return None
        with np.load(keyword_dir / MATRIX_FILE) as z:
            ids = z["ids"]
    except (IndexNotReady, OSError, ValueError, KeyError):
        return None
    if not np.array_equal(ids, _chunk_ids(engine, kb_id, generation)):
        return None
    for name in names:
        try:
            os.link(keyword_dir / name, tmp_dir / name)
        except OSError:  # a file system without hard links
            shutil.copyfile(keyword_dir / name, tmp_dir / name)
    return {"docs": int(manifest["bm25"]["docs"]), "terms": int(manifest["bm25"]["terms"])}


def _fresh_tmp(out_dir: Path) -> Path:
    """An empty hidden directory beside ``out_dir`` to build it in (half-built ones of killed runs removed)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f".{out_dir.name}.building-*"):  # left by a killed run (the kb lock
        shutil.rmtree(stale, ignore_errors=True)  # guarantees no other builder of this kb is alive)
    tmp_dir = out_dir.with_name(f".{out_dir.name}.building-{os.getpid()}")
    tmp_dir.mkdir()
    return tmp_dir


def _visible_chunks(kb_id: int, generation: int, *columns: Any) -> Select[Any]:
    """``columns`` of the chunks of knowledge base ``kb_id`` visible in ``generation``."""
    return (select(*columns).join(File, Chunk.file_id == File.id)
            .where(File.kb_id == kb_id, visible_in(File, generation)))


def _count_chunks(engine: Engine, kb_id: int, generation: int) -> int:
    with engine.connect() as conn:
        return int(conn.execute(_visible_chunks(kb_id, generation, func.count(Chunk.id))).scalar_one())


def _chunk_batches(engine: Engine, kb_id: int, generation: int, batch_size: int) -> Iterator[Sequence[Row]]:
    q = _visible_chunks(kb_id, generation, Chunk.id, Chunk.kind, Chunk.path, Chunk.name, Chunk.heading_path,
                        Chunk.content_hash, Chunk.text).order_by(Chunk.id)
    with engine.connect() as conn:
        yield from conn.execution_options(yield_per=batch_size).execute(q).partitions()


def _chunk_ids(engine: Engine, kb_id: int, generation: int) -> np.ndarray:
    """The ids of the chunks visible in ``generation``, in id order (the order every index adds them in)."""
    with engine.connect() as conn:
        q = _visible_chunks(kb_id, generation, Chunk.id).order_by(Chunk.id)
        return np.fromiter(conn.execute(q).scalars(), dtype=np.int64)


def _load_previous(previous_dir: Path | None, model_id: str) -> dict[str, tuple[VectorIndex, np.ndarray]]:
    """The previous generation's vector indexes when they exist and were made with the same model."""
    if previous_dir is None:
        return {}
    try:
        model, vectors = load_vector_indexes(previous_dir, mmap=True)  # its BM25 index is not needed
    except (IndexNotReady, RuntimeError, OSError) as exc:
        log.warning("previous index at %s is unusable (%s); using the embedding cache", previous_dir, exc)
        return {}
    if model != model_id:
        return {}
    return {kind: (index, index.ids) for kind, index in vectors.items()}


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
            acc.window_spools[kind].append(ids[sel], vectors[sel])


def _write(
    tmp_dir: Path,
    embedder: Embedder,
    kb_id: int,
    generation: int,
    vector_kind: VectorKind,
    acc: _Accumulator,
    bm25: dict[str, int],
    progress: Progress | None,
) -> dict[str, Any]:
    """Make each FAISS index from its spool, one at a time, then write the manifest."""
    chunk_ids: dict[str, list[int]] = {}
    for step, kind in enumerate(KINDS, 1):
        chunk_ids[kind] = _index_from_spool(acc.spools[kind], vector_kind, vector_file(tmp_dir, kind)).tolist()
        if progress:
            progress("index", step, len(KINDS) + 1)
    window_counts = {kind: len(_index_from_spool(acc.window_spools[kind], vector_kind, window_file(tmp_dir, kind)))
                     for kind in WINDOW_KINDS}
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
        "bm25": bm25,
        "chunk_ids": chunk_ids,
        "files": file_checksums(tmp_dir),
    }
    _write_json(tmp_dir / MANIFEST, manifest)
    if progress:
        progress("index", len(KINDS) + 1, len(KINDS) + 1)
    return manifest


def _index_from_spool(spool: VectorSpool, vector_kind: VectorKind, path: Path) -> np.ndarray:
    """Build, save and let go the index of ``spool``'s rows, then delete the spool; returns the rows' ids."""
    ids = spool.ids()
    spool.build(vector_kind).save(path)
    spool.remove()
    return ids


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
