"""The fused ranker's contract on a real ingest (MiniLM, FAISS, BM25, SQLite) of a small fixture repository.

Whatever weights are active (hand or fitted), fused search must keep these promises: a definition the query
names comes first, code outranks the tests and release notes that mention it unless they are asked for, and
the ranking is deterministic, deduplicated and ranked 1..n by descending score.
"""

from __future__ import annotations

import pytest

from sift.models import Filters
from sift.retrievers.ranker import HAND_WEIGHTS, RankerWeights, active_weights

STORE = '''"""An in-memory store with a size limit."""


class Cache:
    """Keeps recently used values in memory, up to a fixed number of entries."""

    def __init__(self, limit: int = 128) -> None:
        self.limit = limit
        self.entries: dict[str, object] = {}

    def put(self, key: str, value: object) -> None:
        """Remember a value under a key, dropping the oldest entries when the store is full."""
        self.entries[key] = value
        self.shrink()

    def shrink(self) -> None:
        """Drop the least recently used entries until the store holds no more than its limit."""
        while len(self.entries) > self.limit:
            oldest = next(iter(self.entries))
            del self.entries[oldest]

    def fetch(self, key: str, default: object = None) -> object:
        """Return the value stored under a key, or the default when there is none."""
        return self.entries.get(key, default)
'''

SERIALIZE = '''"""Turning stored values into bytes and back."""

import json


def to_bytes(value: object) -> bytes:
    """Encode a value as UTF-8 JSON bytes for writing to disk."""
    return json.dumps(value).encode("utf-8")


def from_bytes(data: bytes) -> object:
    """Decode UTF-8 JSON bytes read from disk back into a value."""
    return json.loads(data.decode("utf-8"))
'''

TESTS = '''from pkg.store import Cache


def test_shrink_drops_least_recently_used_entries():
    cache = Cache(limit=2)
    for key in "abc":
        cache.put(key, key)
    cache.shrink()
    assert list(cache.entries) == ["b", "c"]


def test_fetch_returns_default_for_missing_key():
    assert Cache().fetch("missing", 1) == 1
'''

CHANGES = '''# Changes

## 2.0

- The store now drops the least recently used entries when it is full, instead of refusing new ones.
- Values are encoded as JSON bytes.
'''

GUIDE = '''# Guide

## Limiting memory

Pass `limit` to `Cache` to bound how many entries stay in memory; the least recently used ones are dropped first.

## Saving values

Use `to_bytes` and `from_bytes` to write values to disk and read them back.
'''

FILES = {"pkg/__init__.py": "", "pkg/store.py": STORE, "pkg/serialize.py": SERIALIZE,
         "tests/test_store.py": TESTS, "CHANGELOG.md": CHANGES, "docs/guide.md": GUIDE}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory, local_embedder):
    from tests.conftest import ingested_repo

    with ingested_repo(tmp_path_factory.mktemp("contract"), FILES, "store", local_embedder) as (_, _, s):
        yield s


def _top(searcher, query: str, k: int = 10):
    return searcher.search(query, Filters(kb="store"), k=k).hits


def test_the_active_weights_are_the_fitted_ones():
    # The committed weights file is in force (a fit that lost would leave the hand weights).
    assert active_weights().source == "lab/fit/ranker.py"
    assert active_weights().weights != RankerWeights(HAND_WEIGHTS).weights


@pytest.mark.parametrize(("query", "symbol"), [
    ("where is Cache.shrink defined", "Cache.shrink"),
    ("what does from_bytes do", "from_bytes"),
    ("show me `to_bytes`", "to_bytes"),
])
def test_a_named_definition_comes_first(searcher, query, symbol):
    hits = _top(searcher, query)
    assert hits[0].symbol == symbol, [(h.path, h.symbol) for h in hits[:3]]


@pytest.mark.parametrize("query", [
    "how are the least recently used entries dropped when the store is full",
    "what happens to old entries once the limit is reached",
])
def test_code_outranks_its_tests_and_release_notes_when_they_are_not_asked_for(searcher, query):
    hits = _top(searcher, query)
    paths = [h.path for h in hits]
    assert "pkg/store.py" in paths[:3], paths
    first_code = paths.index("pkg/store.py")
    for other in ("tests/test_store.py", "CHANGELOG.md"):
        assert other not in paths or paths.index(other) > first_code, paths


def test_tests_rank_when_the_query_asks_for_them(searcher):
    paths = [h.path for h in _top(searcher, "which test checks that old entries are dropped", k=5)]
    assert "tests/test_store.py" in paths[:3], paths


def test_fused_ranking_is_deterministic_deduplicated_and_ordered(searcher):
    first = _top(searcher, "write values to disk and read them back")
    again = _top(searcher, "write values to disk and read them back")
    assert [(h.chunk_id, h.score) for h in first] == [(h.chunk_id, h.score) for h in again]
    assert [h.rank for h in first] == list(range(1, len(first) + 1))
    assert all(a.score >= b.score for a, b in zip(first, first[1:], strict=False))
    assert all(h.chunk_id is not None for h in first)
    spans = [(h.path, h.start_line, h.end_line) for h in first]
    for i, (p, s, e) in enumerate(spans):
        assert not any(p == q and s <= f and r <= e for q, r, f in spans[:i]), spans
