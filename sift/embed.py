"""Text embeddings: one ``Embedder`` protocol, a local MiniLM model, an OpenAI-compatible client, and a cache.

Every embedder returns float32, L2-normalised vectors, so inner product is cosine similarity. Callers create
one embedder per process and pass it down; nothing here is cached globally.
"""

from __future__ import annotations

import copy
import logging
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from sqlalchemy import Engine, Insert, Table, select
from sqlalchemy.dialects import postgresql, sqlite

from sift.config import Settings
from sift.db.tables import EmbeddingCache as CacheRow
from sift.errors import UpstreamError
from sift.query_adapter import adapter_for

log = logging.getLogger(__name__)

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"
KNOWN_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
_SQL_BATCH = 500


class Embedder(Protocol):
    """Turns texts into float32, L2-normalised vectors of length ``dim``."""

    model_id: str

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm as float32 (zero rows stay zero)."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        return normalise(v[None, :])[0]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


class LocalEmbedder:
    """all-MiniLM-L6-v2 (or another BERT sentence-transformers model directory) on CPU, loaded once per instance.

    Runs on ``sift.minilm.MiniLMEncoder`` (NumPy and the ``tokenizers`` package; no torch), whose vectors match
    sentence-transformers' to float32 rounding, so ``model_id`` names the model alone. Texts longer than the
    model's limit (256 word pieces) are embedded by their head (the first 256 tokens: for code, the signature,
    docstring and start of the body); the vector channel reads the rest through windows of long chunks, cut by
    ``sift.ingest.chunk`` and indexed apart.

    Queries go through the linear query adapter fitted for this model (``sift.query_adapter``) when one ships
    for its ``model_id``; documents never do. ``query_adapter=False`` embeds queries as the bare model does.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
        query_adapter: bool = True,
    ) -> None:
        from sift.minilm import MiniLMEncoder
        from sift.model_files import model_dir

        path = model_dir(model_path)
        name = DEFAULT_LOCAL_MODEL if model_path is None else Path(model_path).name
        self.model_path = path
        self.encoder = MiniLMEncoder(path)
        self.batch_size = batch_size
        self.max_tokens = self.encoder.max_tokens
        self._dim = self.encoder.dim
        self.model_id = f"local:{name}"
        # Batches of embed_documents run side by side, one core each (see sift.minilm.single_threaded_blas).
        self.threads = threads or min(_cpu_count(), 4)
        self.query_threads: int | None = None  # threads for embed_queries (None: one)
        self.use_query_adapter = query_adapter
        self.query_adapter = adapter_for(self.model_id) if query_adapter else None

    @property
    def dim(self) -> int:
        """Vector length."""
        return self._dim

    def without_query_adapter(self) -> LocalEmbedder:
        """A copy that shares the loaded model but embeds queries as the bare model does."""
        twin = copy.copy(self)
        twin.use_query_adapter = False
        twin.query_adapter = None
        return twin

    def with_query_threads(self, threads: int | None) -> LocalEmbedder:
        """A copy that shares the loaded model but runs ``embed_queries`` on up to ``threads`` threads (a
        server's choice: its requests already run side by side, so one each uses the cores best)."""
        twin = copy.copy(self)
        twin.query_threads = threads
        return twin

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches; rows come back in input order."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._encode(texts, self.threads)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed short texts (queries) as one batch, on ``query_threads`` threads at most: the vectors
        ``embed_documents`` gives, through the query adapter when there is one."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        threads = max(1, min(self.query_threads or 1, len(texts)))
        vectors = self.encoder(texts, batch_size=-(-len(texts) // threads), threads=threads)
        return vectors if self.query_adapter is None else self.query_adapter.apply(vectors)

    def _encode(self, texts: Sequence[str], threads: int) -> np.ndarray:
        # Longest first in batches of batch_size, so each batch pads little; truncated to max_tokens.
        return self.encoder(texts, batch_size=self.batch_size, threads=threads)



def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint through ``langchain_openai.OpenAIEmbeddings``.

    Retries 429, 5xx, timeouts and connection errors with exponential backoff (``max_tries`` attempts in all),
    then raises ``UpstreamError``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str = "text-embedding-3-small",
        batch_size: int = 256,
        *,
        max_tries: int = 5,
        backoff_s: float = 0.5,
        timeout_s: float = 60.0,
        dim: int | None = None,
    ) -> None:
        from langchain_openai import OpenAIEmbeddings
        from pydantic import SecretStr

        self.client = OpenAIEmbeddings(
            model=model,
            base_url=base_url,
            api_key=SecretStr(api_key or "unused"),  # servers without auth still need a non-empty key in the client
            check_embedding_ctx_length=False,  # tiktoken pre-splitting only fits OpenAI's own models
            chunk_size=batch_size,
            max_retries=0,  # retries are done here, so the total number of attempts is known
            timeout=timeout_s,
        )
        self.batch_size = batch_size
        self.max_tries = max_tries
        self.backoff_s = backoff_s
        self.model_id = f"openai:{model}@{base_url}"
        self._dim = dim or KNOWN_OPENAI_DIMS.get(model)

    @property
    def dim(self) -> int:
        """Vector length (asked of the server once when the model is not a known one)."""
        if self._dim is None:
            self._dim = int(self._call(["dimension probe"]).shape[1])
        return self._dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in batches of ``batch_size``."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._call(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        out = np.vstack(parts)
        self._dim = self._dim or out.shape[1]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return self.embed_documents([text])[0]

    def _call(self, batch: list[str]) -> np.ndarray:
        import openai

        for attempt in range(1, self.max_tries + 1):
            try:
                return normalise(np.asarray(self.client.embed_documents(batch), dtype=np.float32))
            except (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError) as exc:
                error: Exception = exc
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise UpstreamError(f"embedding server refused the request: {exc}") from exc
                error = exc
            if attempt == self.max_tries:
                raise UpstreamError(
                    f"embedding server failed {self.max_tries} times; check SIFT_EMBED_BASE_URL: {error}"
                ) from error
            delay = self.backoff_s * 2 ** (attempt - 1)
            log.warning("embedding attempt %d failed (%s); retrying in %.1fs", attempt, type(error).__name__, delay)
            time.sleep(delay)
        raise AssertionError("unreachable")


def make_embedder(settings: Settings) -> Embedder:
    """The configured embedder: OpenAI-compatible when ``embed_base_url`` is set, else local MiniLM."""
    if settings.embed_base_url:
        return OpenAIEmbedder(
            settings.embed_base_url, settings.embed_api_key, settings.embed_model, settings.embed_batch_size
        )
    return LocalEmbedder(settings.embed_model_path, settings.embed_batch_size)


def check_embedder(settings: Settings) -> None:
    """Raise ``ModelMissing`` now when the configured embedder is the local model and its files are not installed:
    a command checks this before it starts work, not when it first embeds."""
    if not settings.embed_base_url:
        from sift.model_files import model_dir

        model_dir(settings.embed_model_path)


class EmbeddingCache:
    """Vectors stored in the ``embedding_cache`` table, keyed by (model id, content hash)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached vectors for those of ``hashes`` that are present."""
        wanted = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        t = _cache_table()
        with self.engine.connect() as conn:
            for i in range(0, len(wanted), _SQL_BATCH):
                q = select(t.c.content_hash, t.c.vector).where(
                    t.c.model_id == model_id, t.c.content_hash.in_(wanted[i : i + _SQL_BATCH])
                )
                for row in conn.execute(q):
                    out[row.content_hash] = np.frombuffer(row.vector, dtype=np.float32)
        return out

    def put_many(self, model_id: str, vectors: dict[str, np.ndarray]) -> None:
        """Store vectors; rows already present are left as they are."""
        rows = [
            {"model_id": model_id, "content_hash": h, "dim": int(v.shape[0]), "vector": _blob(v)}
            for h, v in vectors.items()
        ]
        if not rows:
            return
        with self.engine.begin() as conn:
            for i in range(0, len(rows), _SQL_BATCH):
                conn.execute(self._insert_ignore(), rows[i : i + _SQL_BATCH])

    def _insert_ignore(self) -> Insert:
        t = _cache_table()
        dialect = self.engine.dialect.name
        if dialect == "sqlite":
            return sqlite.insert(t).on_conflict_do_nothing()
        if dialect == "postgresql":
            return postgresql.insert(t).on_conflict_do_nothing()
        return t.insert().prefix_with("IGNORE")  # MySQL/MariaDB


def _cache_table() -> Table:
    table = CacheRow.__table__
    assert isinstance(table, Table)  # a declarative class maps a Table (typed as its base, FromClause)
    return table


def _blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def embed_with_cache(
    embedder: Embedder, cache: EmbeddingCache, items: list[tuple[str, str]]
) -> tuple[dict[str, np.ndarray], int, int]:
    """Vectors for ``(content_hash, text)`` items, embedding only texts not yet cached for this model.

    Returns (hash → vector, number of distinct hashes found in the cache, number embedded now).
    """
    texts = dict(items)  # one text per distinct hash
    vectors = cache.get_many(embedder.model_id, texts)
    missing = [h for h in texts if h not in vectors]
    if missing:
        computed = embedder.embed_documents([texts[h] for h in missing])
        fresh = dict(zip(missing, computed, strict=True))
        cache.put_many(embedder.model_id, fresh)
        vectors.update(fresh)
    return vectors, len(texts) - len(missing), len(missing)
