"""The LLM path over real HTTP: the real ChatOpenAI client against a scripted OpenAI-compatible stand-in server."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from sift.chat import make_chat_model
from sift.graph.checkpointer import open_checkpointer
from sift.graph.service import AskService
from tests.conftest import TINY_FILES, ingested_repo
from tests.llm_server import ScriptedLLM

QUESTION = "Where is validate_token defined?"
DONE = {"content": "The evidence is enough."}  # the agent stops calling tools; the answer is asked for next
PLAN = {"content": {"question_type": "locate", "need_retrieval": True, "standalone": QUESTION,
                    "identifiers": ["validate_token"], "index_type": "function",
                    "docql": ['$.code.function("validate_token")']}}


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    with ingested_repo(tmp_path_factory.mktemp("graph-llm"), TINY_FILES, "tiny", local_embedder) as ready:
        yield ready


def _evidence_id(body: dict[str, Any], path: str = "pkg/auth.py", line: int = 12) -> int:
    text = "\n".join(str(m.get("content") or "") for m in body["messages"])
    for n, p, a, b in re.findall(r"\[(\d+)\] ([\w./]+):(\d+)-(\d+)", text):
        if p == path and int(a) <= line <= int(b):
            return int(n)
    raise AssertionError("the evidence the script wants to cite was not shown to the model")


def final_answer(body: dict[str, Any]) -> dict[str, Any]:
    """A structured final answer citing the evidence that holds validate_token."""
    n = _evidence_id(body)
    return {"content": {"answer": f"`validate_token` compares the token with the shared secret [{n}].",
                        "citations": [{"evidence_id": n}], "not_found": False}}


def _ask(env, llm: ScriptedLLM, timeout_s: float = 5.0, stream: bool = False):
    settings, engine, searcher = env
    # no branch timeout: these tests are about the model's calls, and a search branch that a busy machine holds
    # past its budget would degrade the answer for a reason of its own
    llm_settings = settings.model_copy(update={"llm_base_url": llm.base_url, "llm_model": "stand-in",
                                               "llm_api_key": "test", "llm_timeout_s": timeout_s,
                                               "branch_timeout_ms": 0})

    async def go():
        async with open_checkpointer(settings) as saver:
            service = AskService(llm_settings, engine, searcher, saver, make_chat_model(llm_settings))
            if stream:
                return [e async for e in service.stream(QUESTION, "tiny")]
            return await service.ask(QUESTION, "tiny")

    return asyncio.run(go())


def test_llm_tool_call_then_structured_answer(env) -> None:
    tool = {"tool_calls": [("docql", {"query": '$.code.function("validate_token")'}),
                           ("list_file_content", {"file_path": "pkg/auth.py", "start_line": 1, "end_line": 21})]}
    with ScriptedLLM([PLAN, tool, DONE, final_answer]) as llm:
        answer = _ask(env, llm)
    assert answer.mode == "llm" and not answer.degraded and answer.grounded
    assert answer.citations and answer.citations[0].path == "pkg/auth.py"
    assert answer.tokens > 0
    assert len(llm.requests) == 4
    assert llm.requests[1]["tools"] and {t["function"]["name"] for t in llm.requests[1]["tools"]} == {
        "search", "list_file_content", "docql"}
    tool_results = [m for m in llm.requests[2]["messages"] if m.get("role") == "tool"]
    assert len(tool_results) == 2 and "validate_token" in tool_results[0]["content"]
    # the planner and the final answer use structured output with a JSON schema; the agent turns use tools
    assert [r.get("response_format", {}).get("type") for r in llm.requests] == [
        "json_schema", None, None, "json_schema"]
    assert llm.requests[3]["response_format"]["json_schema"]["name"] == "LLMAnswer"
    assert "tools" not in llm.requests[3]


def test_llm_streams_tokens(env) -> None:
    with ScriptedLLM([PLAN, DONE, final_answer]) as llm:
        events = _ask(env, llm, stream=True)
    kinds = [e for e, _ in events]
    assert "token" in kinds and kinds[-2:] == ["answer", "done"]
    assert events[-2][1]["mode"] == "llm"


def test_llm_500s_are_retried(env) -> None:
    with ScriptedLLM([{"status": 500}, {"status": 503}, PLAN, {"status": 429}, DONE, final_answer]) as llm:
        answer = _ask(env, llm)
    assert answer.mode == "llm" and answer.grounded and not answer.degraded
    assert len(llm.requests) == 6


def test_llm_invalid_json_is_retried(env) -> None:
    with ScriptedLLM([PLAN, DONE, {"raw": "Sure! Here is the answer: validate_token"}, final_answer]) as llm:
        answer = _ask(env, llm)
    assert answer.mode == "llm" and answer.grounded and not answer.degraded
    assert len(llm.requests) == 4


def test_llm_invalid_json_everywhere_degrades_to_extractive(env) -> None:
    with ScriptedLLM([], default={"raw": "{not json"}) as llm:
        answer = _ask(env, llm)
    assert answer.degraded and answer.mode == "extractive" and answer.grounded
    assert "validate_token" in answer.text
    assert len(llm.requests) == 7  # planner and answer: 1 try + 2 retries each; one agent turn (plain text)


def test_llm_hang_past_timeout_degrades(env) -> None:
    t0 = time.perf_counter()
    with ScriptedLLM([], default={"hang": 5}) as llm:
        answer = _ask(env, llm, timeout_s=0.3)
    elapsed = time.perf_counter() - t0
    assert answer.degraded and answer.mode == "extractive" and answer.grounded
    assert elapsed < 8


def test_llm_server_without_json_schema_gets_json_mode(env) -> None:
    with ScriptedLLM([PLAN, DONE, final_answer], json_schema=False) as llm:
        answer = _ask(env, llm)
    assert answer.mode == "llm" and answer.grounded and not answer.degraded
    kinds = [r.get("response_format", {}).get("type") for r in llm.requests]
    # each structured call is refused with a JSON schema (400, not retried) and then made in JSON mode
    assert kinds == ["json_schema", "json_object", None, "json_schema", "json_object"]


def test_llm_each_tool_call_is_its_own_checkpointed_step(env) -> None:
    """The model asks for three tools over two turns; the thread's history shows one step per call, in order."""
    settings, engine, searcher = env
    turn1 = {"tool_calls": [("docql", {"query": '$.code.function("validate_token")'}),
                            ("search", {"question": "validate token", "top_k": 3})]}
    turn2 = {"tool_calls": [("list_file_content", {"file_path": "pkg/auth.py", "start_line": 1, "end_line": 21})]}
    with ScriptedLLM([PLAN, turn1, turn2, DONE, final_answer, turn2, DONE, final_answer]) as llm:
        llm_settings = settings.model_copy(update={"llm_base_url": llm.base_url, "llm_model": "stand-in",
                                                   "llm_api_key": "test", "llm_timeout_s": 5.0})

        async def go() -> tuple[Any, list[Any], Any]:
            async with open_checkpointer(settings) as saver:
                service = AskService(llm_settings, engine, searcher, saver, make_chat_model(llm_settings))
                answer = await service.ask(QUESTION, "tiny", thread_id="agent-steps")
                config = {"configurable": {"thread_id": "agent-steps"}}
                history = [s async for s in service.graph.aget_state_history(config)][::-1]  # oldest first
                # replay from the checkpoint before the second tool call: it runs again, then the loop goes on
                before_search = [s for s in history if s.next == ("tools",)][1]
                replayed = await service.graph.ainvoke(None, before_search.config, context=service.context())
                return answer, history, replayed

        answer, history, replayed = asyncio.run(go())
        assert len(llm.requests) == 8
    assert answer.mode == "llm" and answer.grounded
    # the node each step ran, from the checkpoints' "next" (what the step before scheduled)
    ran = [s.next[0] for s in history if len(s.next) == 1]
    first = ran.index("agent")
    assert ran[first:first + 7] == ["agent", "tools", "tools", "agent", "tools", "agent", "answer"]
    tool_steps = [s for s in history if s.next == ("tools",)]
    assert len(tool_steps) == 3
    # the checkpoint after each tools step holds exactly one more tool result than the one before it
    called = []
    for before in tool_steps:
        after = history[history.index(before) + 1]
        new = [m for m in after.values["messages"] if m.type == "tool"][len(
            [m for m in before.values["messages"] if m.type == "tool"]):]
        assert len(new) == 1
        called.append(new[0].name)
    assert called == ["docql", "search", "list_file_content"]
    assert replayed["answer"].grounded and replayed["answer"].mode == "llm"


