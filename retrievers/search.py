"""Fused search: channels in parallel, scored by the ranker, deduplicated, grouped by file with snippets.

``Searcher`` owns the loaded indexes (through an ``IndexCache``) and the embedder; build one per process
(CLI command, app lifespan) and call ``search`` per query.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Engine, select

from sift.db import visible_in
from sift.db.tables import Chunk, File
from sift.errors import InvalidQuery
from sift.models import Filters, Hit
from sift.retrievers import copies
from sift.retrievers.base import IndexCache, KbIndex
from sift.retrievers.channels import INDEX_TYPES, BM25Channel, SmartChannel, VectorChannel, vectors_not_ready
from sift.retrievers.fusion import fuse, group_by_file
from sift.retrievers.question import question_shape
from sift.text import split_lines
from sift.tokenize import tokenize

if TYPE_CHECKING:  # the PostgreSQL channels load only with that backend, the embedders with the entry point
    from sift.embed import Embedder
    from sift.retrievers.pg_search import PgKb, PgSearchCache

CHANNELS = ("bm25", "vector", "smart")
MAX_QUERY_CHARS = 2000
SNIPPET_CHARS = 400
COPY_DEPTH = 3  # fused hits ranked for each one returned, so that folding copies still leaves k places
TEXT_CACHE = 4096  # chunk texts kept for snippets (~3 MB at the usual chunk sizes)


def check_request(query: str, k: int, channels: tuple[str, ...] | str, index_type: str) -> tuple[str, tuple[str, ...]]:
    """The stripped query and the channel names, or InvalidQuery: cheap, so callers check before loading."""
    query = query.strip()
    if not query:
        raise InvalidQuery("query is empty", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"query is longer than {MAX_QUERY_CHARS} characters", field="query")
    if k < 1 or k > 200:
        raise InvalidQuery("k must be between 1 and 200", field="k")
    if index_type not in INDEX_TYPES:
        raise InvalidQuery(f"index must be one of {', '.join(INDEX_TYPES)}", field="index")
    names = (CHANNELS if channels == "all" else (channels,)) if isinstance(channels, str) else tuple(channels)
    for name in names:
        if name not in CHANNELS:
            raise InvalidQuery(f"unknown channel {name!r}; use one of {', '.join(CHANNELS)} or all", field="channel")
    return query, names


@dataclass
class SearchResult:
    """Fused hits plus per-channel details; ``as_dict`` is the ``search_result`` JSON shape."""

    query: str
    hits: list[Hit]
    snippets: dict[int | str, str]
    per_channel: dict[str, list[Hit]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    smart_level: int | None = None
    degraded_reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """``{"type": "search_result", "query", "files": {path: [...]}, "hits": [...], ..., "degraded_reasons"}``
        (what the search did without, e.g. the vector channel while a generation is still being embedded)."""
        flat = []
        for h in self.hits:
            flat.append({"rank": h.rank, "path": h.path, "start_line": h.start_line, "end_line": h.end_line,
                         "type": h.kind, "name": h.name, "score": round(h.score, 6), "channels": list(h.channels),
                         "chunk_id": h.chunk_id, "node_id": h.node_id,
                         "copies": [c.model_dump() for c in h.copies]})
        return {
            "type": "search_result", "query": self.query, "files": group_by_file(self.hits, self.snippets),
            "hits": flat, "total": len(self.hits), "smart_level": self.smart_level,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "degraded_reasons": list(self.degraded_reasons),
        }


def _channel_types(cache: IndexCache | PgSearchCache) -> tuple[Any, Any, Any]:
    """The BM25, smart and vector channel classes for the cache's search backend.

    Typed Any: each backend's channels take only that backend's cache and bundle, a pairing that one
    ``Searcher`` class over either backend cannot state in its annotations.
    """
    if getattr(cache, "backend", "local") == "postgres":
        from sift.retrievers.pg_search import PgBM25Channel, PgSmartChannel, PgVectorChannel

        return PgBM25Channel, PgSmartChannel, PgVectorChannel
    return BM25Channel, SmartChannel, VectorChannel


class Searcher:
    """Runs any subset of channels for a query and fuses them."""

    def __init__(self, engine: Engine, cache: IndexCache | PgSearchCache, embedder: Embedder | None,
                 max_workers: int = 4) -> None:
        self.engine = engine
        self.cache = cache
        self.embedder = embedder
        bm25, smart, self._vector = _channel_types(cache)
        self.bm25, self.smart = bm25(cache), smart(cache)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sift-channel")
        self._text_cache: OrderedDict[int, tuple[str, int]] = OrderedDict()
        self._text_lock = threading.Lock()
        self._warm_lock = threading.Lock()
        self._encoder_warm = False
        self._warm_vectors: set[tuple[int, int]] = set()
        self._entries: dict[int, tuple[int, tuple[str, ...]]] = {}  # kb id → (generation, its entry points)

    def close(self) -> None:
        """Stop the worker threads; queued work is dropped (nothing waits for it at exit)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def warm(self, kb: str, tenant: str = "default", *, vector: bool = True) -> None:
        """Load ``kb``'s indexes and, once per searcher, run the query encoder, so that the first timed search
        pays for neither (a cold vector channel would otherwise spend its time budget loading)."""
        bundle = self.cache.get(kb, tenant)
        if vector and self.embedder is not None and not self._encoder_warm:
            with self._warm_lock:
                if not self._encoder_warm:
                    self.embedder.embed_query("warm up")
                    self._encoder_warm = True
        if vector and self.embedder is not None and getattr(self.cache, "backend", "local") == "postgres":
            # PostgreSQL's first vector query of a generation reads its HNSW pages and opens a pooled
            # connection; that is loading too, so it happens here, once per generation, before any budget.
            key = (bundle.kb.id, bundle.kb.generation)
            if key not in self._warm_vectors:
                self.channel("vector", "warm up", Filters(kb=kb, tenant=tenant), 1, bundle=bundle)
                self._warm_vectors.add(key)

    def channel(self, name: str, query: str, filters: Filters, k: int, index_type: str = "all",
                bundle: KbIndex | PgKb | None = None) -> list[Hit]:
        """Run one channel."""
        if name == "bm25":
            return self.bm25.search(query, filters, k, bundle=bundle)
        if name == "smart":
            return self.smart.search(query, filters, k, bundle=bundle)
        if name == "vector":
            return self._vector(self.cache, self.query_embedder(), index_type).search(query, filters, k, bundle=bundle)
        raise InvalidQuery(f"unknown channel {name!r}; use one of {', '.join(CHANNELS)} or all", field="channel")

    def search(
        self,
        query: str,
        filters: Filters,
        k: int = 10,
        channels: tuple[str, ...] | str = "all",
        index_type: str = "all",
        depth: int | None = None,
    ) -> SearchResult:
        """Fused top ``k``: each channel retrieves ``depth`` (default max(10k, 100)) candidates.

        Deep candidate lists matter: the ranker re-orders them (tests and changelogs down, definitions
        up), so the best spans are often below a single channel's top 50. The query embedding is computed
        meanwhile (by the batching embedder's thread or a pool thread).
        """
        steps = self._steps(query, filters, k, channels, index_type, depth)
        try:
            pending = next(steps)
            while True:
                pending = steps.send(pending.result())
        except StopIteration as done:
            return done.value

    def _steps(
        self, query: str, filters: Filters, k: int, channels: tuple[str, ...] | str, index_type: str,
        depth: int | None,
    ) -> Generator[Future[np.ndarray], np.ndarray, SearchResult]:
        """The search, yielding the query embedding's future when it needs the vector (sent back in)."""
        query, names = check_request(query, k, channels, index_type)
        # One lookup of the serving generation for every channel (NotFound / IndexNotReady fail fast here).
        bundle = self.cache.get(filters.kb, filters.tenant or "default")
        depth = depth or max(10 * k, 100)
        timings: dict[str, float] = {}
        reasons: list[str] = []
        if "vector" in names and not getattr(bundle, "vectors_ready", True):  # keyword-only until embedded
            names = tuple(n for n in names if n != "vector")
            reasons.append(vectors_not_ready(bundle.kb))
        t_all = time.perf_counter()

        # The query embedding starts first (a batching embedder queues it for its model thread; otherwise a pool
        # thread computes it); the keyword channels run meanwhile in this thread, then the vector search.
        t_vector = time.perf_counter()
        vector_future = self._embed_async(query) if "vector" in names else None
        vector: np.ndarray | None = None

        def run(name: str) -> tuple[str, list[Hit], Any]:
            t0 = t_vector if name == "vector" else time.perf_counter()  # the vector channel's time includes the embedding
            extra = None
            if name == "smart":
                hits, extra = self.smart.search_detailed(query, filters, depth, bundle)
            elif name == "vector":
                hits = self._vector(self.cache, self.query_embedder(), index_type).search(
                    query, filters, depth, query_vec=vector, bundle=bundle)
            else:
                hits = self.channel(name, query, filters, depth, index_type, bundle)
            timings[name] = (time.perf_counter() - t0) * 1000
            return name, hits, extra

        done = {n: run(n) for n in names if n != "vector"}
        if vector_future is not None:
            vector = yield vector_future
            done["vector"] = run("vector")
        results = [done[n] for n in names]
        per_channel = {name: hits for name, hits, _ in results}
        smart_level = next((extra.level for name, _, extra in results if name == "smart" and extra), None)
        if not names:
            fused = []
        elif len(names) == 1:
            fused = per_channel[names[0]][:k]
        else:
            shape = question_shape(query)
            fused = fuse([per_channel[n] for n in names], tokenize(query), shape.identifiers,
                         limit=k * COPY_DEPTH, forms=shape.forms, spread_parts=True)
            fused = self.fold_copies(fused, bundle)[:k]
        snippets = self.snippets(fused)
        timings["total"] = (time.perf_counter() - t_all) * 1000
        return SearchResult(query, fused, snippets, per_channel, timings, smart_level, reasons)

    def fold_copies(self, hits: list[Hit], bundle: KbIndex | PgKb) -> list[Hit]:
        """``hits`` with each definition's copies in other files folded into one hit (``copies.collapse``), shown
        where the knowledge base's package manifest points."""
        files = Counter(symbol for symbol, _ in {(h.symbol, h.path) for h in hits if h.symbol})
        if not any(n > 1 for n in files.values()):
            return hits  # no symbol in two files (parts of one definition are no copies): no text is read
        texts = self._texts([h.chunk_id for h in hits if h.chunk_id is not None and files[h.symbol] > 1])
        words = copies.words_from({cid: text for cid, (text, _) in texts.items()}, tokenize)
        return copies.collapse(hits, words, self.entry_paths(bundle.kb.id, bundle.kb.generation))

    def entry_paths(self, kb_id: int, generation: int) -> tuple[str, ...]:
        """The entry points that the knowledge base's ``package.json`` names (``copies.entry_paths``), read once
        per generation; only the newest generation read is kept for each knowledge base."""
        kept = self._entries.get(kb_id)
        if kept is not None and kept[0] == generation:
            return kept[1]
        with self.engine.connect() as conn:
            manifest = conn.execute(select(File.content).where(
                File.kb_id == kb_id, File.path == copies.MANIFEST, visible_in(File, generation))).scalar()
        found = copies.entry_paths(manifest) if manifest else ()
        with self._text_lock:
            newest = self._entries.get(kb_id)
            if newest is None or newest[0] <= generation:  # a search still on an older generation keeps the newer
                self._entries[kb_id] = (generation, found)
        return found

    def query_embedder(self) -> Embedder:
        """The embedder for query vectors; InvalidQuery when this searcher was built without one."""
        if self.embedder is None:  # a searcher for the keyword channels only (``sift search`` without vector)
            raise InvalidQuery("the vector channel needs an embedder; this searcher was built without one",
                               field="channel")
        return self.embedder

    def _embed_async(self, query: str) -> Future[np.ndarray]:
        submit = getattr(self.embedder, "submit", None)  # BatchingEmbedder's: queue for its model thread
        if submit is not None:
            return submit(query)
        return self._pool.submit(self.query_embedder().embed_query, query)

    def snippets(self, hits: list[Hit]) -> dict[int | str, str]:
        """The first lines of each hit's chunk text (one query for the hits whose text is not remembered)."""
        by_id = self._texts([h.chunk_id for h in hits if h.chunk_id is not None])
        out: dict[int | str, str] = {}
        for h in hits:
            if h.chunk_id not in by_id:
                continue
            text, start = by_id[h.chunk_id]
            lines = split_lines(text)
            offset = max(0, h.start_line - start)
            snippet = "\n".join(lines[offset : offset + (h.end_line - h.start_line + 1)])
            out[h.chunk_id] = snippet[:SNIPPET_CHARS]
        return out

    def _texts(self, ids: list[int]) -> dict[int, tuple[str, int]]:
        """(text, start line) of chunks; a chunk row never changes (a new generation writes new rows), so the
        most recently used ``TEXT_CACHE`` of them are kept in memory."""
        out: dict[int, tuple[str, int]] = {}
        missing: list[int] = []
        with self._text_lock:
            for cid in ids:
                row = self._text_cache.get(cid)
                if row is None:
                    missing.append(cid)
                else:
                    self._text_cache.move_to_end(cid)
                    out[cid] = row
        if not missing:
            return out
        with self.engine.connect() as conn:
            rows = conn.execute(select(Chunk.id, Chunk.text, Chunk.start_line).where(Chunk.id.in_(missing))).all()
        with self._text_lock:
            for r in rows:
                out[r.id] = self._text_cache[r.id] = (r.text, r.start_line)
            while len(self._text_cache) > TEXT_CACHE:
                self._text_cache.popitem(last=False)
        return out
