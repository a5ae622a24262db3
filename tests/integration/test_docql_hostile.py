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


# -- grep over a file with very many headings -------------------------------------------------------------------

HEADINGS = 40_000


def _many_headings() -> str:
    """Markdown with ``HEADINGS`` headings: ``# tN`` (even N) and ``## tN`` with a body line (odd N)."""
    return "".join(f"## t{i}\n\nx\n\n" if i % 2 else f"# t{i}\n" for i in range(HEADINGS))


@pytest.fixture(scope="module")
def headings_url(tmp_path_factory, local_embedder):
    """A served app (auth off) whose kb ``big`` is one Markdown file of 40,000 headings, plus a line that makes
    a backtracking pattern slow: ``aaa…a!`` at the very end."""
    base = tmp_path_factory.mktemp("headings")
    (base / "repo").mkdir()
    (base / "repo" / "big.md").write_text(_many_headings() + "a" * 64 + "!\n")
    cfg = ApiSettings(data_dir=base / "data", auth=False)
    ingest(cfg, base / "repo", "big", build_index=False)
    with serve_in_thread(create_app(cfg, embedder=local_embedder)) as url:
        yield url


def _expected_grep(needle: str) -> list[tuple[int, str, str]]:
    """(line, text, section) of every line of the generated file that contains ``needle``, worked out directly."""
    found, section = [], None
    for n, line in enumerate(_many_headings().split("\n")[:-1], start=1):
        if line.startswith("#"):
            section = line.lstrip("# ")
        if needle in line:
            found.append((n, line, section))
    return found


def test_docql_grep_over_many_headings_streams_its_first_results(headings_url) -> None:
    r = httpx.post(f"{headings_url}/v1/docql", json={"kb": "big", "query": '$.content.grep("t1")', "limit": 5},
                   timeout=60)
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    items = body["files"]["big.md"]
    expected = _expected_grep("t1")
    assert [(i["line"], i["text"], i["section"]) for i in items] == expected[:5]
    assert (body["total"], body["truncated"], body["deadline_exceeded"]) == (len(expected), True, False)
    window = httpx.post(f"{headings_url}/v1/docql", json={"kb": "big", "query": '$.content.grep("t1")[-1]'},
                        timeout=60).json()
    assert [(i["line"], i["section"]) for i in window["files"]["big.md"]] == [expected[-1][::2]]


def test_docql_grep_is_cut_at_its_deadline_with_what_it_found(headings_url) -> None:
    # ``(a|aa)+$`` backtracks exponentially on the last line; the ``t3999x`` lines before it match at once.
    query = '$.content.grep("^#+ t3999\\\\d$|^(a|aa)+$")'
    r = httpx.post(f"{headings_url}/v1/docql", json={"kb": "big", "query": query}, timeout=60)
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert body["deadline_exceeded"] is True and body["truncated"] is True
    lines = [(i["line"], i["text"]) for i in body["files"]["big.md"]]
    assert lines == [(n, text) for n, text, _ in _expected_grep("t3999") if text.startswith("#")][-10:]
    assert body["total"] == 10
