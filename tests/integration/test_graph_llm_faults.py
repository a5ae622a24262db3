"""The LLM path's failure handling over real HTTP (the real ChatOpenAI client, a scripted stand-in server): length
stops, refused response formats and tools, wrong credentials, answers that fail the evidence check, the roles the
model plays and prompts sized to its context."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from sift.chat import make_chat_model
from sift.graph.budget import messages_tokens, shown_ids
from sift.graph.checkpointer import open_checkpointer
from sift.graph.service import AskService
from tests.conftest import TINY_FILES, ingested_repo
from tests.integration.test_graph_llm import DONE, PLAN, QUESTION, final_answer
from tests.llm_server import ScriptedLLM


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    with ingested_repo(tmp_path_factory.mktemp("graph-llm-faults"), TINY_FILES, "tiny", local_embedder) as ready:
        yield ready


def _ask(env, llm: ScriptedLLM, thread: str | None = None, question: str = QUESTION,
         **overrides: Any) -> tuple[Any, Any]:
    """The answer, and the run's final state when ``thread`` names one."""
    settings, engine, searcher = env
    llm_settings = settings.model_copy(update={"llm_base_url": llm.base_url, "llm_model": "stand-in",
                                               "llm_api_key": "test", "llm_timeout_s": 5.0,
                                               "branch_timeout_ms": 0, **overrides})

    async def go() -> tuple[Any, Any]:
        async with open_checkpointer(settings) as saver:
            service = AskService(llm_settings, engine, searcher, saver, make_chat_model(llm_settings))
            answer = await service.ask(question, "tiny", thread_id=thread)
            state = await service.graph.aget_state({"configurable": {"thread_id": thread}}) if thread else None
            return answer, state

    return asyncio.run(go())


def _kinds(llm: ScriptedLLM) -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in llm.requests]


def test_every_call_is_capped_and_a_length_stop_is_retried_then_degraded(env) -> None:
    cut = {"content": '{"answer": "`validate_token` compares the token with', "finish": "length"}
    with ScriptedLLM([PLAN, DONE], default=cut) as llm:
        answer, _ = _ask(env, llm, llm_max_tokens=96)
    # both fields: Ollama and LM Studio read only the legacy max_tokens
    assert all(r["max_completion_tokens"] == 96 and r["max_tokens"] == 96 for r in llm.requests)
    assert len(llm.requests) == 5  # planner, one agent turn, the answer and its two retries
    assert answer.mode == "extractive" and answer.degraded and answer.grounded
    assert any("cut off at max_tokens (96" in r for r in answer.degraded_reasons), answer.degraded_reasons
    # a retry after invalid output says what was wrong (the same prompt at temperature 0 gets the same reply)
    assert "cut off" in llm.requests[3]["messages"][-1]["content"]
    assert "cut off" not in llm.requests[2]["messages"][-1]["content"]


def test_a_500_refusing_json_schema_gets_json_mode_with_the_schema(env) -> None:
    with ScriptedLLM([PLAN, DONE, final_answer], json_schema=False, schema_status=500) as llm:
        answer, _ = _ask(env, llm)
    assert answer.mode == "llm" and answer.grounded and not answer.degraded
    assert _kinds(llm) == ["json_schema", "json_object", None, "json_schema", "json_object"]
    assert llm.requests[4]["response_format"]["schema"]["title"] == "LLMAnswer"


@pytest.mark.parametrize(("status", "names"), [(401, "SIFT_LLM_API_KEY"), (403, "SIFT_LLM_API_KEY"),
                                               (404, "SIFT_LLM_MODEL")])
def test_wrong_credentials_or_model_degrade_at_once_with_the_reason(env, status: int, names: str) -> None:
    with ScriptedLLM([], default={"status": status, "error": "nope"}) as llm:
        answer, _ = _ask(env, llm)
    assert len(llm.requests) == 1  # the planner's call: no retry, and no agent or answer call after it
    assert answer.mode == "extractive" and answer.degraded and answer.grounded
    assert answer.plan is not None and answer.plan.planner == "rules" and names in (answer.plan.planner_note or "")
    assert any(names in r and f"HTTP {status}" in r for r in answer.degraded_reasons), answer.degraded_reasons


