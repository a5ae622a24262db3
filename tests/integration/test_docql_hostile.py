"""DocQL over HTTP on hostile queries: deep nesting, long negation chains and huge numbers are 400s, never 500s."""

from __future__ import annotations

import logging

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


@pytest.fixture(scope="module")
def docql_url(tmp_path_factory, local_embedder):
    """A served app (auth off) with the tiny repository as ``tiny``."""
    base = tmp_path_factory.mktemp("docql")
    repo = base / "repo"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    cfg = ApiSettings(data_dir=base / "data", auth=False)
    ingest(cfg, repo, "tiny", embedder=local_embedder)
    with serve_in_thread(create_app(cfg, embedder=local_embedder)) as url:
        yield url


def _docql(url: str, query: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/docql", json={"kb": "tiny", "query": query}, timeout=60)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("$.code[?(" + "(" * 600 + "@.name" + ")" * 600 + ")]", id="600-parens"),
        pytest.param("$.code[?(" + "!" * 1900 + "@.name)]", id="1900-negations"),
        pytest.param("$.code[?(@.start_line == 12345678901234567890123)]", id="23-digit-int"),
        pytest.param("$.code[12345678901234567890123]", id="23-digit-index"),
        pytest.param("$.code[?(@.start_line > -12345678901234567890123)]", id="23-digit-negative"),
    ],
)
def test_docql_hostile_query_is_400_with_position_and_no_log_flood(docql_url, query, caplog) -> None:
    with caplog.at_level(logging.WARNING):
        r = _docql(docql_url, query)
    assert r.status_code == 400, r.text[:300]
    body = r.json()
    assert body["error"] == "invalid_query" and body["position"] >= 1
    assert [rec for rec in caplog.records if rec.levelno >= logging.WARNING] == []


# -- fuzzing the grammar's edge cases ---------------------------------------------------------------------------

_ROOTS = ["$.toc", "$.content", "$.code", "$.files", "$.entities", "$.structure", "$", "$.", "$.nope", ""]
_SELECTORS = ["", ".classes", ".functions", '.class("AuthService")', '.function("login")', ".tree()",
              '.grep("to+ken", "i")', '.grep(/[a-/)', '.heading("x', ".h1()", ".query('\\u12')", '.callers("")']
_FIELDS = ["name", "path", "level", "start_line", "title", "kind", "nope", "signature", ""]
_OPS = ["==", "!=", "~=", "=~", ">=", ">", "<=", "<", "startsWith", "endsWith", "=", ""]
_NUMBERS = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda f: f"{f:f}"),
    st.sampled_from(["9223372036854775807", "9223372036854775808", "-9223372036854775808", "0" * 50 + "1",
                     "1" + "0" * 400 + ".5", "1.", ".5", "--1", "1e5"]),
)
_VALUES = st.one_of(
    _NUMBERS,
    st.sampled_from(["true", "false", "null", "'a\\'b'", '"\\u00e9"', "'\\x'", "/a+/i", "/(/", "/x/q", "'open"]),
    st.text(max_size=8).map(repr),
)


@st.composite
def _condition(draw: st.DrawFn, depth: int = 0) -> str:
    if depth < 4 and draw(st.booleans()):
        inner = draw(_condition(depth + 1))
        wrap = draw(st.sampled_from(["({})", "!{}", "!({})", "(({}))", "{} && {}", "{} || {}", "({}"]))
        return wrap.format(inner, inner)
    field = draw(st.sampled_from(_FIELDS))
    if draw(st.booleans()):
        return f"@.{field}"
    return f"@.{field} {draw(st.sampled_from(_OPS))} {draw(_VALUES)}"


@st.composite
def _deep(draw: st.DrawFn) -> str:
    """A well-formed filter nested (by '(' or '!') anywhere from harmless to past every limit."""
    n = draw(st.integers(0, 990))
    inner = f"@.start_line {draw(st.sampled_from(['==', '>', '<']))} {draw(_NUMBERS)}"
    shape = draw(st.sampled_from(["parens", "bangs", "mixed"]))
    if shape == "parens":
        cond = "(" * n + inner + ")" * n
    elif shape == "bangs":
        cond = "!" * n + "(" + inner + ")"
    else:
        cond = "!(" * (n // 2) + inner + ")" * (n // 2)
    return f"$.code[?({cond})]"


@st.composite
def _query(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 2)) == 0:
        return draw(_deep())
    parts = [draw(st.sampled_from(_ROOTS)), draw(st.sampled_from(_SELECTORS))]
    for _ in range(draw(st.integers(0, 2))):
        step = draw(st.sampled_from(["[*]", "[?({})]", "[{}]", "[{}:{}]", "[:{}]", "[?{}]"]))
        parts.append(step.format(*(draw(_condition()) if "?" in step else draw(_NUMBERS) for _ in range(2))))
    parts.append(draw(st.sampled_from(["", ".source", ".content", ".text", ".nope", "[0].source"])))
    query = "".join(parts)
    # A nesting run that goes past every limit, or a random edit, now and then.
    if draw(st.integers(0, 9)) == 0:
        n = draw(st.integers(60, 900))
        query = query.replace("@.", "(" * n + "@.", 1) + ")" * n
    if draw(st.booleans()):
        at = draw(st.integers(0, len(query)))
        query = query[:at] + draw(st.text(alphabet="()[]!&|@.$'\"/\\ 0-9", max_size=3)) + query[at:]
    return query[:2000] or "$"


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=_query())
def test_docql_fuzz_answers_200_or_400_never_500(docql_url, query) -> None:
    r = _docql(docql_url, query)
    assert r.status_code in (200, 400), (query, r.status_code, r.text[:300])
    if r.status_code == 400:
        assert r.json()["error"] in ("invalid_query", "invalid_request"), r.text[:300]
