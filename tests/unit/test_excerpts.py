"""What the writer quotes from one evidence item: first sentences, signatures, key lines, doc sentences."""

from __future__ import annotations

import pytest

from sift.graph.excerpts import CODE, doc_lines, doc_sentences, first_sentence, key_lines, signature
from sift.graph.state import Evidence


def ev(text: str, kind: str = "function", start: int = 10, part: int | None = None, name: str = "f") -> Evidence:
    return Evidence(id=1, path="pkg/m.py", start_line=start, end_line=start + len(text.splitlines()) - 1,
                    kind=kind, name=name, part=part, score=1.0, text=text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Load a config. Then validate it.", "Load a config."),
    ("Load a\n    config file.\n\nSecond paragraph.", "Load a config file."),  # one line, first paragraph
    ("Use :func:`load` to read it. More.", "Use load to read it."),  # roles and backticks dropped
    ("e.g. this stays whole", "e.g. this stays whole"),  # no capital after the stop: no sentence end
    ("", ""),
    (None, ""),
])
def test_first_sentence(text: str | None, expected: str) -> None:
    assert first_sentence(text) == expected


@pytest.mark.parametrize(("text", "part", "expected"), [
    ("def load(path):\n    return read(path)", None, "def load(path)"),
    ("@cache\ndef load(\n    path,\n    strict=False,\n):\n    pass", None, "def load( path, strict=False, )"),
    ("class Schema(Base):\n    pass", None, "class Schema(Base)"),
    ("function f(a) {\n  return a;\n}", None, "function f(a)"),  # a brace ends a header too
    ("def load(path):\n    return read(path)", 2, ""),  # a later part starts mid-body
    ("def f(x='`'):\n    pass", None, ""),  # a backtick could not be quoted
    ("", None, ""),
])
def test_signature(text: str, part: int | None, expected: str) -> None:
    assert signature(ev(text, part=part)) == expected


def test_key_lines_rank_by_shared_terms_then_keep_file_order() -> None:
    text = ('def save(user, session):\n    """Save a user."""\n    # the user goes first\n'
            "    session.add(user)\n    log(user)\n    session.commit()\n    return user")
    lines = key_lines(ev(text), ["session", "user"], limit=2)
    assert lines == [(13, "session.add(user)"), (14, "log(user)")]  # def, docstring and comment are skipped
    assert key_lines(ev(text), ["nothing"]) == []
    assert key_lines(ev(text), []) == []


def test_key_lines_skip_lines_that_cannot_be_quoted() -> None:
    text = 'def f(items):\n    first = items[0]  # the head\n    return "`items`"'
    assert key_lines(ev(text), ["item"]) == []  # "[0]" reads as a citation marker, a backtick breaks the quote


def test_doc_sentences_prefer_shared_terms_and_names_of_api_in_reading_order() -> None:
    text = ("Validation\n==========\n\nFields are checked when data is loaded. Errors are collected per field. "
            "Call `validate` to check data without loading it. Nothing else happens here.")
    doc = ev(text, kind="doc", name="Validation")
    assert doc_sentences(doc, ["check", "data"], limit=2) == [
        "Fields are checked when data is loaded.", "Call validate to check data without loading it."]


def test_doc_sentences_show_a_code_example_as_a_fenced_block() -> None:
    text = "Usage\n-----\n\nCreate a schema like this::\n\n    schema = UserSchema()\n    schema.load(data)\n"
    out = doc_sentences(ev(text, kind="doc", name="Usage"), ["schema"])
    assert out == ["Create a schema like this:", f"{CODE}python\nschema = UserSchema()\nschema.load(data)\n{CODE}"]


def test_doc_sentences_of_a_section_with_no_shared_term_quote_its_first_sentence() -> None:
    doc = ev("Overview of the whole package and its parts. It is small.", kind="doc", name="Overview")
    assert doc_sentences(doc, ["unrelated"]) == ["Overview of the whole package and its parts."]


@pytest.mark.parametrize(("docstring", "tokens", "first", "expected"), [
    ("Load data.\n\nThe path is read once. Errors are raised as ValueError. The cache is kept.",
     ["error", "cache"], "Load data.", ["Errors are raised as ValueError.", "The cache is kept."]),
    ("Load data. It reads the path once.", ["path"], "Load data.", ["It reads the path once."]),
    ("Load data and path.", ["path"], "Load data and path.", []),  # the first sentence is not repeated
    ("Load data.\n\nIt returns values[0] of the path.", ["path"], "Load data.", []),  # "[0]" reads as a citation
    (None, ["path"], "", []),
    ("Load data. The path is read.", [], "Load data.", []),
])
def test_doc_lines(docstring: str | None, tokens: list[str], first: str, expected: list[str]) -> None:
    assert doc_lines(docstring, tokens, first) == expected
