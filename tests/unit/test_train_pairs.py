"""Table tests for the pure pieces of the train-set generator (lab/train): sentences, masking, test names,
the junk filter, selection, call resolution and paragraph extraction."""

from __future__ import annotations

import pytest

from lab.train.calls import DefinitionIndex, module_path
from lab.train.pairs import Pair, select
from lab.train.sections import md_paragraphs, rst_paragraph, trim_end
from lab.train.text import (
    docstring_summary,
    first_sentence,
    is_junk,
    mask,
    mask_keys,
    name_words,
    query_from,
    strip_test_lead,
    words_from_test_name,
)
from sift.models import NodeKind, ParsedNode


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Return the value. More text follows.", "Return the value."),
        ("Use e.g. this one. Next one.", "Use e.g. this one."),
        ("Call foo.bar() now. Then more.", "Call foo.bar() now."),
        ("Version 2.0 is out. Yes.", "Version 2.0 is out."),
        ("Is it done? Maybe.", "Is it done?"),
        (
            "It works (see below). and then",
            "It works (see below). and then",
        ),  # lower case: not a new sentence
        ("No final stop", "No final stop"),
        ("  spread\n over   lines.  ", "spread over lines."),
        ("", ""),
    ],
)
def test_first_sentence_cuts_at_sentence_end(text: str, expected: str) -> None:
    assert first_sentence(text) == expected


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (":class:`Foo` objects are *made* here.\n\nMore.", "Foo objects are made here."),
        ("Summary on\ntwo lines.\n\nArgs:\n    x: a value.", "Summary on two lines."),
        ("Create a new {@link Router} instance.\n@param {Object} opts", "Create a new Router instance."),
        ("Send {@link Reply|the reply} now.", "Send the reply now."),
        ("@returns {string}", ""),
    ],
)
def test_docstring_summary_strips_markup_and_tags(doc: str, expected: str) -> None:
    assert docstring_summary(doc) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("HookCaller.call_historic", ["hook", "caller", "call", "historic"]),
        ("parseHTTPResponse", ["parse", "http", "response"]),
        ("__init__", ["init"]),
        ("Installation guide", ["installation", "guide"]),
        ("", []),
    ],
)
def test_name_words_splits_identifiers(name: str, expected: list[str]) -> None:
    assert name_words(name) == expected


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        ("Parse the input and return parsed tokens", ["parse"], "the input and return tokens"),
        ("Calls `parse_args()` first, then PARSES", ["parse"], "Calls first, then"),  # identifiers and case
        ("Validate a token against the secret", ["validate_token"], "a against the secret"),
        ("Return the value of it", ["get_the_value"], "Return the of it"),  # stopwords in a name stay
        ("Nothing to hide here", ["frobnicate"], "Nothing to hide here"),
        ("Tokens: token list", ["token"], "list"),  # dangling punctuation goes with its word
        ("", ["x"], ""),
    ],
)
def test_mask_removes_name_words(query: str, names: list[str], expected: str) -> None:
    assert mask(query, mask_keys(names)) == expected


def test_mask_keys_drops_stopwords_and_stems() -> None:
    assert mask_keys(["get_the_values", "Parsing Rules"]) == {"get", "value", "parse", "rule"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_parse_handles_empty_input", "parse handles empty input"),
        ("testParseEmpty", "parse empty"),
        ("test_02_link_3_sideways", "link sideways"),  # numbering dropped
        ("test_i18n_naturaldelta", "i18n naturaldelta"),  # digits inside a word stay
        ("test", ""),
        ("helper_test", None),
        ("testing_helpers", None),  # "testing" is not the word "test"
    ],
)
def test_test_words_turns_names_into_queries(name: str, expected: str | None) -> None:
    assert words_from_test_name(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Test that parsing fails on bad input.", "parsing fails on bad input."),
        ("Ensures the cache is cleared.", "the cache is cleared."),
        ("Tests whether x works", "x works"),
        ("Testimonials are not tests.", "Testimonials are not tests."),
    ],
)
def test_strip_test_lead(text: str, expected: str) -> None:
    assert strip_test_lead(text) == expected


@pytest.mark.parametrize(
    ("text", "junk"),
    [
        ("Initialize self.  See help(type(self)) for accurate signature.", True),
        ("Return str(self).", True),
        ("Args:", True),
        ("Copyright (c) 2020 Foo Bar and contributors", True),
        ("foo(a, b) -> int", True),
        ("= WS? WS? WS?", True),
        ("CHAR = <any US-ASCII character (octets 0 - 127)>", True),  # a grammar rule, mostly not prose
        ("Read https://a.example/x and https://b.example/y first.", True),
        ("TODO: make this faster", True),
        ("", True),
        ("Return the number of items in the cache.", False),
        ("Either <host> or <host>:<port> as bytes.", False),  # some code in prose is fine
    ],
)
def test_is_junk(text: str, junk: bool) -> None:
    assert is_junk(text) is junk


