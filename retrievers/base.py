"""The Channel protocol and the per-generation index bundle every channel reads.

A generation published keyword-only (``ingest.searchable``) loads with no vectors (``KbIndex.vectors_ready``);
the cache checks it on each use and loads it again once its vectors are published.

``KbIndex`` is loaded once per (knowledge base, generation): the FAISS and BM25 files of the generation and a
columnar copy of its chunks' metadata (no text), so filters become numpy masks applied before ranking and hits
are built without a database round trip per hit. ``IndexCache`` hands out the bundle of the serving generation
and reloads only when the generation changes (``retrievers.serving``); the app or CLI owns one (no module-level
state).
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np
from sqlalchemy import Engine, select

from sift.catalog import KbRef, index_dir_of
from sift.db import visible_in
from sift.db.tables import Chunk, File, Generation
from sift.errors import IndexDamaged, IndexNotReady
from sift.models import Filters, Hit
from sift.retrievers.serving import ServingCache

if TYPE_CHECKING:  # faiss and scipy load with the first index, not with this module
    from sift.index.generation import LoadedIndexes

log = logging.getLogger(__name__)


class Channel(Protocol):
    """A retrieval channel: (query, filters, k) → ranked hits with node id, path and lines."""

    name: str

    def search(self, query: str, filters: Filters, k: int) -> list[Hit]:
        """The top ``k`` hits for ``query`` among chunks that pass ``filters``."""
        ...


class ChunkRow(NamedTuple):
    """One chunk's metadata as plain Python values."""

    node_id: int | None
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    symbol: str
    part: int | None
    module_code: bool


@dataclass
class ChunkTable:
    """Columnar metadata of a generation's chunks, sorted by id."""

    ids: np.ndarray
    path: np.ndarray
    start_line: np.ndarray
    end_line: np.ndarray
    kind: np.ndarray
    name: np.ndarray
    symbol: np.ndarray
    part: np.ndarray  # 0 when the chunk is not one of several parts
    module_code: np.ndarray
    heading_path: np.ndarray
    language: np.ndarray
    source_type: np.ndarray
    node_id: np.ndarray
    public: np.ndarray
    _pos: dict[int, int] = field(default_factory=dict)
    _rows: list[ChunkRow] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._pos = {int(i): p for p, i in enumerate(self.ids)}
        # Plain Python values per row: a search turns hundreds of rows into Hits, and numpy scalars are slow there.
        self._rows = [
            ChunkRow(None if n < 0 else n, p, s, e, k, nm, sym, part or None, mc)
            for n, p, s, e, k, nm, sym, part, mc in zip(
                self.node_id.tolist(), self.path.tolist(), self.start_line.tolist(), self.end_line.tolist(),
                self.kind.tolist(), self.name.tolist(), self.symbol.tolist(), self.part.tolist(),
                self.module_code.tolist(), strict=True)
        ]

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, pos: int) -> ChunkRow:
        """The metadata of row ``pos``."""
        return self._rows[pos]

    def position(self, chunk_id: int) -> int | None:
        """Row of ``chunk_id`` (None when it is not in this generation)."""
        return self._pos.get(chunk_id)

    def mask(self, filters: Filters) -> np.ndarray | None:
        """Boolean mask of chunks passing ``filters`` (None when nothing is filtered out)."""
        if not (filters.source_type is not None or filters.language or filters.public_only or filters.path_glob):
            return None
        m = np.ones(len(self.ids), dtype=bool)
        narrowed = False
        if filters.source_type is not None:
            m &= self.source_type == str(filters.source_type)
            narrowed = True
        if filters.language:
            m &= self.language == filters.language
            narrowed = True
        if filters.public_only:
            m &= self.public
            narrowed = True
        if filters.path_glob:
            uniq = np.unique(self.path)
            ok = {p for p in uniq if _glob_match(p, filters.path_glob)}
            m &= np.fromiter((p in ok for p in self.path), dtype=bool, count=len(self.path))
            narrowed = True
        return m if narrowed else None


def _glob_match(path: str, pattern: str) -> bool:
    """Glob on repository paths: ``*`` within a segment, ``**`` across; a bare directory matches its subtree."""
    if fnmatch.fnmatchcase(path, pattern):
        return True
    if "/" not in pattern and fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern):
        return True
    if pattern.endswith("/") or not any(c in pattern for c in "*?["):
        return path.startswith(pattern.rstrip("/") + "/")
    if "**" in pattern:
        return fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*"))
    return False


