"""The service the REST layer and the CLI call: ask, stream progress, read and delete a thread's history."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Engine

from sift.config import Settings
from sift.errors import InvalidQuery, SiftError
from sift.graph.context import AskContext, RunLimits
from sift.models import MAX_QUESTION_CHARS

if TYPE_CHECKING:  # LangGraph (the state module) loads once a question is valid, psycopg with its checkpointer
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow

    from sift.embed import Embedder
    from sift.graph.confidence import ConfidenceModel
    from sift.graph.state import Answer
    from sift.retrievers.search import Searcher

#: What ``ask_sync`` reports progress to: ``on_event(event, data)`` for each event ``AskService.stream`` yields.
OnEvent = Callable[[str, dict[str, Any]], None]

SETUP_LOCK = 0x51F7C4EC  # advisory lock key for creating the PostgreSQL checkpoint tables
STATE_TYPES = [("sift.graph.state", name) for name in
               ("Plan", "ChannelResult", "RankedChunk", "Evidence", "Citation", "Draft", "Verdict", "Answer", "Reset", "RetrieveTask",
                "Confidence")] + [("sift.retrievers.question", "QuestionShape")]


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


def validate_question(question: str, kb: str) -> str:
    """The stripped question, or InvalidQuery (cheap: the CLI calls it before loading the graph and models)."""
    question = (question or "").strip()
    if not question:
        raise InvalidQuery("question is empty; ask something about the code or docs", field="question")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidQuery(f"question is longer than {MAX_QUESTION_CHARS} characters", field="question")
    if not kb:
        raise InvalidQuery("name a knowledge base (kb)", field="kb")
    return question


def _event(node: str, update: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Progress events for one node's state update."""
    if node == "planner" and update.get("plan") is not None:
        return [("plan", update["plan"].summary().model_dump())]
    if node == "retrieve":
        return [("retrieve", {"channel": r.channel, "query": r.query, "round": r.round, "hits": r.size,
                              "elapsed_ms": r.elapsed_ms, "error": r.error}) for r in update.get("results") or []]
    if node == "fuse":
        items = getattr(update.get("evidence"), "items", None) or []
        return [("fuse", {"evidence": len(items), "items": [e.label() + f" {e.name}" for e in items]})]
    if node == "check" and update.get("verdict") is not None:
        v = update["verdict"]
        return [("check", {"ok": v.ok, "valid": v.valid, "problems": v.problems})]
    if node == "fallback" and update.get("plan") is not None:
        return [("fallback", {"strategy": update["plan"].strategy, "round": update.get("rounds")})]
    return []


