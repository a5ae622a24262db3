"""Progress events: the nodes write them to LangGraph's custom stream, in the shapes the SSE API and the CLI read."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from sift.graph.models import ChannelResult, Evidence, Plan, Verdict
from sift.graph.nodes.fallback import fallback
from sift.graph.progress import checked, emit, fell_back, fused, planned, read, retrieved
from sift.graph.state import AskState

EV = Evidence(id=1, path="pkg/auth.py", start_line=12, end_line=14, kind="method", name="AuthService.validate_token",
              score=1.0, text="def validate_token(self, token): ...", content_hash="h1")
PLAN = Plan(standalone="how is the token validated", key_terms=["token", "validated"])


def test_each_event_has_its_payload() -> None:
    result = ChannelResult(channel="bm25", query="token", round=0, elapsed_ms=3.5, error=None)
    assert retrieved(result) == ("retrieve", {"channel": "bm25", "query": "token", "round": 0, "hits": 0,
                                              "elapsed_ms": 3.5, "error": None})
    assert fused([EV]) == ("fuse", {"evidence": 1,
                                    "items": ["[1] pkg/auth.py:12-14 AuthService.validate_token"]})
    assert checked(Verdict(ok=False, valid=[1], problems=["[2] names no evidence"])) == (
        "check", {"ok": False, "valid": [1], "problems": ["[2] names no evidence"]})
    assert fell_back(PLAN.model_copy(update={"strategy": "widen"}), 1) == (
        "fallback", {"strategy": "widen", "round": 1})
    name, data = planned(PLAN)
    assert name == "plan" and data == PLAN.summary().model_dump()


def test_emit_writes_a_chunk_read_gives_back() -> None:
    chunks: list[Any] = []
    emit(Runtime(context=None, stream_writer=chunks.append), fell_back(PLAN, 2))
    assert [read(c) for c in chunks] == [("fallback", {"strategy": PLAN.strategy, "round": 2})]
    assert read("some other writer's chunk") is None and read({"event": "x"}) is None


def test_a_node_emits_through_its_runtime_and_runs_without_a_stream() -> None:
    state: AskState = {"question": "q", "kb": "tiny", "plan": PLAN, "evidence": [EV], "tried": [], "rounds": 0}
    chunks: list[Any] = []
    update = asyncio.run(fallback(state, Runtime(context=None, stream_writer=chunks.append)))
    assert [read(c) for c in chunks] == [("fallback", {"strategy": update["plan"].strategy, "round": 1})]
    assert asyncio.run(fallback(state, Runtime(context=None)))["rounds"] == 1  # no one streams: nothing to write to
