"""Tables of the PostgreSQL search backend (``SIFT_SEARCH_BACKEND=postgres``): BM25 postings, chunk vectors.

They exist only on PostgreSQL, and only where the pgvector extension is installed: migration 0010 creates them
when it can, and ``ensure_search_schema`` (run by the first ingest on the postgres backend) creates them later or
says what is missing. SQLite and a PostgreSQL without pgvector on the default ``local`` backend never need them.

Every row belongs to a chunk (``chunk_id``, cascading delete), so garbage collection of file versions removes
their postings, names and vectors; per-generation statistics (``search_terms``, ``search_stats``) cascade from
``generations``. Visibility in a generation is the file versions' rule (``sift.db.visible_in``) through
``file_id``: rows are written once per chunk and never change.

Vectors use an untyped ``vector`` column, so knowledge bases embedded with models of different widths share the
table. HNSW needs a fixed width, so each (knowledge base, width) that asks for HNSW gets a partial expression index
``USING hnsw ((embedding::vector(D)) vector_ip_ops) WHERE kb_id = K AND dim = D`` (``hnsw_index_ddl``): a graph
per knowledge base, as each had its own FAISS index, and queries ordering by ``embedding::vector(D) <#> q`` with
those two literals in their WHERE clause use it. Ordering by the uncast column never does: that is the exact scan.
"""

from __future__ import annotations

import numpy as np
from sqlalchemy import Connection, text

#: A knowledge base's file versions visible in generation ``:gen`` (``sift.db.visible_in``), on files alias ``f``:
#: the condition every search row is read and counted through.
VISIBLE = "f.kb_id = :kb AND f.gen_from <= :gen AND (f.gen_to IS NULL OR f.gen_to > :gen)"
#: The same rule from the other side: the knowledge base's file versions *not* visible in ``:gen`` (newer ones being
#: built, superseded ones awaiting garbage collection), usually few. A row of the kb whose file is not among them is
#: visible, so a hashed ``NOT IN`` of this spares looking up each row's file.
HIDDEN_FILES = "SELECT hf.id FROM files hf WHERE hf.kb_id = :kb AND (hf.gen_from > :gen OR hf.gen_to <= :gen)"

SEARCH_TABLES = ("search_vectors", "search_windows", "search_postings", "search_names", "search_docs", "search_terms",
                 "search_stats")

WINDOWS_DDL = (
    # The windows of long function and doc chunks (``sift.ingest.chunk.window_texts``): several per chunk. A
    # generation whose statistics record ``window_chars`` has the windows of all its chunks of that size.
    """CREATE TABLE IF NOT EXISTS search_windows (
        chunk_id integer NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model_id text NOT NULL,
        part integer NOT NULL,
        kb_id integer NOT NULL,
        file_id integer NOT NULL,
        kind text NOT NULL,
        dim integer NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (chunk_id, model_id, part))""",
    "CREATE INDEX IF NOT EXISTS ix_search_windows_kb ON search_windows (kb_id, dim, model_id)",
)

