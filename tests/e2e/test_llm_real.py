"""The LLM path on a real model: ``sift llm serve`` (llama.cpp, the packaged SmolLM2-135M-Instruct) started as a
user starts it, the real ``ChatOpenAI`` client, the tiny fixture repository.

One question runs every role with the settings the server prints: the planner returns a plan or is replaced by the
rules' with the reason; the agent calls at least one tool through the JSON protocol and the graph runs it as its
own checkpointed step; the writer's answer parses, and each citation it keeps is verified against the evidence,
or the answer is the extractive one, degraded with the reason. A small context and reply cap keep it to about a
minute on two busy cores.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from sift.chat import make_chat_model
from sift.graph.budget import estimate_tokens
from sift.graph.checkpointer import open_checkpointer
from sift.graph.service import AskService
from tests.conftest import TINY_FILES, ingested_repo
from tests.local_llm import served

pytestmark = pytest.mark.slow
CTX = 1024
MAX_TOKENS = 192
QUESTION = "Where is validate_token defined?"


class Calls(BaseCallbackHandler):
    """Records the structured output each model call asked for (its response_format's schema name)."""

    def __init__(self) -> None:
        self.formats: list[str] = []
        self.prompt_tokens: list[int] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        fmt = (kwargs.get("invocation_params") or {}).get("response_format") or {}
        self.formats.append((fmt.get("json_schema") or {}).get("name") or fmt.get("type") or "text")

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        usage = getattr(response.generations[0][0].message, "usage_metadata", None) or {}
        self.prompt_tokens.append(int(usage.get("input_tokens") or 0))


@pytest.fixture(scope="module")
def llm():
    with served("--ctx", str(CTX)) as printed:
        yield printed


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    with ingested_repo(tmp_path_factory.mktemp("llm-real"), TINY_FILES, "tiny", local_embedder) as ready:
        yield ready


def _tokenize(base_url: str, text: str) -> int:
    req = urllib.request.Request(base_url.removesuffix("/v1") + "/tokenize", data=json.dumps({"content": text})
                                 .encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return len(json.loads(r.read())["tokens"])


def test_serve_prints_the_settings_for_a_weak_local_model(llm) -> None:
    assert llm["llm_context_tokens"] == CTX and llm["llm_tools"] == "json"
    assert llm["llm_timeout_s"] > 30 and llm["llm_max_tokens"] > 0
    assert llm["llm_roles"] == "writer"  # it plans and searches worse than the rules (lab/NOTEBOOK.md)


def test_token_estimate_is_at_least_the_models_count(llm) -> None:
    texts = [*TINY_FILES.values(), "\n\n".join(TINY_FILES.values()),
             'def f(x):\n    return {"a": [1, 2, 3], "b": x ** 2}  # ünïcode', "    " * 40 + "x = 1\n" * 30]
    for text in texts:
        assert estimate_tokens(text) >= _tokenize(llm["llm_base_url"], text), text[:60]


def test_every_role_runs_on_the_real_model(llm, env) -> None:
    settings, engine, searcher = env
    run = settings.model_copy(update={**llm, "llm_roles": "planner,agent,writer", "llm_max_tokens": MAX_TOKENS,
                                      "branch_timeout_ms": 0})
    model = make_chat_model(run)
    calls = Calls()
    model.callbacks = [calls]

    async def go() -> tuple[Any, list[Any]]:
        async with open_checkpointer(settings) as saver:
            service = AskService(run, engine, searcher, saver, model)
            answer = await service.ask(QUESTION, "tiny", thread_id="real")
            history = [s async for s in service.graph.aget_state_history({"configurable": {"thread_id": "real"}})]
            return answer, history[::-1]

    answer, history = asyncio.run(go())
    assert calls.formats[0] == "LLMPlan"  # the planner asked first
    plan = answer.plan
    assert plan is not None and plan.standalone.strip()
    if plan.planner == "rules":  # replaced, and it says why
        assert plan.planner_note
    else:
        assert plan.planner == "llm" and plan.index_type in ("file", "function", "doc", "all")

    # the agent: at least one tool call, each run by a tools step that added exactly one result to the checkpoint
    assert "ToolStep" in calls.formats
    tool_steps = [s for s in history if s.next == ("tools",)]
    assert tool_steps, "the model called no tool"
    before = tool_steps[0]
    after = history[history.index(before) + 1]
    old = [m for m in before.values["messages"] if m.type == "tool"]
    new = [m for m in after.values["messages"] if m.type == "tool"][len(old):]
    assert len(new) == 1 and new[0].name in ("search", "list_file_content", "docql")
    asked = next(c for m in before.values["messages"] if m.type == "ai" for c in m.tool_calls
                 if c["id"] == new[0].tool_call_id)
    assert asked["name"] == new[0].name

    # the writer's answer parsed and passed the evidence check, or the run says why it did not
    assert "LLMAnswer" in calls.formats
    if answer.mode == "llm":
        assert not any(r.startswith("llm:") for r in answer.degraded_reasons)
    else:
        assert answer.degraded and any(r.startswith("llm: ") for r in answer.degraded_reasons)
    evidence = {e.id: e for e in answer.evidence}
    for c in answer.citations:  # every citation verified: real evidence, lines inside it, text from the file
        e = evidence[c.evidence_id]
        assert c.valid and c.path == e.path and e.start_line <= c.start_line <= c.end_line <= e.end_line
        assert c.snippet and c.snippet.splitlines()[0].strip() in TINY_FILES[c.path]
    # each prompt, as the model's tokenizer counted it, left the reply its max_tokens
    assert calls.prompt_tokens and max(calls.prompt_tokens) <= CTX - MAX_TOKENS