@pytest.mark.parametrize(
    ("summary", "names", "expected"),
    [
        ("Parse the input file into tokens.", ["parse"], "the input file into tokens."),
        ("Parse the input file.", ["parse_input"], None),  # 3 words left
        ("The code path is unreachable.", ["unreachable"], None),  # 4 words, 2 that are not stopwords
        ("Return str(self).", ["x"], None),
        ("Example:", ["x"], None),
        ("Split " + "word " * 60, ["x"], None),  # too long
    ],
)
def test_query_from_filters_after_masking(summary: str, names: list[str], expected: str | None) -> None:
    assert query_from(summary, mask_keys(names)) == expected


def _pair(query: str, path: str = "a.py", start: int = 1, source: str = "docstring") -> Pair:
    return Pair(source, query, path, start, start + 1, "function", f"{path}::f{start}")


def test_select_drops_duplicates_and_ambiguous_queries() -> None:
    pairs = [
        _pair("same words same target"),
        _pair("Same words  same target"),  # duplicate after case and space folding; the first in order stays
        _pair("two different targets here", start=1),
        _pair("two different targets here", start=10),
        _pair("stub and source agree", path="a.pyi", start=3),
        _pair("stub and source agree", path="a.py", start=5),
        _pair("unique query for one", start=7),
    ]
    kept = select(pairs, "kb")
    assert [(p.query, p.path, p.start_line) for p in kept] == [
        ("Same words  same target", "a.py", 1),
        ("stub and source agree", "a.py", 5),
        ("unique query for one", "a.py", 7),
    ]


def test_select_caps_each_source_with_a_seeded_sample() -> None:
    pairs = [_pair(f"query number {i:03d} here", start=i) for i in range(1, 41)]
    pairs += [_pair(f"section query {i} text", start=i, source="doc_section") for i in range(1, 4)]
    first = select(pairs, "kb", cap=10)
    assert select(list(reversed(pairs)), "kb", cap=10) == first  # input order does not matter
    assert sum(p.source == "docstring" for p in first) == 10
    assert sum(p.source == "doc_section" for p in first) == 3
    assert select(pairs, "other", cap=10) != first  # the sample depends on the package


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/pluggy/_hooks.py", "pluggy._hooks"),
        ("pkg/__init__.py", "pkg"),
        ("lib/a/b.py", "a.b"),
        ("setup.py", "setup"),
    ],
)
def test_module_path(path: str, expected: str) -> None:
    assert module_path(path) == expected


def _node(name: str, line: int) -> ParsedNode:
    return ParsedNode(line, NodeKind.FUNCTION, name, f"x.py::{name}", line, line + 2)


def test_definition_index_resolves_only_unambiguous_calls() -> None:
    parse, run_a, run_b, get = _node("parse", 1), _node("run", 5), _node("run", 9), _node("get", 13)
    index = DefinitionIndex(
        by_qual={"pkg.mod.parse": ("x.py", parse)},
        by_name={
            "parse": [("x.py", parse)],
            "run": [("x.py", run_a), ("y.py", run_b)],
            "get": [("x.py", get)],
        },
    )
    none: frozenset[str] = frozenset()
    assert index.resolve("p", "pkg.mod.parse", none) == ("x.py", parse)  # by the import-qualified name
    assert index.resolve("parse", None, none) == ("x.py", parse)  # one definition with that name
    assert index.resolve("mod.parse", None, none) == ("x.py", parse)
    assert index.resolve("run", None, none) is None  # two definitions: ambiguous
    assert index.resolve("get", None, none) == ("x.py", get)
    assert index.resolve("d.get", None, none) is None  # a dict's get just as likely
    assert index.resolve("parse", None, frozenset({"parse"})) is None  # the test file defines its own
    assert index.resolve("missing", None, none) is None


def test_md_paragraphs_resolve_references_and_skip_badges() -> None:
    lines = [
        "# Title",
        "",
        "[![CI](https://ci/badge.svg)](https://ci)",
        "",
        "Use a [Pool][] for *many* requests.",
        "",
        "- a list item is not a paragraph",
        "",
        "[Pool]: https://example.com/pool",
    ]
    assert md_paragraphs(lines) == [(5, "Use a Pool for many requests.")]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (["", "First ``para`` here", "goes on.", "", "Second."], "First para here goes on."),
        (["- a bullet", "", ".. note::", "", "   Indented.", "", "Real text."], "Real text."),
        (["|PyPI| |CI|", "", "After the badges."], "After the badges."),
        (["Example::", "", "    code"], "Example:"),
        (["======  =====", "a       b", "======  =====", "", "Text."], "Text."),
        (["", "   only indented"], None),
    ],
)
def test_rst_paragraph(body: list[str], expected: str | None) -> None:
    assert rst_paragraph(body) == expected


@pytest.mark.parametrize(
    ("lines", "end", "expected"),
    [
        (["Title", "body", "", ""], 4, 2),
        (["Title", "body", "", ".. _next:", ""], 5, 2),
        (["Title", "body", "(next)=", ""], 4, 2),
        (["Title", "", ""], 3, 1),
    ],
)
def test_trim_end(lines: list[str], end: int, expected: int) -> None:
    assert trim_end(lines, 1, end) == expected
