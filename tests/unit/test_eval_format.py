"""Tests for the evaluation question-set format and its line-by-line loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.errors import InvalidQuery, NotFound
from sift.eval.format import EvalQuestion, GoldSpan, LineError, load_judgments, load_questions, parse_line

GOOD = json.dumps(
    {
        "id": "q1",
        "query": "where is login?",
        "gold_files": ["pkg/auth.py"],
        "gold_spans": [{"path": "pkg/auth.py", "start_line": 17, "end_line": 21}],
        "answer_contains": ["login"],
        "kind": "locate",
        "kb": "tiny",
    }
)
MINIMAL = '{"id": "q2", "query": "what is sift?"}'


def _with_span(path: object = "a.py", start: object = 1, end: object = 4) -> str:
    span = {"path": path, "start_line": start, "end_line": end}
    return json.dumps({"id": "a", "query": "q", "gold_spans": [span]})


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("lines", "ids", "bad_lines"),
    [
        ([GOOD, MINIMAL], ["q1", "q2"], []),
        ([], [], []),
        (["", GOOD, "   ", "", MINIMAL, ""], ["q1", "q2"], []),
        ([GOOD, "{not json", MINIMAL], ["q1", "q2"], [2]),
        ([GOOD, "[1, 2]", '"just a string"'], ["q1"], [2, 3]),
        ([GOOD, GOOD, MINIMAL], ["q1", "q2"], [2]),
        (['{"query": "no id"}', '{"id": "x"}', MINIMAL], ["q2"], [1, 2]),
        (
            ['{"id": 7, "query": "numeric id"}', '{"id": "a", "query": ""}', '{"id": "b", "query": "  "}'],
            [],
            [1, 2, 3],
        ),
        ([_with_span(start="3")], [], [1]),
        ([_with_span(start=5)], [], [1]),
        ([_with_span(start=0)], [], [1]),
        ([_with_span(path="../a.py"), _with_span(path="/etc/a.py")], [], [1, 2]),
        (['{"id": "a", "query": "q", "gold_files": "a.py"}'], [], [1]),
        (['{"id": "a", "query": "q", "answer_contains": [""]}'], [], [1]),
        (['{"id": "a", "query": "q", "gold_span": []}'], [], [1]),
        (['{"id": "a", "query": "q", "kind": 3}'], [], [1]),
        ([_with_span(start=2, end=2)], ["a"], []),
    ],
    ids=[
        "valid",
        "empty-file",
        "blank-lines-skipped-but-counted",
        "malformed-json",
        "not-an-object",
        "duplicate-id",
        "missing-id-or-query",
        "wrong-id-type-and-blank-query",
        "string-line-number",
        "end-before-start",
        "zero-line",
        "path-escapes-root",
        "gold-files-not-a-list",
        "blank-answer-phrase",
        "unknown-key",
        "kind-not-a-string",
        "one-line-span",
    ],
)
def test_load_questions_reports_bad_lines(
    tmp_path: Path, lines: list[str], ids: list[str], bad_lines: list[int]
) -> None:
    questions, errors = load_questions(_write(tmp_path, lines))
    assert [q.id for q in questions] == ids
    assert [e.line for e in errors] == bad_lines
    assert all(e.message for e in errors)


@pytest.mark.parametrize(
    ("lines", "line", "phrase"),
    [
        ([GOOD, "", "{oops"], 3, "invalid JSON"),
        ([GOOD, GOOD], 2, "duplicate id 'q1' (first used on line 1)"),
        (['{"id": "a"}'], 1, "query"),
        (["[]"], 1, "expected a JSON object"),
    ],
    ids=["malformed-json", "duplicate-id", "missing-query", "not-an-object"],
)
def test_load_questions_strict_raises_naming_line(
    tmp_path: Path, lines: list[str], line: int, phrase: str
) -> None:
    path = _write(tmp_path, lines)
    with pytest.raises(InvalidQuery) as info:
        load_questions(path, strict=True)
    assert f"line {line}" in info.value.message
    assert phrase in info.value.message
    assert info.value.field == f"line {line}"


def test_load_questions_strict_returns_no_errors_for_valid_file(tmp_path: Path) -> None:
    questions, errors = load_questions(_write(tmp_path, [GOOD, "", MINIMAL]), strict=True)
    assert [q.id for q in questions] == ["q1", "q2"]
    assert errors == []


def test_load_questions_defaults_optional_fields(tmp_path: Path) -> None:
    (question,), _ = load_questions(_write(tmp_path, [MINIMAL]))
    assert question == EvalQuestion(id="q2", query="what is sift?")
    assert (question.gold_files, question.gold_spans, question.answer_contains) == ([], [], [])
    assert (question.kind, question.kb) == (None, None)


def test_load_questions_parses_spans(tmp_path: Path) -> None:
    (question,), _ = load_questions(_write(tmp_path, [GOOD]))
    assert question.gold_spans == [GoldSpan(path="pkg/auth.py", start_line=17, end_line=21)]
    assert question.kind == "locate" and question.kb == "tiny"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\ufeff" + MINIMAL + "\r\n" + GOOD + "\r\n", ["q2", "q1"]),
        (MINIMAL, ["q2"]),
        ('{"id": "u", "query": "a\u2028b"}\n', ["u"]),
    ],
    ids=["bom-and-crlf", "no-trailing-newline", "line-separator-inside-string"],
)
def test_load_questions_tolerates_encodings_and_line_endings(
    tmp_path: Path, raw: str, expected: list[str]
) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(raw, encoding="utf-8", newline="")
    questions, errors = load_questions(path)
    assert errors == []
    assert [q.id for q in questions] == expected


def test_load_questions_missing_file_raises_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load_questions(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(
    ("text", "column"),
    [('{"id": "a",, }', 12), ("{", 2)],
    ids=["stray-comma", "truncated"],
)
def test_parse_line_reports_json_column(text: str, column: int) -> None:
    result = parse_line(text, 4)
    assert isinstance(result, LineError)
    assert (result.line, result.column) == (4, column)


def test_load_judgments_groups_by_question_and_names_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [
        {"id": "q1", "path": "docs/a.md", "start_line": 3, "end_line": 9, "relevant": True, "reason": "says how"},
        {"id": "q1", "path": "src/a.py", "start_line": 1, "end_line": 4, "relevant": False},
        {"id": "q2", "path": "src/b.py", "start_line": 7, "end_line": 7, "relevant": False, "reason": "a test"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    judged = load_judgments(path)
    assert sorted(judged) == ["q1", "q2"]
    assert [(j.path, j.relevant) for j in judged["q1"]] == [("docs/a.md", True), ("src/a.py", False)]
    assert load_judgments(tmp_path / "absent.jsonl") == {}
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps({**rows[1], "relevant": "yes"}) + "\n")
    with pytest.raises(InvalidQuery, match="line 2: relevant"):
        load_judgments(path)
    path.write_text(json.dumps({**rows[0], "start_line": 9, "end_line": 3}) + "\n")
    with pytest.raises(InvalidQuery, match="line 1"):
        load_judgments(path)


@pytest.mark.parametrize(
    ("extra", "meta"),
    [
        ({"notes": "from a user report"}, {"notes": "from a user report"}),
        ({"corpus": "attrs", "difficulty": 3}, {"corpus": "attrs", "difficulty": 3}),
        ({"answer": "use evolve", "tags": ["copy"]}, {"answer": "use evolve", "tags": ["copy"]}),
        ({"meta": {"x": 1}}, {"meta": {"x": 1}}),
        ({}, {}),
    ],
    ids=["notes", "corpus-and-number", "answer-and-list", "a-key-named-meta", "none"],
)
def test_load_questions_keeps_unknown_keys_as_metadata(tmp_path: Path, extra: dict, meta: dict) -> None:
    line = json.dumps({**json.loads(GOOD), **extra})
    (question,), errors = load_questions(_write(tmp_path, [line]), strict=True)
    assert errors == [] and question.meta == meta
    assert question.gold_spans and question.answer_contains == ["login"]


@pytest.mark.parametrize(
    ("key", "known"),
    [("gold_span", "gold_spans"), ("gold_file", "gold_files"), ("answer_contain", "answer_contains"),
     ("Query", "query"), ("querry", "query"), ("kinds", "kind"), ("kbs", "kb")],
)
def test_load_questions_rejects_a_near_miss_of_a_known_key(tmp_path: Path, key: str, known: str) -> None:
    line = json.dumps({**json.loads(MINIMAL), key: []})
    questions, errors = load_questions(_write(tmp_path, [line, GOOD]))
    assert [q.id for q in questions] == ["q1"]
    (error,) = errors
    assert error.line == 1 and f"unknown key {key!r}: did you mean {known!r}?" in error.message
    with pytest.raises(InvalidQuery, match=f"did you mean {known!r}"):
        load_questions(_write(tmp_path, [line]), strict=True)
