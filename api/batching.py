"""Micro-batching of query embeddings: concurrent requests share one model call.

One MiniLM call for a batch of 32 short queries costs little more than a call for one, so under load the
vector channel's cost per request drops several times. A single worker thread takes what is queued (waiting at
most ``max_wait_s`` for more once the first query arrives) and answers each caller through a future.
"""

from __future__ import annotations

import logging
import queue
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the model loads in the app's lifespan
    from sift.embed import Embedder

log = logging.getLogger(__name__)


class BatchingEmbedder:
    """Wraps an embedder; ``embed_query`` calls from many threads are batched, everything else passes through."""

    def __init__(self, inner: Embedder, max_batch: int = 64, max_wait_s: float = 0.002) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self._queue: queue.Queue[tuple[str, Future[np.ndarray]] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._run, daemon=True, name="sift-embed-batch")
        self._worker.start()

    @property
    def dim(self) -> int:
        """Vector length of the wrapped model."""
        return self.inner.dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unbatched pass-through."""
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector, computed in a batch with whatever other queries are waiting."""
        return self.submit(text).result()

    def submit(self, text: str) -> Future[np.ndarray]:
        """Queue ``text`` and return at once; the future holds its vector when its batch is done."""
        future: Future[np.ndarray] = Future()
        self._queue.put((text, future))
        return future

    def close(self) -> None:
        """Stop the worker thread (queued queries are still answered)."""
        self._queue.put(None)
        self._worker.join(timeout=10)

    def _take(self) -> tuple[list[tuple[str, Future[np.ndarray]]], bool]:
        first = self._queue.get()
        if first is None:
            return [], True
        batch = [first]
        while len(batch) < self.max_batch:
            try:
                item = self._queue.get(timeout=self.max_wait_s) if len(batch) == 1 else self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._answer(batch)
                return [], True
            batch.append(item)
        return batch, False

    def _run(self) -> None:
        while True:
            batch, stop = self._take()
            if stop:
                return
            self._answer(batch)

    def _answer(self, batch: list[tuple[str, Future[np.ndarray]]]) -> None:
        try:
            texts = [text for text, _ in batch]
            # The local model's query path (traced, GIL-free); other embedders batch through embed_documents.
            embed = getattr(self.inner, "embed_queries", None) or self.inner.embed_documents
            vectors = embed(texts)
        except Exception as exc:  # noqa: BLE001 - every caller gets the failure
            for _, future in batch:
                future.set_exception(exc)
            return
        for row, (_, future) in zip(vectors, batch, strict=True):
            future.set_result(row)
