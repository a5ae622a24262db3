"""The service the REST layer and the CLI call: ask, stream progress, read and delete a thread's history."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Engine

from sift.config import Settings
from sift.errors import InvalidQuery, SiftError
from sift.graph.checkpointer import open_checkpointer
from sift.graph.context import AskContext, RunLimits
from sift.graph.progress import read
from sift.models import MAX_QUESTION_CHARS

if TYPE_CHECKING:  # LangGraph (the state module) loads once a question is valid
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from sift.embed import Embedder
    from sift.graph.models import Answer
    from sift.graph.writer import ConfidenceModel
    from sift.retrievers.search import Searcher

#: What ``ask_sync`` reports progress to: ``on_event(event, data)`` for each event ``AskService.stream`` yields.
OnEvent = Callable[[str, dict[str, Any]], None]


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


class AskService:
    """Runs the graph for questions on threads, checkpointed by ``checkpointer``."""

    def __init__(self, settings: Settings, engine: Engine, searcher: Searcher, checkpointer: BaseCheckpointSaver,
                 chat_model: BaseChatModel | None = None, confidence: ConfidenceModel | None = None,
                 limits: RunLimits | None = None) -> None:
        self.settings = settings
        self.limits = limits or RunLimits.from_settings(settings)
        from sift.graph.writer import load_model

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
                stream_mode=["custom", "messages"],
            ):
                # With a list of modes each item is a (mode, chunk) pair; LangGraph annotates the one-mode item.
                mode, chunk = cast("tuple[str, Any]", item)
                if mode == "custom":  # the nodes' own progress events (graph/progress.py), as they happen
                    if (event := read(chunk)) is not None:
                        yield event
                    continue
                msg, meta = chunk
                text = getattr(msg, "content", "")
                if meta.get("langgraph_node") in ("answer", "summarize") and isinstance(text, str) and text:
                    yield "token", {"text": text}
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

    from sift.graph.models import Answer  # noqa: F811 - at run time; the module-level import is for types only

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
