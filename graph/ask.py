"""The entry point batch runs (``sift eval --mode answer``) use: one set of resources, one answer per call."""

from __future__ import annotations

from collections.abc import Callable

from sift.config import Settings
from sift.graph.context import RunLimits
from sift.graph.models import Answer
from sift.graph.service import ask_sync, open_resources


def make_answerer(settings: Settings, tenant: str = "default") -> tuple[Callable[[str, str], Answer], Callable[[], None]]:
    """``(answer(question, kb), close)``: the database, indexes and embedder are opened once, here.

    Each call runs on a fresh thread id, so batch questions never see each other's history, and its checkpoints
    are deleted once it is answered (no one can follow it up); calls may come from several threads at once.

    No wall clock bounds a batch answer (``RunLimits(wall_clock=False)``): with several questions in flight on a
    busy machine, branch timeouts and the plan's time budget would cut retrieval short and change answers, so a
    batch run answers each question as ``sift ask`` does when none of its branches runs out of time, whatever
    the concurrency. An answer that is still degraded (an LLM that failed) says so in ``degraded_reasons``.
    """
    from sift.chat import make_chat_model

    engine, searcher = open_resources(settings)
    chat_model = make_chat_model(settings)

    def answer(question: str, kb: str) -> Answer:
        return ask_sync(settings, question, kb, tenant, engine=engine, searcher=searcher, chat_model=chat_model,
                        forget=True, limits=RunLimits(wall_clock=False))

    return answer, searcher.close
