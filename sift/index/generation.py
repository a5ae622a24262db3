"""The files of one generation's index directory and how to load them.

A generation directory holds three FAISS indexes (``file.faiss``, ``function.faiss``, ``doc.faiss``, one per
chunk kind), the windows of long function and doc chunks (``function.windows.faiss``, ``doc.windows.faiss``:
several vectors under one chunk id; generations built before windows have none), a BM25 index over all chunks
(``bm25.npz`` + ``bm25.vocab.json``) and ``manifest.json``, written last: a directory under its final name is
always complete (``sift.ingest.index`` builds it).

A *keyword-only* generation (manifest ``"vectors": false``, ``model_id`` null) holds the BM25 index alone: an
ingest publishes one as soon as parsing is done, so BM25, smart search, DocQL and the file reader serve while
the embeddings are computed; the vectors come in the next generation. It is never ``is_current`` (the next
ingest embeds it).

The manifest's ``files`` hold each index file's size, first bytes and SHA-256, hashed as a stream when the
generation is built. Loading checks sizes and first bytes (cheap, and a memory-mapped file is never read whole);
``verify_files(full=True)`` (``sift kb check``) hashes every byte. Any damaged, missing or unreadable file is an
:class:`IndexDamaged` naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sift.errors import IndexDamaged, IndexNotReady
from sift.index.bm25 import BM25Index
from sift.index.vector import VectorIndex
from sift.models import INDEX_LEVELS

KINDS: tuple[str, ...] = INDEX_LEVELS  # a vector index per level (a type declaration's is "function")
MANIFEST = "manifest.json"
HEAD_BYTES = 16
_HASH_BLOCK = 1 << 20
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

    @property
    def has_vectors(self) -> bool:
        """False for a keyword-only generation (its embeddings are still being computed)."""
        return has_vectors(self.manifest)


def has_vectors(manifest: dict[str, Any]) -> bool:
    """Whether a manifest's generation holds vector indexes (every generation but a keyword-only one)."""
    return manifest.get("vectors", True) is not False


def vector_file(directory: Path, kind: str) -> Path:
    """The FAISS file of chunk kind ``kind`` in a generation directory."""
    return directory / f"{kind}.faiss"


def is_current(directory: Path) -> bool:
    """True when a generation directory holds a complete index of the current layout (``MANIFEST_VERSION``) whose
    files pass the cheap check (so an ingest with no changes still rebuilds a damaged index)."""
    try:
        manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("version") != MANIFEST_VERSION or not has_vectors(manifest):
        return False
    expected = [vector_file(directory, k) for k in KINDS] + [window_file(directory, k)
                                                           for k in manifest.get("window_counts", {})]
    return all(p.is_file() for p in expected) and not any(verify_files(directory, manifest).values())


def window_file(directory: Path, kind: str) -> Path:
    """The FAISS file of the windows of chunk kind ``kind`` in a generation directory."""
    return directory / f"{kind}.windows.faiss"


def file_checksums(directory: Path) -> dict[str, dict[str, Any]]:
    """Size, first bytes and SHA-256 of every file in a generation directory but the manifest (streamed)."""
    files: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(directory).iterdir()):
        if path.name == MANIFEST or path.name.endswith(".tmp") or not path.is_file():
            continue
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
            digest.update(head)
            while block := fh.read(_HASH_BLOCK):
                digest.update(block)
        files[path.name] = {"bytes": path.stat().st_size, "head": head.hex(), "sha256": digest.hexdigest()}
    return files


def verify_files(directory: Path, manifest: dict[str, Any], *, full: bool = False) -> dict[str, str | None]:
    """Each file the manifest lists → None when it matches, else what is wrong with it. Without ``full`` only the
    size and first bytes are compared; with it, the SHA-256 of every byte. A generation built before checksums
    lists no files (nothing to compare)."""
    problems: dict[str, str | None] = {}
    for name, want in (manifest.get("files") or {}).items():
        path = Path(directory) / name
        try:
            size = os.stat(path).st_size
            if size != want["bytes"]:
                problems[name] = f"{name} has {size} bytes, not the {want['bytes']} it was written with"
                continue
            with path.open("rb") as fh:
                head = fh.read(HEAD_BYTES)
                if head.hex() != want["head"]:
                    problems[name] = f"{name} does not start with the bytes it was written with"
                    continue
                if full:
                    digest = hashlib.sha256(head)
                    while block := fh.read(_HASH_BLOCK):
                        digest.update(block)
                    if digest.hexdigest() != want["sha256"]:
                        problems[name] = f"{name} does not match its checksum (its content changed)"
                        continue
        except FileNotFoundError:
            problems[name] = f"{name} is missing"
            continue
        except OSError as exc:
            problems[name] = f"{name} cannot be read ({exc.strerror})"
            continue
        problems[name] = None
    return problems


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a generation directory; IndexNotReady when there is none, IndexDamaged when unreadable."""
    try:
        manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise IndexNotReady(f"no complete index at {directory}; run `sift ingest` for this knowledge base") from exc
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"{MANIFEST} in {directory} cannot be read ({exc})") from exc
    if not isinstance(manifest, dict) or "model_id" not in manifest:
        raise IndexDamaged(f"{MANIFEST} in {directory} is not a sift index manifest")
    return manifest


def load_indexes(directory: Path, *, mmap: bool = False, ef_search: int | None = None) -> LoadedIndexes:
    """Load a generation written by ``build_indexes``; IndexNotReady when it is missing, IndexDamaged (naming the
    file) when a file is missing, truncated, altered at its start or unreadable."""
    directory = Path(directory)
    manifest = _checked_manifest(directory)
    kwargs = {"ef_search": ef_search} if ef_search else {}
    kinds = KINDS if has_vectors(manifest) else ()
    with _loading(directory):
        vectors = {k: VectorIndex.load(vector_file(directory, k), mmap=mmap, **kwargs) for k in kinds}
        windows = {k: VectorIndex.load(window_file(directory, k), mmap=mmap, **kwargs)
                   for k in manifest.get("window_counts", {})}
        bm25 = BM25Index.load(directory)
    return LoadedIndexes(directory, manifest, vectors, bm25, windows)


def load_vector_indexes(directory: Path, *, mmap: bool = False) -> tuple[str | None, dict[str, VectorIndex]]:
    """The model id and the chunk vector indexes of a generation (none for a keyword-only one), without its BM25
    index or windows: what a build reuses of the previous generation. Raises as ``load_indexes`` does."""
    directory = Path(directory)
    manifest = _checked_manifest(directory)
    with _loading(directory):
        vectors = {k: VectorIndex.load(vector_file(directory, k), mmap=mmap)
                   for k in (KINDS if has_vectors(manifest) else ())}
    return manifest["model_id"], vectors


def _checked_manifest(directory: Path) -> dict[str, Any]:
    manifest = read_manifest(directory)
    bad = [problem for problem in verify_files(directory, manifest).values() if problem]
    if bad:
        raise IndexDamaged("; ".join(bad))
    return manifest


@contextmanager
def _loading(directory: Path) -> Iterator[None]:
    """Turn a failure to load an index file into IndexDamaged naming the directory."""
    try:
        yield
    except (OSError, RuntimeError, ValueError, KeyError, EOFError) as exc:  # faiss raises RuntimeError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise IndexDamaged(f"an index file in {directory} cannot be loaded: {first[:300]}") from exc
