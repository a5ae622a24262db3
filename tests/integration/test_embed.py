"""Embedders and the embedding cache: the real MiniLM model, a scripted OpenAI-compatible server, real SQLite."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from sift.config import Settings
from sift.db import open_database
from sift.embed import (
    EmbeddingCache,
    LocalEmbedder,
    OpenAIEmbedder,
    embed_with_cache,
    make_embedder,
    normalise,
)
from sift.errors import UpstreamError


@pytest.fixture(scope="session")
def minilm() -> LocalEmbedder:
    return LocalEmbedder()


def test_normalise_unit_rows_and_zero_rows() -> None:
    out = normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_local_embedder_shapes_and_norms(minilm: LocalEmbedder) -> None:
    texts = ["def validate_token(token): ...", "How to rotate secrets", "x" * 5000, ""]
    vecs = minilm.embed_documents(texts)
    assert minilm.model_id == "local:all-MiniLM-L6-v2"
    assert vecs.shape == (4, minilm.dim) == (4, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert minilm.embed_documents([]).shape == (0, 384)


def test_local_embedder_keeps_input_order(minilm: LocalEmbedder) -> None:
    texts = ["short", "a much longer text about validating bearer tokens against a secret", "mid length text"]
    together = minilm.embed_documents(texts)
    bare = minilm.without_query_adapter()
    for i, text in enumerate(texts):
        np.testing.assert_allclose(together[i], bare.embed_query(text), atol=1e-5)


def test_queries_go_through_the_adapter_and_documents_never(minilm: LocalEmbedder) -> None:
    assert minilm.query_adapter is not None  # the packaged model ships with one
    bare = minilm.without_query_adapter()
    texts = ["how do I stop retrying after a while", "where is the session cookie signed"]
    np.testing.assert_allclose(minilm.embed_queries(texts), minilm.query_adapter.apply(bare.embed_queries(texts)),
                               atol=1e-6)
    np.testing.assert_array_equal(minilm.embed_documents(texts), bare.embed_documents(texts))
    assert not np.allclose(minilm.embed_query(texts[0]), bare.embed_query(texts[0]), atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(minilm.embed_queries(texts), axis=1), 1.0, rtol=1e-5)
    assert minilm.model_id == bare.model_id  # documents indexed either way are the same vectors
    assert LocalEmbedder(query_adapter=False).query_adapter is None


def test_query_path_gives_the_document_vectors(minilm: LocalEmbedder) -> None:
    bare = minilm.without_query_adapter()  # the query path's own encoder, before the adapter
    texts = ["x", "", "where is the bearer token validated?", "AuthService.rotate_secret",
             "def parse(path):\n    " + "tokens = split(line)\n    " * 150]  # the last is past the 256-token limit
    np.testing.assert_allclose(bare.embed_queries(texts), minilm.embed_documents(texts), atol=1e-5)
    for text in texts[:3]:  # one at a time (no padding in the batch) too
        np.testing.assert_allclose(bare.embed_query(text), minilm.embed_documents([text])[0], atol=1e-5)


def test_query_path_on_several_threads(minilm: LocalEmbedder) -> None:
    two = minilm.with_query_threads(2)
    assert two.encoder is minilm.encoder  # the copy shares the loaded model
    assert minilm.query_threads is None
    texts = ["rotate the secret", "log a user in", "where is the data directory configured"]
    np.testing.assert_allclose(two.embed_queries(texts), minilm.embed_queries(texts), atol=1e-5)
    assert two.embed_queries([]).shape == (0, minilm.dim)


def test_local_embedder_semantic_neighbour(minilm: LocalEmbedder) -> None:
    docs = minilm.embed_documents(
        ["Validate a bearer token against the shared secret.", "Render the documentation as HTML.", "Parse a date."]
    )
    q = minilm.embed_query("check that an auth token is valid")
    assert int(np.argmax(docs @ q)) == 0


class _Script:
    """What the fake server answers: a queue of error statuses first, then deterministic vectors."""

    def __init__(self, errors: list[int]) -> None:
        self.errors = errors
        self.calls = 0
        self.inputs: list[list[str]] = []


def _vector(text: str, dim: int = 8) -> np.ndarray:
    digest = hashlib.sha256(text.encode()).digest()
    return np.frombuffer(digest[: dim * 4], dtype=np.uint8)[:dim].astype(np.float32) + 1.0


@pytest.fixture
def embed_server() -> Iterator[tuple[str, _Script]]:
    script = _Script([])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.calls += 1
            if script.errors:
                self.send_response(script.errors.pop(0))
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error": {"message": "scripted failure"}}')
                return
            inputs = body["input"]
            script.inputs.append(inputs)
            data = []
            for i, text in enumerate(inputs):
                vec = _vector(text)
                emb = base64.b64encode(vec.tobytes()).decode() if body.get("encoding_format") == "base64" else vec.tolist()
                data.append({"object": "embedding", "index": i, "embedding": emb})
            payload = {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}}
            raw = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", script
    server.shutdown()
    server.server_close()


def test_openai_embedder_batches_and_normalises(embed_server: tuple[str, _Script]) -> None:
    url, script = embed_server
    emb = OpenAIEmbedder(url, None, "test-embed", batch_size=2, backoff_s=0.01)
    vecs = emb.embed_documents(["a", "b", "c"])
    assert emb.model_id == f"openai:test-embed@{url}"
    assert script.inputs == [["a", "b"], ["c"]]
    assert emb.dim == 8
    np.testing.assert_allclose(vecs, normalise(np.stack([_vector(t) for t in "abc"])), rtol=1e-6)


@pytest.mark.parametrize("statuses", [[429], [503, 500], [429, 502, 504, 500]])
def test_openai_embedder_retries_transient_errors(embed_server: tuple[str, _Script], statuses: list[int]) -> None:
    url, script = embed_server
    script.errors = list(statuses)
    vec = OpenAIEmbedder(url, "k", "test-embed", backoff_s=0.01).embed_query("hello")
    assert script.calls == len(statuses) + 1
    np.testing.assert_allclose(vec, normalise(_vector("hello")), rtol=1e-6)


@pytest.mark.parametrize(("statuses", "calls"), [([500] * 6, 5), ([400], 1)])
def test_openai_embedder_raises_upstream_error(
    embed_server: tuple[str, _Script], statuses: list[int], calls: int
) -> None:
    url, script = embed_server
    script.errors = list(statuses)
    with pytest.raises(UpstreamError):
        OpenAIEmbedder(url, "k", "test-embed", backoff_s=0.01, dim=8).embed_query("hello")
    assert script.calls == calls


def test_make_embedder_picks_openai_when_configured(tmp_path: Path) -> None:
    emb = make_embedder(Settings(data_dir=tmp_path, embed_base_url="http://127.0.0.1:9/v1", embed_api_key="k"))
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.dim == 1536


def test_embedding_cache_round_trip(tmp_path: Path) -> None:
    cache = EmbeddingCache(open_database(Settings(data_dir=tmp_path)))
    vectors = {f"h{i}": normalise(np.arange(4, dtype=np.float32) + i) for i in range(1200)}
    cache.put_many("m1", vectors)
    cache.put_many("m1", {"h0": np.zeros(4, dtype=np.float32)})  # already present: ignored
    got = cache.get_many("m1", [*vectors, "missing"])
    assert set(got) == set(vectors)
    np.testing.assert_array_equal(got["h0"], vectors["h0"])
    assert cache.get_many("m2", vectors) == {}


def test_embed_with_cache_never_embeds_twice(tmp_path: Path, minilm: LocalEmbedder) -> None:
    cache = EmbeddingCache(open_database(Settings(data_dir=tmp_path)))
    items = [("h1", "validate a token"), ("h2", "rotate secrets"), ("h1", "validate a token")]
    first, cached, computed = embed_with_cache(minilm, cache, items)
    assert (cached, computed) == (0, 2)
    second, cached, computed = embed_with_cache(minilm, cache, [*items, ("h3", "configure data dir")])
    assert (cached, computed) == (2, 1)
    np.testing.assert_array_equal(second["h1"], first["h1"])
    np.testing.assert_allclose(second["h3"], minilm.embed_documents(["configure data dir"])[0], atol=1e-6)