class AskService:
    """Runs the graph for questions on threads, checkpointed by ``checkpointer``."""

    def __init__(self, settings: Settings, engine: Engine, searcher: Searcher, checkpointer: BaseCheckpointSaver,
                 chat_model: BaseChatModel | None = None, confidence: ConfidenceModel | None = None,
                 limits: RunLimits | None = None) -> None:
        self.settings = settings
        self.limits = limits or RunLimits.from_settings(settings)
        from sift.graph.confidence import load_model

        self.confidence = confidence or load_model()
        self.engine = engine
        self.searcher = searcher
        self.checkpointer = checkpointer
        self.chat_model = chat_model
        # LangGraph is imported by the first service, not by importing this module (the CLI validates first).
        from sift.graph.build import compile_graph

        self.graph = compile_graph(checkpointer)

    def context(self) -> AskContext:
        """The run context handed to every node."""
        return AskContext(engine=self.engine, searcher=self.searcher, settings=self.settings,
                          chat_model=self.chat_model, limits=self.limits, confidence=self.confidence)

    @staticmethod
    def _config(thread_id: str) -> RunnableConfig:
        from sift.graph.build import RECURSION_LIMIT

        return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}

    async def ask(self, question: str, kb: str, tenant: str = "default", thread_id: str | None = None) -> Answer:
        """Answer ``question`` about knowledge base ``kb`` on a thread (a new one when ``thread_id`` is None)."""
        question = validate_question(question, kb)
        thread_id = thread_id or uuid.uuid4().hex
        t0 = time.perf_counter()
        out = await self.graph.ainvoke({"question": question, "kb": kb, "tenant": tenant},
                                       self._config(thread_id), context=self.context())
        answer: Answer = out["answer"]
        return answer.model_copy(update={"thread_id": thread_id,
                                         "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1)})

    async def stream(self, question: str, kb: str, tenant: str = "default",
                     thread_id: str | None = None) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        """Yield ``(event, data)``: plan, retrieve, fuse, check, fallback, token, answer, done — or error."""
        thread_id = thread_id or uuid.uuid4().hex
        t0 = time.perf_counter()
        try:
            question = validate_question(question, kb)
            config = self._config(thread_id)
            async for item in self.graph.astream(
                {"question": question, "kb": kb, "tenant": tenant}, config, context=self.context(),
                stream_mode=["updates", "messages"],
            ):
                # With a list of modes each item is a (mode, chunk) pair; LangGraph annotates the one-mode item.
                mode, chunk = cast("tuple[str, Any]", item)
                if mode == "messages":
                    msg, meta = chunk
                    text = getattr(msg, "content", "")
                    if meta.get("langgraph_node") in ("answer", "summarize") and isinstance(text, str) and text:
                        yield "token", {"text": text}
                    continue
                for node, update in (chunk or {}).items():
                    for event in _event(node, update or {}):
                        yield event
            state = await self.graph.aget_state(config)
            answer: Answer = state.values["answer"]
            answer = answer.model_copy(update={"thread_id": thread_id,
                                               "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1)})
            yield "answer", answer.model_dump(mode="json")
            yield "done", {"thread_id": thread_id, "elapsed_ms": answer.elapsed_ms}
        except SiftError as exc:
            yield "error", {"message": exc.message, "status": exc.status, "type": type(exc).__name__}
        except Exception as exc:  # noqa: BLE001 - a failure mid-stream becomes an error event
            yield "error", {"message": f"{type(exc).__name__}: {exc}", "status": 500, "type": type(exc).__name__}

    async def history(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's turns: question, answer text, citations, grounded (empty for an unknown thread)."""
        state = await self.graph.aget_state(self._config(thread_id))
        turns = (state.values or {}).get("turns") or []
        return [{"question": t["question"], "answer": t["answer"], "citations": t["citations"],
                 "grounded": t["grounded"]} for t in turns]

    async def delete_thread(self, thread_id: str) -> bool:
        """Forget a thread; False when it did not exist."""
        state = await self.graph.aget_state(self._config(thread_id))
        if not state.values:
            return False
        await self.checkpointer.adelete_thread(thread_id)
        return True


def open_resources(settings: Settings, embedder: Embedder | None = None) -> tuple[Engine, Searcher]:
    """The engine and fused searcher for ``settings`` (the embedder is loaded here unless given)."""
    from sift.db import open_database
    from sift.embed import make_embedder
    from sift.retrievers.backend import make_index_cache
    from sift.retrievers.search import Searcher

    engine = open_database(settings)
    searcher = Searcher(engine, make_index_cache(settings, engine), embedder or make_embedder(settings))
    return engine, searcher


def ask_sync(settings: Settings, question: str, kb: str, tenant: str = "default", thread_id: str | None = None,
             *, engine: Engine | None = None, searcher: Searcher | None = None,
             chat_model: BaseChatModel | None = None, on_event: OnEvent | None = None,
             forget: bool = False, limits: RunLimits | None = None) -> Answer:
    """Blocking ask for the CLI and batch runs: opens the checkpointer, runs (streaming to ``on_event``), closes.
    With ``forget`` (a batch question on a thread of its own, which no one can follow up) the thread's
    checkpoints are deleted once it is answered, so a batch run leaves no state behind. ``limits`` default to
    the settings' (``RunLimits.from_settings``)."""
    from sift.chat import make_chat_model

    if engine is None or searcher is None:
        engine, searcher = open_resources(settings)
    chat_model = chat_model if chat_model is not None else make_chat_model(settings)

    from sift.graph.state import Answer  # noqa: F811 - at run time; the module-level import is for types only

    async def run() -> Answer:
        async with open_checkpointer(settings) as saver:
            key = thread_id or uuid.uuid4().hex
            try:
                answer = await answered(AskService(settings, engine, searcher, saver, chat_model, limits=limits), key)
            except BaseException:
                if forget:  # the run's own error is the one to report, not a failed clean-up after it
                    with contextlib.suppress(Exception):
                        await saver.adelete_thread(key)
                raise
            if forget:
                await saver.adelete_thread(key)
            return answer

    async def answered(service: AskService, key: str) -> Answer:
        if on_event is None:
            return await service.ask(question, kb, tenant, key)
        answer = None
        async for event, data in service.stream(question, kb, tenant, key):
            on_event(event, data)
            if event == "answer":
                answer = Answer.model_validate(data)
            if event == "error":
                raise SiftError(data["message"])
        assert answer is not None
        return answer

    return asyncio.run(run())
