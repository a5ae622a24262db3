"""Pure parts of the LLM path: what an upstream failure means, the token estimate, evidence cut to a context, and
the JSON tool protocol's steps."""

from __future__ import annotations

import pytest

from sift.chat import CutOff, InvalidOutput, cap_fields, classify, describe, rejects_json_schema
from sift.config import Settings
from sift.graph.budget import estimate_tokens, evidence_block, prompt_room, shown_ids
from sift.graph.models import Evidence
from sift.graph.tool_protocol import STEP_SCHEMA, parse_step, rejects_tools


class HTTPError(Exception):
    """An upstream error as the openai client raises it: a status code and the server's message."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(f"Error code: {status_code} - {message}")
        self.status_code = status_code


class APITimeoutError(Exception):
    pass


@pytest.mark.parametrize(("exc", "kind"), [
    (HTTPError(429, "slow down"), "transient"),
    (HTTPError(500, "internal error"), "transient"),
    (HTTPError(503, "overloaded"), "transient"),
    (HTTPError(500, "response_format of type 'json_schema' is not supported"), "schema"),
    (HTTPError(400, "Unsupported response_format type"), "schema"),
    (HTTPError(400, "the request exceeds the available context size"), "fatal"),
    (HTTPError(401, "invalid api key"), "fatal"),
    (HTTPError(403, "forbidden"), "fatal"),
    (HTTPError(404, "model not found"), "fatal"),
    (HTTPError(429, "json_schema rate"), "transient"),  # a 429 is never a refusal of the format
    (APITimeoutError(), "transient"),
    (TimeoutError(), "transient"),
    (InvalidOutput("not JSON"), "output"),
    (CutOff("cut"), "output"),
    (KeyError("bug"), "fatal"),
])
def test_classify_failures_by_meaning(exc: BaseException, kind: str) -> None:
    assert classify(exc) == kind


def test_rejects_json_schema_needs_the_status_and_the_complaint() -> None:
    assert rejects_json_schema(HTTPError(500, "'json_schema' is not a valid response format"))
    assert not rejects_json_schema(HTTPError(500, "out of memory"))
    assert not rejects_json_schema(HTTPError(502, "json_schema"))


@pytest.mark.parametrize(("exc", "says"), [
    (HTTPError(401, "bad key"), "SIFT_LLM_API_KEY"),
    (HTTPError(404, "no model"), "SIFT_LLM_MODEL"),
    (APITimeoutError(), "SIFT_LLM_TIMEOUT_S"),
    (CutOff("the reply was cut off at max_tokens (64; SIFT_LLM_MAX_TOKENS)"), "SIFT_LLM_MAX_TOKENS"),
])
def test_describe_says_what_to_change(exc: BaseException, says: str) -> None:
    assert says in describe(exc, Settings(llm_timeout_s=90))


@pytest.mark.parametrize(("text", "at_least"), [
    ("", 0), ("hello", 1), ("def validate_token(self, token):", 9), ("ünïcödé", 11), ("    \n    x = 1", 6),
])
def test_estimate_tokens_counts_pieces(text: str, at_least: int) -> None:
    assert estimate_tokens(text) >= at_least


def test_estimate_is_monotone_in_text() -> None:
    text = "class AuthService:\n    def validate_token(self, token: str) -> bool:\n        return True\n"
    assert estimate_tokens(text * 2) >= 2 * estimate_tokens(text) - 2


def _ev(n: int, lines: int) -> Evidence:
    text = "\n".join(f"    value_{n}_{i} = compute(value_{n}_{i - 1}, {i})" for i in range(lines))
    return Evidence(id=n, path=f"pkg/m{n}.py", start_line=1, end_line=lines, kind="function", name=f"f{n}", score=1.0,
                    text=text)


def test_evidence_block_keeps_whole_items_by_rank() -> None:
    evidence = [_ev(3, 10), _ev(1, 10), _ev(2, 10), _ev(4, 10)]
    whole = evidence_block(evidence)
    assert shown_ids(whole) == [1, 2, 3, 4]
    one = estimate_tokens(evidence_block([evidence[1]]))
    assert shown_ids(evidence_block(evidence, room=4 * one + 8)) == [1, 2, 3, 4]
    for room in (one // 4, one, 2 * one, 3 * one):
        cut = evidence_block(evidence, room=room)
        ids = shown_ids(cut)
        assert ids == list(range(1, len(ids) + 1)) and estimate_tokens(cut) <= room
        for n in ids:  # the label line and the first line of text, never a part of a line
            assert f"[{n}] pkg/m{n}.py:1-10 function f{n}\n    value_{n}_0 = compute(value_{n}_-1, 0)" in cut
    assert evidence_block(evidence, room=0) == ""


def test_evidence_block_shortens_long_items_at_a_line_end_to_share_the_room() -> None:
    evidence = [_ev(1, 200), _ev(2, 5)]
    block = evidence_block(evidence, room=400)
    assert shown_ids(block) == [1, 2]  # the long first item does not crowd out the second
    first = block.split("\n\n")[0].splitlines()
    assert all(line.startswith("    value_1_") for line in first[1:])  # cut between lines, never inside one


def test_prompt_room_leaves_the_reply_its_max_tokens() -> None:
    assert prompt_room(Settings()) is None
    assert prompt_room(Settings(llm_context_tokens=2048, llm_max_tokens=512)) == 2048 - 512 - 64


@pytest.mark.parametrize(("value", "calls"), [
    ({"tool": "search", "arguments": {"question": "retry config"}}, [("search", {"question": "retry config"})]),
    ({"tool": "list_file_content", "arguments": {"file_path": "a.py"}}, [("list_file_content", {"file_path": "a.py"})]),
    ({"tool": "done"}, []),
])
def test_parse_step_gives_the_tool_call(value: dict, calls: list) -> None:
    got = parse_step(value, "call_0_1")
    assert [(c["name"], c["args"]) for c in got] == calls
    assert all(c["id"] == "call_0_1" for c in got)


@pytest.mark.parametrize("value", [[], "search", {"tool": "rm"}, {"tool": "search"}, {"tool": "search",
                                                                                       "arguments": "x"}])
def test_parse_step_rejects_what_is_no_step(value: object) -> None:
    with pytest.raises(InvalidOutput):
        parse_step(value, "call_0_0")


def test_step_schema_bounds_strings_and_offers_every_tool_and_done() -> None:
    names = [o["properties"]["tool"]["const"] for o in STEP_SCHEMA["anyOf"]]
    assert names == ["search", "list_file_content", "docql", "done"]
    search = STEP_SCHEMA["anyOf"][0]["properties"]["arguments"]
    assert search["properties"]["question"]["maxLength"] > 0 and search["additionalProperties"] is False


def test_rejects_tools_reads_the_complaint() -> None:
    assert rejects_tools(HTTPError(400, "this server does not support tools"))
    assert rejects_tools(HTTPError(500, "tool_choice is not supported"))
    assert not rejects_tools(HTTPError(500, "internal error"))
    assert not rejects_tools(HTTPError(429, "too many tool calls"))


def test_serve_prints_settings_that_parse_and_fit_the_model() -> None:
    from sift.local_llm import MODELS, ServerConfig, environment, timeout_for

    config = ServerConfig(ctx=2048)
    lines = environment("http://127.0.0.1:8090/v1", "smollm2-135m", config)
    values = dict(line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export "))
    assert lines[-1].startswith("# ") and "SIFT_LLM_ROLES= " in lines[-1]  # how to leave the writing to sift
    env = {k.lower().removeprefix("sift_"): v for k, v in values.items()}
    settings = Settings(**env)  # every printed line is a setting sift reads
    assert settings.llm_tools == MODELS["smollm2-135m"].tools == "json"
    assert settings.llm_roles == MODELS["smollm2-135m"].roles
    assert settings.llm_context_tokens == 2048 and settings.llm_max_tokens == config.max_tokens
    assert settings.llm_timeout_s == timeout_for(2048, config.max_tokens) > timeout_for(1024, config.max_tokens)
    other = dict(line.removeprefix("export ").split("=", 1) for line in environment("u", "my-model", config))
    assert other["SIFT_LLM_TOOLS"] == "auto" and "SIFT_LLM_ROLES" not in other


def test_answer_schema_names_the_shown_evidence_and_fits_the_reply() -> None:
    from sift.graph.llm import LLMAnswer, answer_schema

    schema = answer_schema([1, 2, 5], max_tokens=256)
    assert schema["$defs"]["LLMCitation"]["properties"]["evidence_id"]["enum"] == [1, 2, 5]
    assert schema["properties"]["answer"]["maxLength"] == 3 * (256 - 140) // 2
    assert schema["properties"]["citations"]["maxItems"] == 4
    assert answer_schema([], 10_000)["properties"]["answer"]["maxLength"] == 3000  # the model's own bound
    assert LLMAnswer.model_json_schema()["properties"]["answer"]["maxLength"] == 3000  # not changed in place


@pytest.mark.parametrize(("base_url", "fields"), [
    ("http://127.0.0.1:11434/v1", {"max_tokens": 64}),  # Ollama reads only the legacy field
    ("http://localhost:1234/v1", {"max_tokens": 64}),  # LM Studio
    ("https://example.test/openai/v1", {"max_tokens": 64}),
    ("https://api.openai.com/v1", None),  # reasoning models there reject max_tokens
    ("https://eu.api.openai.com/v1", None),
])
def test_the_legacy_cap_goes_to_every_server_but_openais(base_url: str, fields: dict[str, int] | None) -> None:
    assert cap_fields(base_url, 64) == fields
