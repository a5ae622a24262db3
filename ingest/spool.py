"""The vectors of an index being built, kept on disk until their FAISS file is written.

A repository's vectors outgrow memory long before its text does (a 10,000-file repository: about 490,000 chunks
and windows, 750 MB of float32 vectors), so ``build_indexes`` appends each batch's ids and vectors to a spool of
two plain files per index file, in the directory being built. Once every batch is embedded, each index is made
from its spool in blocks (``VectorIndex.build_in_blocks``), saved and let go before the next one: memory is one
index and one block, never every vector at once. The rows go in as they were appended, so the index holds them
in the same order, and its file is the one a single ``VectorIndex.build`` of all of them would write.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from sift.index.vector import VectorIndex, VectorKind

READ_BLOCK = 16384  # rows read back at a time (24 MB of 384-d vectors)


class VectorSpool:
    """Ids and vectors appended batch by batch to ``<stem>.ids`` and ``<stem>.vectors``, read back in blocks."""

    def __init__(self, stem: Path, dim: int) -> None:
        self.dim = dim
        self.count = 0
        self._ids_path = stem.with_name(stem.name + ".ids")
        self._vectors_path = stem.with_name(stem.name + ".vectors")
        self._ids = self._ids_path.open("wb")
        self._vectors = self._vectors_path.open("wb")

    def append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows: ``ids`` (int64) and their ``vectors`` (float32, ``dim`` wide)."""
        if not len(ids):
            return
        self._ids.write(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
        self._vectors.write(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim).tobytes())
        self.count += len(ids)

    def ids(self) -> np.ndarray:
        """Every id appended, in order."""
        self._ids.flush()
        return np.fromfile(self._ids_path, dtype=np.int64)

    def blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The rows appended, ``READ_BLOCK`` at a time, read with plain reads (no mapping stays resident)."""
        self._ids.flush()
        self._vectors.flush()
        with self._ids_path.open("rb") as ids_fh, self._vectors_path.open("rb") as vec_fh:
            for start in range(0, self.count, READ_BLOCK):
                n = min(READ_BLOCK, self.count - start)
                ids = np.fromfile(ids_fh, dtype=np.int64, count=n)
                vectors = np.fromfile(vec_fh, dtype=np.float32, count=n * self.dim).reshape(n, self.dim)
                yield ids, vectors

    def build(self, kind: VectorKind) -> VectorIndex:
        """The index of every row appended (the spool stays until ``remove``)."""
        return VectorIndex.build_in_blocks(self.count, self.blocks(), kind, dim=self.dim)

    def remove(self) -> None:
        """Close and delete the spool's files."""
        self._ids.close()
        self._vectors.close()
        self._ids_path.unlink(missing_ok=True)
        self._vectors_path.unlink(missing_ok=True)
