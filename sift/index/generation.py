"""The files of one generation's index directory and how to load them.

A generation directory holds three FAISS indexes (``file.faiss``, ``function.faiss``, ``doc.faiss``, one per
chunk kind), the windows of long function and doc chunks (``function.windows.faiss``, ``doc.windows.faiss``:
several vectors under one chunk id; generations built before windows have none), a BM25 index over all chunks
(``bm25.npz`` + ``bm25.vocab.json``) and ``manifest.json``, written last: a directory under its final name is
always complete (``sift.ingest.index`` builds it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sift.errors import IndexNotReady
from sift.index.bm25 import BM25Index
from sift.index.vector import VectorIndex
from sift.models import ChunkKind

KINDS: tuple[str, ...] = tuple(k.value for k in ChunkKind)
MANIFEST = "manifest.json"
MANIFEST_VERSION = 2  # 2: windows of long chunks; a generation of an older version is indexed again by the next ingest


@dataclass
class LoadedIndexes:
    """One generation's indexes, loaded once and shared by the retrieval channels."""

    directory: Path
    manifest: dict[str, Any]
    vectors: dict[str, VectorIndex]
    bm25: BM25Index
    windows: dict[str, VectorIndex] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        """The embedding model the vectors were made with (queries must use the same)."""
        return str(self.manifest["model_id"])


def vector_file(directory: Path, kind: str) -> Path:
    """The FAISS file of chunk kind ``kind`` in a generation directory."""
    return directory / f"{kind}.faiss"


def is_current(directory: Path) -> bool:
    """True when a generation directory holds a complete index of the current layout (``MANIFEST_VERSION``)."""
    try:
        manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("version") == MANIFEST_VERSION


def window_file(directory: Path, kind: str) -> Path:
    """The FAISS file of the windows of chunk kind ``kind`` in a generation directory."""
    return directory / f"{kind}.windows.faiss"


def load_indexes(directory: Path, *, mmap: bool = False, ef_search: int | None = None) -> LoadedIndexes:
    """Load a generation written by ``build_indexes``; raises IndexNotReady when it is missing or partial."""
    directory = Path(directory)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexNotReady(
            f"no complete index at {directory}; run `sift ingest` for this knowledge base"
        ) from exc
    kwargs = {"ef_search": ef_search} if ef_search else {}
    vectors = {k: VectorIndex.load(vector_file(directory, k), mmap=mmap, **kwargs) for k in KINDS}
    windows = {k: VectorIndex.load(window_file(directory, k), mmap=mmap, **kwargs)
               for k in manifest.get("window_counts", {})}
    return LoadedIndexes(directory, manifest, vectors, BM25Index.load(directory), windows)
