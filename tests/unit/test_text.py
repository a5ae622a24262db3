"""split_lines: lines as editors, tree-sitter and `sed -n` count them (only \\n ends a line)."""

from __future__ import annotations

import pytest

from sift.text import line_count, line_span, lines_phrase, split_lines


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("\n", [""]),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("a\nb", ["a", "b"]),
        ("a\r\nb\r\n", ["a\r", "b\r"]),
        ("a\fb\nc", ["a\fb", "c"]),
        ("x\u2028y\u2029z\x85w\x0bv\x1cu\n", ["x\u2028y\u2029z\x85w\x0bv\x1cu"]),
        ("old\rmac\r", ["old\rmac\r"]),
    ],
)
def test_split_lines_counts_only_newlines(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines
    assert line_count(text) == len(lines)


def test_split_lines_differs_from_splitlines_on_form_feed() -> None:
    text = "def f():\n    pass\n\f\ndef g():\n    return 1\n"
    assert split_lines(text)[3] == "def g():"
    assert text.splitlines()[3] != "def g():"  # the drift split_lines exists to prevent


@pytest.mark.parametrize(("start", "end", "span", "phrase"), [
    (12, 20, "12-20", "lines 12-20"),
    (737, 737, "737", "line 737"),  # one line is not written as a range
])
def test_a_line_range_as_a_reader_writes_it(start: int, end: int, span: str, phrase: str) -> None:
    assert (line_span(start, end), lines_phrase(start, end)) == (span, phrase)
