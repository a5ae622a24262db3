"""FAISS vector index with real MiniLM vectors and real index files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sift.embed import LocalEmbedder, normalise
from sift.index.vector import VectorIndex

TEXTS = {
    101: "def validate_token(self, token): return hmac.compare_digest(token, self.secret)",
    102: "Rotate the shared secret every 90 days.",
    103: "Set SIFT_DATA_DIR to move the data directory.",
    104: "def render_html(page): return template.render(page)",
    105: "class DateParser: parses ISO 8601 dates into datetime objects",
}


@pytest.fixture(scope="module")
def minilm_vectors() -> tuple[LocalEmbedder, np.ndarray]:
    embedder = LocalEmbedder()
    return embedder, embedder.embed_documents(list(TEXTS.values()))


@pytest.fixture(params=["flat", "hnsw"])
def index(request: pytest.FixtureRequest, minilm_vectors: tuple[LocalEmbedder, np.ndarray]) -> VectorIndex:
    _, vectors = minilm_vectors
    return VectorIndex.build(list(TEXTS), vectors, request.param)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("check whether an auth token is valid", 101),
        ("how often should secrets be rotated", 102),
        ("environment variable for the data directory", 103),
        ("parse a date string", 105),
    ],
)
def test_vector_nearest_neighbour(
    index: VectorIndex, minilm_vectors: tuple[LocalEmbedder, np.ndarray], query: str, expected: int
) -> None:
    embedder, _ = minilm_vectors
    hits = index.search(embedder.embed_query(query), 3)
    assert hits[0][0] == expected
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [([102, 104], [102, 104]), ([104], [104]), ([], []), ([999], [])],
)
def test_vector_filter_before_ranking(
    index: VectorIndex, minilm_vectors: tuple[LocalEmbedder, np.ndarray], allowed: list[int], expected: list[int]
) -> None:
    embedder, _ = minilm_vectors
    hits = index.search(embedder.embed_query("check whether an auth token is valid"), 5, np.array(allowed))
    assert sorted(i for i, _ in hits) == expected


@pytest.mark.parametrize("mmap", [False, True])
def test_vector_save_load_round_trip(
    index: VectorIndex, minilm_vectors: tuple[LocalEmbedder, np.ndarray], tmp_path: Path, mmap: bool
) -> None:
    embedder, vectors = minilm_vectors
    path = tmp_path / "function.faiss"
    index.save(path)
    assert not list(tmp_path.glob("*.tmp"))
    loaded = VectorIndex.load(path, mmap=mmap)
    assert loaded.kind == index.kind
    assert loaded.ids.tolist() == list(TEXTS)
    q = embedder.embed_query("rotate secrets")
    assert loaded.search(q, 5) == index.search(q, 5)
    np.testing.assert_array_equal(loaded.vectors_for([103, 101]), vectors[[2, 0]])


def test_vector_with_changes_is_a_copy(index: VectorIndex, minilm_vectors: tuple[LocalEmbedder, np.ndarray]) -> None:
    embedder, vectors = minilm_vectors
    new_vec = embedder.embed_documents(["verify a bearer token signature"])
    changed = index.with_changes([101], [201], new_vec)
    q = embedder.embed_query("check whether an auth token is valid")
    assert changed.search(q, 1)[0][0] == 201
    assert sorted(changed.ids.tolist()) == [102, 103, 104, 105, 201]
    assert index.search(q, 1)[0][0] == 101  # the original is untouched
    assert len(index) == 5


def test_vector_empty_index() -> None:
    index = VectorIndex.build([], np.zeros((0, 384), dtype=np.float32), dim=384)
    assert len(index) == 0
    assert index.search(np.ones(384, dtype=np.float32), 5) == []


def _recall(approx: list[list[int]], exact: list[list[int]]) -> float:
    return float(np.mean([len(set(a) & set(e)) / len(e) for a, e in zip(approx, exact, strict=True)]))


def _random_vectors(kind: str, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "gaussian":  # no structure at all: the hardest case for a graph index
        return normalise(rng.standard_normal((n, dim)))
    centers = np.random.default_rng(99).standard_normal((50, dim))  # topics, like real embeddings
    return normalise(centers[rng.integers(0, 50, n)] + 0.5 * rng.standard_normal((n, dim)))


@pytest.mark.parametrize(("kind", "ef_search", "floor"), [("gaussian", 128, 0.9), ("clustered", 64, 0.98)])
def test_vector_hnsw_recall_against_flat(kind: str, ef_search: int, floor: float) -> None:
    rng = np.random.default_rng(7)
    n, dim, k = 5_000, 384, 10
    data, queries = _random_vectors(kind, n, dim, rng), _random_vectors(kind, 100, dim, rng)
    ids = np.arange(n) * 3 + 5
    flat = VectorIndex.build(ids, data, "flat")
    hnsw = VectorIndex.build(ids, data, "hnsw", ef_search=ef_search)
    exact = [[i for i, _ in flat.search(q, k)] for q in queries]
    approx = [[i for i, _ in hnsw.search(q, k)] for q in queries]
    recall = _recall(approx, exact)
    print(f"HNSW recall@{k} vs flat, {n} {kind} {dim}-d vectors, efSearch={ef_search}: {recall:.3f}")
    assert recall >= floor


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_build_in_blocks_writes_the_file_build_writes(kind: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = normalise(rng.standard_normal((1000, 16)).astype(np.float32))
    ids = rng.permutation(5000)[:1000].astype(np.int64)
    blocks = [(ids[a:b], vectors[a:b]) for a, b in ((0, 1), (1, 300), (300, 300), (300, 999), (999, 1000))]
    whole = VectorIndex.build(ids, vectors, kind, dim=16)  # type: ignore[arg-type]
    streamed = VectorIndex.build_in_blocks(len(ids), iter(blocks), kind, dim=16)  # type: ignore[arg-type]
    assert np.array_equal(streamed.ids, ids)
    assert np.array_equal(streamed.vectors_for(ids), whole.vectors_for(ids))
    if kind == "flat":  # an HNSW graph is built by several threads: its file is not reproducible
        whole.save(tmp_path / "whole.faiss")
        streamed.save(tmp_path / "streamed.faiss")
        assert (tmp_path / "whole.faiss").read_bytes() == (tmp_path / "streamed.faiss").read_bytes()
    assert streamed.search(vectors[5], 3) == whole.search(vectors[5], 3)
    empty = VectorIndex.build_in_blocks(0, iter([]), kind, dim=16)  # type: ignore[arg-type]
    assert len(empty) == 0 and empty.dim == 16


def test_build_in_blocks_fills_storage_sized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flat index's buffer is allocated once for all the rows: no block copies it into a larger one."""
    import faiss

    import sift.index.vector as vector_module

    made: list[faiss.Index] = []
    new_index = vector_module._new_index
    monkeypatch.setattr(vector_module, "_new_index", lambda dim, kind: made.append(new_index(dim, kind)) or made[-1])
    buffers: list[int] = []

    def blocks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, 2000, 100):
            yield np.arange(start, start + 100), normalise(np.ones((100, 8), dtype=np.float32))
            buffers.append(int(faiss.downcast_index(made[0].index).codes.data()))

    built = VectorIndex.build_in_blocks(2000, blocks(), "flat", dim=8)
    assert len(built) == 2000 and len(buffers) == 20 and len(set(buffers)) == 1
    with pytest.raises(ValueError, match="announced"):
        VectorIndex.build_in_blocks(50, iter([(np.arange(10), np.ones((10, 8), np.float32))]), "flat", dim=8)
