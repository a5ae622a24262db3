"""The BM25, vector and smart keyword channels over a knowledge base's serving generation.

Each channel resolves the bundle of ``filters.kb`` through an ``IndexCache`` (loaded once per generation),
applies the metadata filters as a mask before ranking, and returns ``Hit``s built from the metadata table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from sift.errors import InvalidQuery, VectorsNotReady
from sift.models import Filters, Hit
from sift.retrievers.base import IndexCache, KbIndex
from sift.retrievers.smart import SmartMatcher, SmartResult
from sift.tokenize import tokenize

if TYPE_CHECKING:  # the embedders load with the entry point
    from sift.catalog import KbRef
    from sift.embed import Embedder
    from sift.index.vector import VectorIndex

INDEX_TYPES = ("file", "function", "doc", "all")
T = TypeVar("T")


def _allowed_ids(bundle: KbIndex, filters: Filters) -> np.ndarray | None:
    mask = bundle.chunks.mask(filters)
    return None if mask is None else bundle.chunks.ids[mask]


def _derived(bundle: KbIndex, key: str, build: Callable[[], T]) -> T:
    """Per-bundle derived structures, built on first use and dropped with the bundle."""
    store = bundle.__dict__.setdefault("_derived", {})
    if key not in store:
        store[key] = build()
    return store[key]


class BM25Channel:
    """Okapi BM25 over all chunks with the code-aware tokenizer."""

    name = "bm25"

    def __init__(self, cache: IndexCache) -> None:
        self.cache = cache

    def search(self, query: str, filters: Filters, k: int, bundle: KbIndex | None = None) -> list[Hit]:
        """Top ``k`` chunks by BM25 score (``bundle``: the generation already resolved by the caller)."""
        bundle = self.cache.resolve(filters, bundle)
        bm25 = bundle.indexes.bm25
        allowed = None
        mask = bundle.chunks.mask(filters)
        if mask is not None:
            allowed = _derived(bundle, f"bm25mask:{filters.model_dump_json()}",
                               lambda: bm25.mask_for(bundle.chunks.ids[mask]))
        ranked = bm25.search(tokenize(query), k, allowed)
        hits = (bundle.hit(cid, score, self.name, rank) for rank, (cid, score) in enumerate(ranked, 1))
        return [h for h in hits if h is not None]


WINDOW_DEPTH = 4  # windows fetched per wanted chunk: one chunk's windows may fill the first places


def _with_windows(scored: list[tuple[int, float]], index: VectorIndex, vec: np.ndarray, k: int,
                  allowed: np.ndarray | None) -> list[tuple[int, float]]:
    """``scored`` with each chunk's score raised to its best window's (chunks found only by a window join)."""
    best = dict(scored)
    for cid, score in index.search(vec, WINDOW_DEPTH * k, allowed):
        if score > best.get(cid, -np.inf):
            best[cid] = score
    return list(best.items())


def vectors_not_ready(kb: KbRef) -> str:
    """What a search or answer without the vector channel says, while a generation's vectors are computed."""
    return (f"vector channel not ready: knowledge base {kb.name!r} generation {kb.generation} is "
            "searchable by keyword while its embeddings are computed (the running `sift ingest` publishes them)")


class VectorChannel:
    """Nearest neighbours of the query embedding in the file, function or doc index (or all three). A chunk's
    score is the best of its own vector's and its windows' (``sift.index.generation``)."""

    name = "vector"

    def __init__(self, cache: IndexCache, embedder: Embedder, index_type: str = "all") -> None:
        if index_type not in INDEX_TYPES:
            raise InvalidQuery(f"index_type must be one of {', '.join(INDEX_TYPES)}, got {index_type!r}",
                               field="index_type")
        self.cache = cache
        self.embedder = embedder
        self.index_type = index_type

    def search(self, query: str, filters: Filters, k: int, query_vec: np.ndarray | None = None,
               bundle: KbIndex | None = None) -> list[Hit]:
        """Top ``k`` chunks by cosine similarity (inner product of normalised vectors)."""
        bundle = self.cache.resolve(filters, bundle)
        if not bundle.vectors_ready:
            raise VectorsNotReady(vectors_not_ready(bundle.kb))
        vec = self.embedder.embed_query(query) if query_vec is None else query_vec
        allowed = _allowed_ids(bundle, filters)
        kinds = ("file", "function", "doc") if self.index_type == "all" else (self.index_type,)
        scored: list[tuple[int, float]] = []
        for kind in kinds:
            index = bundle.indexes.vectors.get(kind)
            if index is None or not len(index):
                continue
            found = index.search(vec, k, allowed)
            windows = bundle.indexes.windows.get(kind)
            if windows is not None and len(windows):
                found = sorted(_with_windows(found, windows, vec, k, allowed), key=lambda h: (-h[1], h[0]))[:k]
            scored.extend(found)
        scored.sort(key=lambda h: (-h[1], h[0]))
        hits = (bundle.hit(cid, score, self.name, rank) for rank, (cid, score) in enumerate(scored[:k], 1))
        return [h for h in hits if h is not None]


class SmartChannel:
    """Multi-level keyword expansion (see ``retrievers.smart``); names of symbols and headings first."""

    name = "smart"

    def __init__(self, cache: IndexCache) -> None:
        self.cache = cache

    def matcher(self, bundle: KbIndex) -> SmartMatcher:
        """The bundle's matcher, built once per generation."""
        return _derived(bundle, "smart", lambda: SmartMatcher(
            bundle.chunks.symbol, bundle.indexes.bm25.ids, bundle.chunks.ids, bundle.indexes.bm25))

    def search(self, query: str, filters: Filters, k: int, bundle: KbIndex | None = None) -> list[Hit]:
        """Top ``k`` chunks by expanded keyword matches."""
        return self.search_detailed(query, filters, k, bundle)[0]

    def search_detailed(self, query: str, filters: Filters, k: int,
                        bundle: KbIndex | None = None) -> tuple[list[Hit], SmartResult]:
        """Hits plus the level and term requirement the search stopped at."""
        bundle = self.cache.resolve(filters, bundle)
        result = self.matcher(bundle).search(query, k, bundle.chunks.mask(filters))
        ids = bundle.chunks.ids
        hits = (bundle.hit(int(ids[p]), s, self.name, r)
                for r, (p, s) in enumerate(zip(result.positions, result.scores, strict=True), 1))
        return [h for h in hits if h is not None], result
