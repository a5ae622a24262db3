"""Seeding a bench's embedding cache from the other benches' databases (``bench/embedding_cache.py``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from bench.embedding_cache import BENCH_DATABASES, seed, seed_from_benches
from sift.config import Settings
from sift.db import open_database
from sift.embed import EmbeddingCache


@pytest.fixture(autouse=True)
def _sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIFT_DATABASE_URL", raising=False)  # the benches' databases are SQLite files


def _cache(data: Path) -> EmbeddingCache:
    return EmbeddingCache(open_database(Settings(data_dir=data)))


def test_seed_copies_vectors_by_model_and_text_and_keeps_its_own(tmp_path: Path) -> None:
    ours, theirs = _cache(tmp_path / "ours"), _cache(tmp_path / "theirs")
    mine, other, shared = (np.full(4, v, np.float32) for v in (1.0, 2.0, 3.0))
    ours.put_many("local:m", {"h1": mine})
    theirs.put_many("local:m", {"h1": shared, "h2": other})
    theirs.put_many("local:m+mean", {"h3": other})
    not_a_bench = tmp_path / "plain.db"
    sqlite3.connect(not_a_bench).close()  # a database without the table is skipped, not an error

    n = seed(tmp_path / "ours" / "sift.db", [tmp_path / "theirs" / "sift.db", not_a_bench, tmp_path / "absent.db"])

    assert n == 3
    got = ours.get_many("local:m", ["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"}
    assert np.array_equal(got["h1"], mine)  # a vector it had stays as it was
    assert np.array_equal(got["h2"], other)
    assert set(ours.get_many("local:m+mean", ["h3"])) == {"h3"}  # another model's vector keeps its own key


def test_seed_from_benches_reads_each_bench_database_and_skips_itself(tmp_path: Path) -> None:
    answer, retrieval = BENCH_DATABASES[0], BENCH_DATABASES[1]
    for rel, h in ((answer, "a"), (retrieval, "r")):
        _cache((tmp_path / rel).parent).put_many("local:m", {h: np.ones(4, np.float32)})
    assert seed_from_benches(tmp_path / retrieval, out=tmp_path) == 2
    assert seed_from_benches(tmp_path / answer, out=tmp_path) == 2