def test_a_server_without_tools_gets_the_json_protocol(env) -> None:
    step = {"content": {"tool": "docql", "arguments": {"query": '$.code.function("validate_token")'}}}
    with ScriptedLLM([PLAN, step, {"content": {"tool": "done"}}, final_answer], tools=False) as llm:
        answer, state = _ask(env, llm, thread="no-tools")
    assert answer.mode == "llm" and answer.grounded and not answer.degraded
    assert [bool(r.get("tools")) for r in llm.requests] == [False, True, False, False, False]
    steps = [r["response_format"]["json_schema"]["name"] for r in llm.requests[2:4]]
    assert steps == ["ToolStep", "ToolStep"]
    tool_results = [m for m in state.values["messages"] if m.type == "tool"]
    assert [m.name for m in tool_results] == ["docql"] and "validate_token" in tool_results[0].content
    # the second turn shows the model its own step and the result as the next user turn
    shown = llm.requests[3]["messages"]
    assert shown[-2]["role"] == "assistant" and '"docql"' in shown[-2]["content"]
    assert shown[-1]["role"] == "user" and shown[-1]["content"].startswith("Result of docql:")


def test_the_json_protocol_setting_never_sends_tools_and_rejects_unknown_tools(env) -> None:
    bad = {"content": {"tool": "delete_everything", "arguments": {}}}
    with ScriptedLLM([PLAN, bad, {"content": {"tool": "done"}}, final_answer]) as llm:
        answer, _ = _ask(env, llm, llm_tools="json")
    assert not any(r.get("tools") for r in llm.requests)
    assert answer.mode == "llm" and answer.grounded
    assert "unknown tool 'delete_everything'" in llm.requests[2]["messages"][-1]["content"]


def test_an_answer_failing_the_evidence_check_falls_back_to_the_extractive_one(env) -> None:
    def invented(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": {"answer": "Tokens are checked by `verify_jwt_signature` [1].",
                            "citations": [{"evidence_id": 1}], "not_found": False}}

    with ScriptedLLM([PLAN, DONE, invented]) as llm:
        answer, _ = _ask(env, llm)
    assert len(llm.requests) == 3  # no fallback round or summary asks the model again
    assert answer.mode == "extractive" and answer.grounded and answer.degraded
    assert "verify_jwt_signature" not in answer.text and "validate_token" in answer.text
    reason = next(r for r in answer.degraded_reasons if "evidence check" in r)
    assert "`verify_jwt_signature` does not appear" in reason


def _extractive(env, question: str = QUESTION) -> Any:
    """The same question's answer with no model configured (and, as ``_ask``, no branch timeout)."""
    settings, engine, searcher = env
    plain = settings.model_copy(update={"branch_timeout_ms": 0})

    async def go() -> Any:
        async with open_checkpointer(settings) as saver:
            return await AskService(plain, engine, searcher, saver, None).ask(question, "tiny")

    return asyncio.run(go())


def test_a_failed_model_answer_is_replaced_by_exactly_the_extractive_answer(env) -> None:
    """A model's failure costs no evidence, so its stand-in is the extractive mode's answer, confidence included
    (a capped confidence would rewrite it as uncertain); only ``degraded`` and its reason say the model failed."""
    def invented(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": {"answer": "Tokens are checked by `verify_jwt_signature` [1].",
                            "citations": [{"evidence_id": 1}], "not_found": False}}

    with ScriptedLLM([invented]) as llm:
        answer, _ = _ask(env, llm, llm_roles="writer")
    plain = _extractive(env)
    assert answer.degraded and any(r.startswith("llm: ") for r in answer.degraded_reasons)
    assert not plain.degraded
    assert (answer.text, answer.confidence, answer.citations) == (plain.text, plain.confidence, plain.citations)