def test_llm_tool_calls_past_the_round_budget_are_not_run(env) -> None:
    settings, engine, searcher = env
    calls = [("list_file_content", {"file_path": "pkg/auth.py", "start_line": i, "end_line": i + 1})
             for i in range(1, 15)]
    with ScriptedLLM([PLAN, {"tool_calls": calls}, final_answer]) as llm:
        llm_settings = settings.model_copy(update={"llm_base_url": llm.base_url, "llm_model": "stand-in",
                                                   "llm_api_key": "test", "llm_timeout_s": 5.0})

        async def go() -> tuple[Any, Any]:
            async with open_checkpointer(settings) as saver:
                service = AskService(llm_settings, engine, searcher, saver, make_chat_model(llm_settings))
                answer = await service.ask(QUESTION, "tiny", thread_id="budget")
                state = await service.graph.aget_state({"configurable": {"thread_id": "budget"}})
                return answer, state

        answer, state = asyncio.run(go())
    assert answer.mode == "llm" and answer.grounded
    assert len(llm.requests) == 3  # the budget is spent: straight to the answer, no further model turn
    results = [m.content for m in state.values["messages"] if m.type == "tool"]
    assert len(results) == 14 and sum(r.startswith("not run") for r in results) == 2
    assert "tools" not in llm.requests[2] and "Evidence:" in llm.requests[2]["messages"][1]["content"]
