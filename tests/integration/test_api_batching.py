"""Batched query embeddings give the same vectors as one-by-one calls, with fewer model calls."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sift.api.batching import BatchingEmbedder

QUERIES = ["where is the token validated", "rotate the secret", "AuthService", "log a user in",
           "configuration of the data directory", "x", "a much longer question about how bearer tokens are "
           "compared against the shared secret in constant time"] * 3


class _Counting:
    """The real embedder, counting the model calls made through it."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.model_id, self.calls = inner, inner.model_id, 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        return self.inner.embed_documents(texts)


def test_batching_embedder_matches_single_queries(local_embedder):
    bare = local_embedder.without_query_adapter()  # _Counting batches through embed_documents, as other embedders do
    expected = np.stack([bare.embed_query(q) for q in QUERIES])
    counting = _Counting(bare)
    batching = BatchingEmbedder(counting, max_wait_s=0.02)
    try:
        with ThreadPoolExecutor(max_workers=len(QUERIES)) as pool:
            got = np.stack(list(pool.map(batching.embed_query, QUERIES)))
    finally:
        batching.close()
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert counting.calls < len(QUERIES)
    assert batching.dim == local_embedder.dim


def test_batching_embedder_passes_errors_to_callers(local_embedder):
    class Broken(_Counting):
        def embed_documents(self, texts: list[str]) -> np.ndarray:
            raise RuntimeError("model crashed")

    batching = BatchingEmbedder(Broken(local_embedder))
    try:
        try:
            batching.embed_query("anything")
        except RuntimeError as exc:
            assert "model crashed" in str(exc)
        else:
            raise AssertionError("the error was swallowed")
    finally:
        batching.close()


def test_batching_embedder_uses_the_query_path_when_there_is_one(local_embedder):
    class Queries(_Counting):
        def __init__(self, inner) -> None:  # noqa: ANN001
            super().__init__(inner)
            self.query_calls = 0

        def embed_queries(self, texts: list[str]) -> np.ndarray:
            self.query_calls += 1
            return self.inner.embed_queries(texts)

    wrapped = Queries(local_embedder)
    batching = BatchingEmbedder(wrapped, max_wait_s=0.02)
    try:
        with ThreadPoolExecutor(max_workers=len(QUERIES)) as pool:
            got = np.stack(list(pool.map(batching.embed_query, QUERIES)))
    finally:
        batching.close()
    # The query path: the model's vectors through the query adapter, one at a time or batched alike.
    np.testing.assert_allclose(got, np.stack([local_embedder.embed_query(q) for q in QUERIES]), atol=1e-5)
    assert wrapped.query_calls >= 1 and wrapped.calls == 0