def test_a_failed_model_answer_keeps_the_extractive_runs_course(env) -> None:
    """On a question the extractive writer cannot answer, a failed model answer leaves the run on the extractive
    mode's course: the same rounds, fallbacks and not-found (``tests/unit/test_llm_degraded.py`` checks the note
    that keeps it there)."""
    question = "How does the guide configure the zeppelin quaternion cache?"

    def invented(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": {"answer": "It uses `zeppelin_cache` [1].", "citations": [{"evidence_id": 1}],
                            "not_found": False}}

    with ScriptedLLM([invented], default=invented) as llm:
        answer, _ = _ask(env, llm, question=question, llm_roles="writer")
    plain = _extractive(env, question)
    assert plain.citations == [] and plain.text.startswith("Not found"), plain.text
    assert answer.degraded and any(r.startswith("llm: the model's answer failed") for r in answer.degraded_reasons)
    assert (answer.text, answer.rounds, answer.fallbacks, answer.confidence) == \
        (plain.text, plain.rounds, plain.fallbacks, plain.confidence)
    assert len(llm.requests) == 1  # the model, set aside after its failure, writes nothing more


def test_a_checked_model_answer_does_not_overrule_the_abstention(env) -> None:
    """A model answer whose citations hold is still set aside where the extractive writer finds no answer in the
    same evidence: the run ends with the extractive mode's not-found, degraded with the reason."""
    question = "How does the guide configure the zeppelin quaternion cache?"

    def plausible(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": {"answer": "The guide describes this [1].", "citations": [{"evidence_id": 1}],
                            "not_found": False}}

    with ScriptedLLM([plausible], default=plausible) as llm:
        answer, _ = _ask(env, llm, question=question, llm_roles="writer")
    plain = _extractive(env, question)
    assert plain.text.startswith("Not found") and answer.text == plain.text and answer.citations == []
    assert any("supports no answer" in r for r in answer.degraded_reasons), answer.degraded_reasons


def test_a_model_answer_must_mark_what_it_cites(env) -> None:
    """Citations a model lists but its text never marks support nothing: the answer fails the check."""
    def unmarked(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": {"answer": "The answer is: [n]", "citations": [{"evidence_id": 1}], "not_found": False}}

    with ScriptedLLM([unmarked]) as llm:
        answer, _ = _ask(env, llm, llm_roles="writer")
    assert answer.mode == "extractive" and answer.degraded
    assert "[n]" not in answer.text
    assert any("marked in the text" in r for r in answer.degraded_reasons), answer.degraded_reasons


@pytest.mark.parametrize("roles", ["writer", "planner,agent", ""])
def test_roles_choose_which_calls_the_model_makes(env, roles: str) -> None:
    script = {"writer": [final_answer], "planner,agent": [PLAN, DONE], "": []}[roles]
    with ScriptedLLM(script) as llm:
        answer, _ = _ask(env, llm, llm_roles=roles)
    assert len(llm.requests) == len(script)
    assert not answer.degraded and answer.grounded
    assert answer.plan is not None and answer.plan.planner == ("llm" if "planner" in roles else "rules")
    assert answer.mode == ("llm" if "writer" in roles else "extractive")
    assert not any(r.get("tools") for r in llm.requests) or "agent" in roles


def test_prompts_fit_the_context_by_rank_whole_items_only(env) -> None:
    captured: list[dict[str, Any]] = []

    def answer_and_keep(body: dict[str, Any]) -> dict[str, Any]:
        captured.append(body)
        return final_answer(body)

    with ScriptedLLM([answer_and_keep]) as llm:
        answer, state = _ask(env, llm, thread="small-context", llm_roles="writer", llm_context_tokens=900,
                             llm_max_tokens=256)
    assert answer.mode == "llm" and answer.grounded
    texts = [m["content"] for m in captured[0]["messages"]]
    assert messages_tokens(texts) <= 900 - 256
    shown = shown_ids(texts[1])
    total = len(state.values["evidence"])
    assert shown == list(range(1, len(shown) + 1)) and 0 < len(shown) < total  # the best-ranked, in order
    for n in shown:  # each shown item whole: its label and its first line
        item = next(e for e in state.values["evidence"] if e.id == n)
        assert f"{item.label()} {item.kind} {item.name}\n{item.text.splitlines()[0]}" in texts[1]
    assert not re.search(rf"^\[{len(shown) + 1}\] ", texts[1], flags=re.MULTILINE)
