"""Vectors embedded once across benchmarks: each bench that ingests the eval projects into its own data directory
first copies what the others' databases already hold.

``sift.embed.EmbeddingCache`` keys a vector by the model id and the hash of the text embedded, so a vector copied
from another database is used only for the same model and the same text; the ingest embeds the rest as usual.
The answer bench, the retrieval bench and the ranker's fit ingest many of the same projects, and most of an
ingest's time is embedding: seeded, the second bench's ingest of a project costs its parse and its index writes.
Standard library only, as ``bench/ab_commits.py`` runs under any Python 3.11.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
# The databases of the data directories that the benches ingest into: bench/answer.py, bench/retrieval.py and
# lab/fit/ranker.py (with lab/train/).
BENCH_DATABASES = ("answer-data/sift.db", "retrieval/data/sift.db", "ranker/data/sift.db")


def seed(db: Path, others: Iterable[Path]) -> int:
    """Copy the ``others`` databases' embedding-cache rows into ``db`` (its migrations already run; rows it holds
    stay as they are); returns how many rows ``db`` holds then. A database without the table is skipped, named."""
    con = sqlite3.connect(db)
    try:
        for other in others:
            if not other.exists() or other.resolve() == db.resolve():
                continue
            con.execute("ATTACH DATABASE ? AS other", (str(other),))
            try:
                con.execute("INSERT OR IGNORE INTO embedding_cache (model_id, content_hash, dim, vector) "
                            "SELECT model_id, content_hash, dim, vector FROM other.embedding_cache")
                con.commit()
            except sqlite3.OperationalError as exc:  # a database whose migrations never ran
                print(f"not seeding from {other}: {exc}", flush=True)
            con.execute("DETACH DATABASE other")
        return con.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
    finally:
        con.close()


def seed_from_benches(db: Path, out: Path = OUT) -> int:
    """``seed`` ``db`` from every bench's database under ``out`` (``BENCH_DATABASES``)."""
    return seed(db, [out / rel for rel in BENCH_DATABASES])