_DDL = (
    # One row per chunk indexed in PostgreSQL: its BM25 document length (its presence marks "indexed").
    """CREATE TABLE IF NOT EXISTS search_docs (
        chunk_id integer PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        file_id integer NOT NULL,
        kb_id integer NOT NULL,
        doc_len integer NOT NULL)""",
    # term → chunk postings of the code-aware tokenizer, with what the Okapi formula needs beside idf.
    """CREATE TABLE IF NOT EXISTS search_postings (
        kb_id integer NOT NULL,
        term text NOT NULL,
        chunk_id integer NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        file_id integer NOT NULL,
        tf integer NOT NULL,
        doc_len integer NOT NULL,
        PRIMARY KEY (kb_id, term, chunk_id) INCLUDE (file_id, tf, doc_len))""",
    "CREATE INDEX IF NOT EXISTS ix_search_postings_chunk ON search_postings (chunk_id)",
    # Tokens of chunk names (symbols, headings) for the smart keyword channel.
    """CREATE TABLE IF NOT EXISTS search_names (
        kb_id integer NOT NULL,
        term text NOT NULL,
        chunk_id integer NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        file_id integer NOT NULL,
        PRIMARY KEY (kb_id, term, chunk_id) INCLUDE (file_id))""",
    "CREATE INDEX IF NOT EXISTS ix_search_names_chunk ON search_names (chunk_id)",
    # Document frequency of every term in one generation (the idf of the Okapi formula).
    """CREATE TABLE IF NOT EXISTS search_terms (
        kb_id integer NOT NULL,
        generation integer NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (kb_id, generation, term),
        FOREIGN KEY (kb_id, generation) REFERENCES generations (kb_id, number) ON DELETE CASCADE)""",
    # Per generation: N, total length (avgdl = total / N), the idf sum for rank_bm25's epsilon floor, the model.
    """CREATE TABLE IF NOT EXISTS search_stats (
        kb_id integer NOT NULL,
        generation integer NOT NULL,
        n_docs integer NOT NULL,
        total_len bigint NOT NULL,
        n_terms integer NOT NULL,
        idf_sum double precision NOT NULL,
        model_id text NOT NULL,
        dim integer NOT NULL,
        vector_kind text NOT NULL,
        window_chars integer,
        PRIMARY KEY (kb_id, generation),
        FOREIGN KEY (kb_id, generation) REFERENCES generations (kb_id, number) ON DELETE CASCADE)""",
    "CREATE EXTENSION IF NOT EXISTS vector",
    """CREATE TABLE IF NOT EXISTS search_vectors (
        chunk_id integer NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model_id text NOT NULL,
        kb_id integer NOT NULL,
        file_id integer NOT NULL,
        kind text NOT NULL,
        dim integer NOT NULL,
        embedding vector NOT NULL,
        PRIMARY KEY (chunk_id, model_id))""",
    "CREATE INDEX IF NOT EXISTS ix_search_vectors_kb ON search_vectors (kb_id, dim, model_id)",
    *WINDOWS_DDL,
)


def pgvector_available(conn: Connection) -> bool:
    """True when this PostgreSQL server can install (or has) the ``vector`` extension."""
    return conn.execute(text("SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")).scalar_one() > 0


def search_schema_ready(conn: Connection) -> bool:
    """True when every search table exists."""
    found = conn.execute(
        text("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
             "AND table_name = ANY(:names)"), {"names": list(SEARCH_TABLES)},
    ).scalar()
    return found == len(SEARCH_TABLES)


def create_search_schema(conn: Connection) -> None:
    """Create the extension, tables and plain indexes (idempotent); the caller checked ``pgvector_available``."""
    for statement in _DDL:
        conn.execute(text(statement))


def create_windows_table(conn: Connection) -> None:
    """Add the windows table, and the statistics' ``window_chars``, to a search schema made before they existed
    (migration 0012)."""
    for statement in WINDOWS_DDL:
        conn.execute(text(statement))
    conn.execute(text("ALTER TABLE search_stats ADD COLUMN IF NOT EXISTS window_chars integer"))


def drop_search_schema(conn: Connection) -> None:
    """Drop the search tables (the extension stays: other schemas may use it)."""
    for table in SEARCH_TABLES:
        conn.execute(text(f"DROP TABLE IF EXISTS {table} CASCADE"))


VECTOR_TABLES = ("search_vectors", "search_windows")  # the tables of vectors, each with its HNSW graphs


def hnsw_index_name(kb_id: int, dim: int, table: str = "search_vectors") -> str:
    """Name of the HNSW index of one knowledge base's vectors (or windows) of width ``dim``."""
    return f"ix_{table}_hnsw_k{int(kb_id)}_d{int(dim)}"


def hnsw_index_ddl(kb_id: int, dim: int, m: int = 16, ef_construction: int = 64, table: str = "search_vectors") -> str:
    """CREATE INDEX for that HNSW graph (ints only are interpolated; pgvector's defaults for m/ef_construction)."""
    kb_id, dim = int(kb_id), int(dim)
    if table not in VECTOR_TABLES:
        raise ValueError(f"no vector table {table!r}")
    return (f"CREATE INDEX IF NOT EXISTS {hnsw_index_name(kb_id, dim, table)} ON {table} USING hnsw "
            f"((embedding::vector({dim})) vector_ip_ops) WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
            f"WHERE kb_id = {kb_id} AND dim = {dim}")


def vector_literal(vec: np.ndarray) -> str:
    """pgvector's text form of a vector: ``[0.1,0.2,…]`` (float32 values printed exactly)."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vec, dtype=np.float32).reshape(-1).tolist()) + "]"