def load_chunk_table(engine: Engine, kb_id: int, generation: int) -> ChunkTable:
    """Read the metadata (not the text) of every chunk visible in ``generation``."""
    cols = (Chunk.id, Chunk.path, Chunk.start_line, Chunk.end_line, Chunk.kind, Chunk.name, Chunk.heading_path,
            Chunk.language, Chunk.source_type, Chunk.node_id, Chunk.public, Chunk.symbol, Chunk.part,
            Chunk.module_code)
    with engine.connect() as conn:
        rows = conn.execute(
            select(*cols).join(File, Chunk.file_id == File.id)
            .where(File.kb_id == kb_id, visible_in(File, generation)).order_by(Chunk.id)
        ).all()
    data: list[Sequence[object]] = list(zip(*rows, strict=True)) if rows else [[] for _ in cols]
    obj = lambda xs: np.array(xs, dtype=object)  # noqa: E731
    return ChunkTable(
        ids=np.array(data[0], dtype=np.int64), path=obj(data[1]),
        start_line=np.array(data[2], dtype=np.int32), end_line=np.array(data[3], dtype=np.int32),
        kind=obj(data[4]), name=obj(data[5]), heading_path=obj(data[6]), language=obj(data[7]),
        source_type=obj(data[8]), node_id=np.array([-1 if x is None else x for x in data[9]], dtype=np.int64),
        public=np.array(data[10], dtype=bool), symbol=obj(data[11]),
        part=np.array([x or 0 for x in data[12]], dtype=np.int32), module_code=np.array(data[13], dtype=bool),
    )


@dataclass
class KbIndex:
    """Everything the channels need for one generation of one knowledge base."""

    kb: KbRef
    chunks: ChunkTable
    indexes: LoadedIndexes
    directory: Path
    loaded_at: float

    @property
    def vectors_ready(self) -> bool:
        """False while the generation is served keyword-only (its embeddings are still being computed)."""
        return self.indexes.has_vectors

    def doc_freqs(self, tokens: list[str]) -> tuple[int, dict[str, int]]:
        """(N, {token: document frequency}) in this generation's BM25 index; absent tokens are left out."""
        bm25 = self.indexes.bm25
        found = {t: c for t in set(tokens) if (c := bm25.doc_freq(t))}
        return len(bm25.ids), found

    def hit(self, chunk_id: int, score: float, channel: str, rank: int) -> Hit | None:
        """A Hit for ``chunk_id`` built from the metadata table."""
        pos = self.chunks.position(chunk_id)
        if pos is None:
            return None
        r = self.chunks.row(pos)
        return Hit(chunk_id=int(chunk_id), node_id=r.node_id, path=r.path, start_line=r.start_line,
                   end_line=r.end_line, kind=r.kind, name=r.name, symbol=r.symbol, part=r.part,
                   module_code=r.module_code, score=float(score), channel=channel, rank=rank, channels=(channel,))

    def rebuild(self, ranked: Iterable[tuple[int, float, int]], channel: str) -> list[Hit]:
        """Hits for (chunk id, score, rank) triples; a chunk no longer in this generation is dropped."""
        built = (self.hit(chunk_id, score, channel, rank) for chunk_id, score, rank in ranked)
        return [h for h in built if h is not None]


class IndexCache(ServingCache[KbIndex]):
    """Loads a knowledge base's serving generation's index files once and swaps them when a new one is published
    (the lookup, matching and leases are ``ServingCache``'s)."""

    def __init__(self, engine: Engine, index_root: Path, lease_refresh_s: float = 30.0, ref_ttl_s: float = 0.0) -> None:
        super().__init__(engine, ref_ttl_s=ref_ttl_s, lease_refresh_s=lease_refresh_s)
        self.index_root = index_root

    def _directory(self, ref: KbRef) -> Path:
        with self.engine.connect() as conn:
            path = conn.execute(
                select(Generation.index_path).where(Generation.kb_id == ref.id, Generation.number == ref.generation)
            ).scalar()
        return index_dir_of(self.index_root, ref.id, ref.generation, path)

    def _outdated(self, bundle: KbIndex) -> bool:
        """A keyword-only generation is checked on every use: its vectors may have been published since."""
        return not bundle.vectors_ready and self._directory(bundle.kb) != bundle.directory

    def _load(self, ref: KbRef) -> KbIndex:
        from sift.index.generation import load_indexes

        directory = self._directory(ref)
        if not (directory / "manifest.json").exists():
            raise IndexNotReady(
                f"knowledge base {ref.name!r} generation {ref.generation} has no search index; "
                f"run `sift ingest {ref.root_path} --kb {ref.name}` without --no-index"
            )
        t0 = time.perf_counter()
        try:
            indexes = load_indexes(directory)
        except IndexDamaged as exc:
            raise IndexDamaged(
                f"knowledge base {ref.name!r} generation {ref.generation} cannot be served: {exc.message}; rebuild "
                f"it with `sift ingest {ref.root_path} --kb {ref.name}` (`sift kb check {ref.name}` checks every file)"
            ) from exc
        bundle = KbIndex(ref, load_chunk_table(self.engine, ref.id, ref.generation), indexes, directory, time.time())
        log.info("loaded kb %s generation %d (%d chunks) in %.2fs", ref.name, ref.generation, len(bundle.chunks),
                 time.perf_counter() - t0)
        return bundle
