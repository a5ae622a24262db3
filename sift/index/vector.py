"""FAISS vector index over normalised embeddings, keyed by chunk id.

``flat`` (default) is exact inner product (``IndexIDMap2(IndexFlatIP)``); ``hnsw`` is approximate
(``IndexIDMap2(IndexHNSWFlat)`` with the inner-product metric). Filters are applied inside the search with an
``IDSelectorBatch``, so the top k are the top k of the allowed chunks, not a post-filtered remainder.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

# FAISS logs at INFO each CPU build it tries before the one that loads ("Could not load library with AVX2
# support…"), which reads like an error in a server's log; only its warnings and errors are news.
logging.getLogger("faiss.loader").setLevel(logging.WARNING)

import faiss  # noqa: E402 - after its loader's logger is quietened
import numpy as np  # noqa: E402

VectorKind = Literal["flat", "hnsw"]
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128  # recall@10 vs flat: 0.95 on 5k unstructured 384-d vectors, 1.0 on clustered ones
# One query over fewer vectors than this runs on one thread: an OpenMP team costs more than it saves there
# (measured: half the CPU per search on a 2,566-vector index), and a server's concurrency comes from requests.
PARALLEL_SEARCH_MIN = 100_000
_OMP_THREADS = faiss.omp_get_max_threads()


def _as_ids(ids: Sequence[int] | np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(ids, dtype=np.int64).reshape(-1))


def _as_vectors(vectors: np.ndarray, dim: int) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(vectors, dtype=np.float32).reshape(-1, dim))


def _new_index(dim: int, kind: VectorKind) -> faiss.IndexIDMap2:
    inner: faiss.Index
    if kind == "flat":
        inner = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        hnsw = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        inner = hnsw
    else:
        raise ValueError(f"vector index kind must be 'flat' or 'hnsw', not {kind!r}")
    return faiss.IndexIDMap2(inner)  # the Python wrapper keeps ``inner`` alive


def _id_map(index: faiss.Index) -> faiss.IndexIDMap:
    """The id map every sift vector file holds (FAISS hands indexes out as their base class)."""
    id_map = faiss.downcast_index(index)
    if not isinstance(id_map, faiss.IndexIDMap):
        raise ValueError(f"not a sift vector index (an IndexIDMap2), but {type(id_map).__name__}")
    return id_map


def _kind_of(index: faiss.Index) -> VectorKind:
    inner = faiss.downcast_index(_id_map(index).index)
    return "hnsw" if isinstance(inner, faiss.IndexHNSW) else "flat"


class VectorIndex:
    """Chunk-id keyed FAISS index; scores are inner products of normalised vectors (cosine)."""

    def __init__(self, index: faiss.Index, kind: VectorKind, ef_search: int = HNSW_EF_SEARCH) -> None:
        self.index = index
        self.kind: VectorKind = kind
        self.ef_search = ef_search

    @property
    def dim(self) -> int:
        """Vector length."""
        return int(self.index.d)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    @property
    def ids(self) -> np.ndarray:
        """Chunk ids in insertion order."""
        return faiss.vector_to_array(_id_map(self.index).id_map).astype(np.int64)

    @classmethod
    def build(
        cls,
        ids: Sequence[int] | np.ndarray,
        vectors: np.ndarray,
        kind: VectorKind = "flat",
        *,
        dim: int | None = None,
        ef_search: int = HNSW_EF_SEARCH,
    ) -> VectorIndex:
        """Index ``vectors`` (rows, already normalised) under chunk ``ids``; ``dim`` is needed when empty."""
        d = dim if dim is not None else int(np.asarray(vectors).shape[-1])
        index = _new_index(d, kind)
        id_arr = _as_ids(ids)
        if len(id_arr):
            index.add_with_ids(_as_vectors(vectors, d), id_arr)
        return cls(index, kind, ef_search)

    @classmethod
    def build_in_blocks(
        cls,
        total: int,
        blocks: Iterable[tuple[np.ndarray, np.ndarray]],
        kind: VectorKind = "flat",
        *,
        dim: int,
        ef_search: int = HNSW_EF_SEARCH,
    ) -> VectorIndex:
        """The index ``build`` makes of the ``(ids, vectors)`` blocks put end to end, ``total`` rows in all.

        A flat index takes the blocks one at a time into storage sized for ``total`` up front, so memory is the
        index and one block (adding blocks to a growing index would copy it each time it outgrows its buffer,
        holding up to three times its size); the file it saves is byte for byte ``build``'s. An HNSW graph is
        built from all the vectors at once, as ``build`` does (inserting them block by block makes another graph).
        """
        if kind != "flat":
            parts = list(blocks)
            ids = np.concatenate([i for i, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
            vectors = np.vstack([v for _, v in parts]) if parts else np.zeros((0, dim), dtype=np.float32)
            return cls.build(ids, vectors, kind, dim=dim, ef_search=ef_search)
        index = _new_index(dim, kind)
        flat = faiss.downcast_index(index.index)
        assert isinstance(flat, faiss.IndexFlatCodes)  # what _new_index makes for "flat"
        # Sized once and emptied: a std::vector keeps its buffer when it shrinks, so each add fills it in place.
        flat.codes.resize(total * flat.code_size)
        flat.codes.resize(0)
        for ids, vectors in blocks:
            id_arr = _as_ids(ids)
            if len(id_arr):
                index.add_with_ids(_as_vectors(vectors, dim), id_arr)
        if index.ntotal != total:
            raise ValueError(f"{index.ntotal} vectors given where {total} were announced")
        return cls(index, kind, ef_search)

    def save(self, path: Path) -> None:
        """Write the index to ``path`` via a temp name and an atomic rename."""
        tmp = path.with_name(path.name + ".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, *, mmap: bool = False, ef_search: int = HNSW_EF_SEARCH) -> VectorIndex:
        """Read an index; ``mmap=True`` maps a flat index's vectors instead of reading them into memory."""
        flags = faiss.IO_FLAG_MMAP if mmap else 0
        index = faiss.read_index(str(path), flags)
        return cls(index, _kind_of(index), ef_search)

    def search(
        self, query_vec: np.ndarray, k: int, allowed_ids: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (chunk id, score) among ``allowed_ids`` (all when None); score desc, then id asc."""
        if k <= 0 or not len(self):
            return []
        params = self._params(allowed_ids)
        if params is False:
            return []
        query = _as_vectors(query_vec, self.dim)[:1]
        # Per calling thread (an OpenMP setting is thread-local), so set it on every search.
        faiss.omp_set_num_threads(1 if len(self) < PARALLEL_SEARCH_MIN else _OMP_THREADS)
        scores, ids = self.index.search(query, min(k, len(self)), params=params)
        hits = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits

    def _params(self, allowed_ids: np.ndarray | None) -> faiss.SearchParameters | None | Literal[False]:
        sel = None
        if allowed_ids is not None:
            allowed = _as_ids(allowed_ids)
            if not len(allowed):
                return False
            sel = faiss.IDSelectorBatch(allowed)
        # faiss's bundled stubs omit SearchParametersHNSW and the keyword arguments its Python wrapper accepts.
        if self.kind == "hnsw":
            return faiss.SearchParametersHNSW(sel=sel, efSearch=self.ef_search)  # type: ignore[attr-defined]
        return faiss.SearchParameters(sel=sel) if sel is not None else None  # type: ignore[call-arg]

    def vectors_for(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored vectors of ``ids`` (all must be present)."""
        id_arr = _as_ids(ids)
        if not len(id_arr):
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.index.reconstruct_batch(id_arr)

    def with_changes(
        self,
        remove_ids: Sequence[int] | np.ndarray,
        add_ids: Sequence[int] | np.ndarray,
        add_vectors: np.ndarray,
    ) -> VectorIndex:
        """A new index with ``remove_ids`` gone and ``add_ids`` added; this one is left unchanged."""
        remove, add = _as_ids(remove_ids), _as_ids(add_ids)
        if self.kind == "flat":
            index = faiss.clone_index(self.index)
            if len(remove):
                index.remove_ids(faiss.IDSelectorBatch(remove))
            if len(add):
                index.add_with_ids(_as_vectors(add_vectors, self.dim), add)
            return VectorIndex(index, self.kind, self.ef_search)
        # HNSW graphs do not support removal: rebuild from the kept vectors (stored in the index).
        kept = self.ids[~np.isin(self.ids, remove)]
        ids = np.concatenate([kept, add])
        vectors = np.vstack([self.vectors_for(kept), _as_vectors(add_vectors, self.dim)])
        return VectorIndex.build(ids, vectors, "hnsw", dim=self.dim, ef_search=self.ef_search)
