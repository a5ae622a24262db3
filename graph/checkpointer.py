"""Where a thread's checkpoints live: PostgreSQL when ``SIFT_DATABASE_URL`` is one, else SQLite in the data
directory, with a serializer that admits the graph's own state models and nothing else unregistered."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from sift.config import Settings

if TYPE_CHECKING:  # psycopg and the savers load with the checkpointer, not with this module
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow

SETUP_LOCK = 0x51F7C4EC  # advisory lock key for creating the PostgreSQL checkpoint tables
_MODELS = ("Plan", "ChannelResult", "RankedChunk", "Evidence", "Citation", "Draft", "Verdict", "Answer", "RetrieveTask",
           "Confidence")
#: The classes a checkpoint may hold: the models where they live, the reducer's ``Reset``, and the models under
#: ``sift.graph.state``, where checkpoints written before they moved to ``graph/models.py`` name them, and the
#: question's shape a plan carries.
STATE_TYPES = [*(("sift.graph.models", name) for name in _MODELS), ("sift.graph.state", "Reset"),
               *(("sift.graph.state", name) for name in _MODELS), ("sift.retrievers.question", "QuestionShape")]


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[AsyncSqliteSaver | AsyncPostgresSaver]:
    """Where threads live: the PostgreSQL database when ``SIFT_DATABASE_URL`` is one (so every replica sees every
    thread), else SQLite at ``DATA_DIR/checkpoints.db``. Either way threads survive restarts."""
    url = settings.resolved_database_url()
    if url.startswith("postgresql"):
        async with _postgres_checkpointer(url) as saver:
            yield saver
        return
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(settings.data_dir / "checkpoints.db")) as conn:
        sqlite_saver = AsyncSqliteSaver(conn, serde=make_serde())
        await _sqlite_setup(sqlite_saver)
        yield sqlite_saver


_SQLITE_SETUP = threading.Lock()  # batch questions run on threads of their own, each opening the checkpointer
SETUP_WAIT = 10.0  # seconds another process may hold the checkpoint database while it creates the tables


async def _sqlite_setup(saver: AsyncSqliteSaver) -> None:
    """Create the checkpoint tables before the saver is used, one connection at a time. The saver creates them
    lazily on a first write, where two connections opened at once (a batch run's concurrent questions, or the CLI
    beside the server on a fresh data directory) both switch the file to WAL and create the tables: one gets
    "database is locked", and a thread deleted after a failed run finds no table. Another process's setup is
    waited for, up to ``SETUP_WAIT``."""
    import sqlite3

    deadline = time.monotonic() + SETUP_WAIT
    while True:
        # Polled, not acquired with a blocking wait: the holder may be a coroutine on this same event loop, which
        # a blocking wait would never let finish.
        if _SQLITE_SETUP.acquire(blocking=False):
            try:
                await saver.setup()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            finally:
                _SQLITE_SETUP.release()
        await asyncio.sleep(0.02)


@asynccontextmanager
async def _postgres_checkpointer(url: str) -> AsyncIterator[AsyncPostgresSaver]:
    """``AsyncPostgresSaver`` over a small connection pool; its tables are created on first use."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool
    from sqlalchemy.engine import make_url

    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    # check_connection: a connection the server dropped (restart, failover) is replaced, not handed out.
    # Rows are dicts (the row_factory in kwargs): the annotation tells the type checker so.
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        conninfo, min_size=1, max_size=8, kwargs=kwargs, open=False, check=AsyncConnectionPool.check_connection)
    async with pool:
        saver = AsyncPostgresSaver(pool, serde=make_serde())
        async with pool.connection() as conn:
            # One process at a time creates or migrates the checkpoint tables. The lock is polled, not awaited:
            # the migrations build indexes CONCURRENTLY, which waits for every running statement — a blocked
            # pg_advisory_lock() call included — so a blocking wait would deadlock with the holder.
            while not await _try_lock(conn):
                await asyncio.sleep(0.05)
            try:
                await saver.setup()
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
        yield saver


async def _try_lock(conn: AsyncConnection[DictRow]) -> bool:
    """Whether this session took the checkpoint tables' setup lock."""
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (SETUP_LOCK,))).fetchone()
    return bool(row and row["pg_try_advisory_lock"])


def make_serde() -> JsonPlusSerializer:
    """A checkpoint serializer that admits the graph's own state models (and nothing else unregistered)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)
