"""Inverse-cloze train copies (lab/train/cloze.py): finding a mined sentence in its target and blanking it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.train.cloze import blank, cloze_copy, cloze_questions, locate


@pytest.mark.parametrize(
    ("text", "query", "expected"),
    [
        ("Return the parsed value.", "Return the parsed value", "Return the parsed value"),
        # a masked name word between two query words, and markup around another
        ("Parse ``Config`` files into a mapping.", "Parse files into a mapping", "Parse ``Config`` files into a mapping"),
        # over a line break and comment markers
        ("// Resolve a colour model\n// to one converter.", "Resolve a colour model to one converter",
         "Resolve a colour model\n// to one converter"),
        ("RETURN THE VALUE", "return the value", "RETURN THE VALUE"),  # case-insensitive
        ("Return the value.", "Return the other value", None),  # a word that is not there
        ("the value", "", None),
    ],
)
def test_locate(text: str, query: str, expected: str | None) -> None:
    found = locate(text, query)
    assert (None if found is None else text[found[0] : found[1]]) == expected


def test_locate_last_takes_the_nearest_comment_above() -> None:
    text = "/** Sends the request. */\nfunction a() {}\n/** Sends the request. */\nfunction b() {}\n"
    first, last = locate(text, "Sends the request"), locate(text, "Sends the request", last=True)
    assert first is not None and last is not None and first[0] < last[0]
    assert text[: last[0]].count("\n") == 2


def test_locate_allows_a_bounded_gap() -> None:
    assert locate("alpha " + "x " * 8 + "beta", "alpha beta") is not None
    assert locate("alpha " + "x " * 9 + "beta", "alpha beta") is None


def test_blank_keeps_lines_columns_and_syntax() -> None:
    text = 'def f():\n    """Return the\n    value."""\n'
    start = text.index("Return")
    end = text.index("value") + len("value")
    out = blank(text, start, end)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert '"""' in out and "Return" not in out and "value" not in out and out.endswith('."""\n')


def _q(source: str, query: str, path: str, start: int, end: int) -> dict:
    return {"id": query, "source": source, "query": query, "kb": "pkg",
            "gold_spans": [{"path": path, "start_line": start, "end_line": end}]}


def test_cloze_questions_blank_inside_the_span_only() -> None:
    files = {"m.py": 'x = "Load the settings"\n\ndef load():\n    """Load the settings from disk."""\n'}
    questions = [
        _q("docstring", "the settings from disk", "m.py", 3, 4),
        _q("test_name", "load settings", "tests/test_m.py", 1, 2),  # not in its target's text: kept as is
        _q("docstring", "words that are nowhere", "m.py", 3, 4),  # not found: left out
        _q("docstring", "anything", "missing.py", 1, 1),  # its file is not readable: left out
    ]
    changed, kept = cloze_questions(files, questions)
    assert [q["query"] for q in kept] == ["the settings from disk", "load settings"]
    text = changed["m.py"]
    assert text.split("\n")[0] == files["m.py"].split("\n")[0]  # outside the span: untouched
    assert "settings" not in text.split("\n")[3] and text.split("\n")[3].startswith('    """Load')


def test_jsdoc_sentence_is_found_above_the_definition() -> None:
    files = {"a.js": "/**\n * Formats a duration for people.\n */\nfunction format(s) {\n  return s;\n}\n"}
    changed, kept = cloze_questions(files, [_q("jsdoc", "Formats a duration for people", "a.js", 4, 6)])
    assert len(kept) == 1
    lines = changed["a.js"].split("\n")
    assert lines[1].replace(" ", "") == "*." and len(lines[1]) == len(" * Formats a duration for people.")
    assert lines[3] == "function format(s) {"


def test_cloze_copy_writes_once_and_points_questions_at_the_copy(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "m.py").write_text('def f():\n    """Compute the total price."""\n', encoding="utf-8")
    (root / "README.md").write_text("# Pkg\n", encoding="utf-8")
    dest = tmp_path / "copies" / "pkg-1.0"
    dest.parent.mkdir()
    kept = cloze_copy(root, [_q("docstring", "Compute the total price", "m.py", 1, 2)], dest, "cloze-pkg")
    assert [q["kb"] for q in kept] == ["cloze-pkg"]
    assert "price" not in (dest / "m.py").read_text(encoding="utf-8")
    assert (dest / "README.md").read_text(encoding="utf-8") == "# Pkg\n"
    assert "price" in (root / "m.py").read_text(encoding="utf-8")  # the source itself is never touched
    assert (dest.parent / "pkg-1.0.complete").exists() and not (dest / ".complete").exists()
    (dest / "m.py").write_text("changed", encoding="utf-8")
    cloze_copy(root, [_q("docstring", "Compute the total price", "m.py", 1, 2)], dest, "cloze-pkg")
    assert (dest / "m.py").read_text(encoding="utf-8") == "changed"  # made once
