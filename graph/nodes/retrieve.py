"""The retrieve fan-out: one ``retrieve`` branch per channel × sub-query (plus DocQL and file reads), each
bounded by the per-branch timeout."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from sift.errors import SiftError, VectorsNotReady
from sift.graph.context import AskContext
from sift.graph.models import RetrieveTask
from sift.graph.progress import emit, retrieved
from sift.graph.retrieval import in_daemon_thread, plan_tasks, run_task, timed_result
from sift.graph.state import AskState

log = logging.getLogger(__name__)


def route_retrieve(state: AskState) -> list[Send] | Literal["generate"]:
    """Fan out one ``retrieve`` task per channel × sub-query (plus DocQL / file reads); none → ``generate``."""
    plan = state["plan"]
    if not plan.need_retrieval:
        return "generate"
    tasks = plan_tasks(plan, state["kb"], state.get("tenant") or "default", state.get("rounds", 0))
    if not tasks:
        return "generate"
    return [Send("retrieve", t) for t in tasks]


async def retrieve(task: RetrieveTask, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """One channel over one query, bounded by the context's per-branch timeout; failures become empty results."""
    ctx = runtime.context
    t = task
    started = time.time()
    limit = ctx.limits.channel_timeout_ms / 1000 if ctx.limits.wall_clock else None
    try:
        hits = await asyncio.wait_for(in_daemon_thread(run_task, t, ctx.engine, ctx.searcher), timeout=limit)
        result = timed_result(t, started, hits, None)
    except TimeoutError:
        result = timed_result(t, started, [], f"timed out after {ctx.limits.channel_timeout_ms} ms")
        result = result.model_copy(update={"timed_out": True})
    except VectorsNotReady as exc:  # searchable by keyword only, for now: the answer says what it did without
        result = timed_result(t, started, [], exc.message).model_copy(update={"unavailable": True})
    except SiftError as exc:
        result = timed_result(t, started, [], exc.message)
    log.info("retrieve %s round %d: %d hits in %.0f ms", t.channel, t.round, result.size, result.elapsed_ms)
    emit(runtime, retrieved(result))
    return {"results": [result]}
