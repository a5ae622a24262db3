"""RstParser: section titles by docutils' rules, literal blocks, transitions and terms, on hand-checked input."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from sift.ingest.parsers.rst import RstParser, column_width, strip_inline
from sift.models import DocumentTree, SourceType


def _outline(tree: DocumentTree) -> list[tuple[int, str, int, int | None, int, int | None]]:
    """(level, name, start, body_start, end, parent) of every heading."""
    return [(n.level, n.name, n.start_line, n.body_start_line, n.end_line, n.parent) for n in tree.nodes[1:]]


def _parse(text: str, path: str = "docs/guide.rst") -> DocumentTree:
    return RstParser().parse(path, text, "rst")


NESTED = (
    "=====\n"  # 1 overline title: its own style
    "Guide\n"
    "=====\n"
    "\n"
    "Intro.\n"  # 5
    "\n"
    "Install\n"  # 7
    "=======\n"  # underline-only '=' is a new style: level 2
    "\n"
    "From source\n"  # 10
    "-----------\n"
    "Clone.\n"  # 12
    "\n"
    "Use\n"  # 14
    "===\n"
    "\n"
    "Call it.\n"  # 17
)
FIRST_APPEARANCE = "Top\n~~~\n\nMid\n###\n\nLow\n'''\n\nMid again\n#########\n\nTop again\n~~~~~~~~~\n"
LITERALS = (
    "Title\n"  # 1
    "=====\n"
    "\n"
    "Example::\n"  # 4
    "\n"
    "    Not a title\n"
    "    ===========\n"
    "\n"
    ".. code-block:: rst\n"  # 9
    "\n"
    "   Nor this\n"
    "   --------\n"
    "\n"
    "Quoted::\n"  # 14
    "\n"
    "> quoted text\n"  # 16
    "> ----\n"  # 17
    "\n"
    "Real\n"  # 19
    "----\n"
)
TRANSITIONS = "Title\n=====\n\nText.\n\n----------\n\nMore text.\n\n---\n\nEnd.\n"
SHORT_UNDERLINES = (
    "A long title\n"  # 1: 4-char underline, shorter than the title: still a title (docutils warns)
    "----\n"
    "\n"
    "Another long one\n"  # 4: 3-char underline, too short: ordinary text
    "---\n"
    "\n"
    "Ok\n"  # 7: exact length
    "--\n"
)
OVERLINE_MISMATCH = "=====\nTitle\n-----\n\nText.\n\n======\n Inset\n======\n"
NOT_AT_ELEMENT_START = (
    "A paragraph line\ncontinues here\n==============\n\n  Indented\n  --------\n\n- bullet\n--------\n"
)
AFTER_UNINDENT = ".. note:: Hi\n   there\nTitle\n=====\n"
NO_TITLES = "Just a paragraph.\n\nAnother one.\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            NESTED,
            [
                (1, "Guide", 1, 4, 17, 0),
                (2, "Install", 7, 9, 13, 1),
                (3, "From source", 10, 12, 13, 2),
                (2, "Use", 14, 16, 17, 1),
            ],
        ),
        (
            FIRST_APPEARANCE,
            [
                (1, "Top", 1, 3, 12, 0),
                (2, "Mid", 4, 6, 9, 1),
                (3, "Low", 7, 9, 9, 2),
                (2, "Mid again", 10, 12, 12, 1),
                (1, "Top again", 13, 15, 14, 0),
            ],
        ),
        (LITERALS, [(1, "Title", 1, 3, 20, 0), (2, "Real", 19, 21, 20, 1)]),
        (TRANSITIONS, [(1, "Title", 1, 3, 12, 0)]),
        (SHORT_UNDERLINES, [(1, "A long title", 1, 3, 6, 0), (1, "Ok", 7, 9, 8, 0)]),
        (OVERLINE_MISMATCH, [(1, "Inset", 7, 10, 9, 0)]),
        (NOT_AT_ELEMENT_START, []),
        (AFTER_UNINDENT, [(1, "Title", 3, 5, 4, 0)]),
        (NO_TITLES, []),
        ("", []),
    ],
    ids=[
        "nested",
        "levels-by-first-appearance",
        "literal-blocks",
        "transitions",
        "short-underlines",
        "overline-mismatch",
        "not-at-element-start",
        "after-unindent",
        "no-titles",
        "empty",
    ],
)
def test_rst_parser_heading_tree(text: str, expected: list[tuple]) -> None:
    assert _outline(_parse(text)) == expected


@pytest.mark.parametrize("char", list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"))
def test_rst_parser_accepts_every_adornment_character(char: str) -> None:
    tree = _parse(f"Title\n{char * 5}\n\nText.\n")
    assert _outline(tree) == [(1, "Title", 1, 3, 4, 0)]


def test_rst_parser_overline_style_differs_from_underline_style() -> None:
    text = "=====\nOne\n=====\n\nTwo\n===\n\n=====\nThree\n=====\n"
    assert [(n.level, n.name) for n in _parse(text).nodes[1:]] == [(1, "One"), (2, "Two"), (1, "Three")]


@pytest.mark.parametrize(
    ("title", "name", "anchor"),
    [
        (
            "API Reference for the ``attr`` Namespace",
            "API Reference for the attr Namespace",
            "api-reference-for-the-attr-namespace",
        ),
        (
            "Use :func:`~attrs.define` and :class:`Factory <attrs.Factory>`",
            "Use define and Factory",
            "use-define-and-factory",
        ),
        ("*Emphasis* and **strong**", "Emphasis and strong", "emphasis-and-strong"),
        (
            "Links like `Python <https://python.org>`_ and refs_",
            "Links like Python and refs",
            "links-like-python-and-refs",
        ),
        ("Keep __init__ and snake_case", "Keep __init__ and snake_case", "keep-__init__-and-snake_case"),
        (
            "Validators must raise a :exc:`ValidationError <m.ValidationError>`",
            "Validators must raise a ValidationError",
            "validators-must-raise-a-validationerror",
        ),
    ],
)
def test_rst_parser_titles_are_plain_text(title: str, name: str, anchor: str) -> None:
    tree = _parse(f"{title}\n{'=' * column_width(title)}\n")
    assert [(n.name, n.anchor, n.qualified_name) for n in tree.nodes[1:]] == [
        (name, anchor, f"docs/guide.rst#{anchor}")
    ]


def test_rst_parser_duplicate_anchors() -> None:
    text = "Notes\n=====\n\nUsage\n-----\n\nUsage\n-----\n"
    assert [n.anchor for n in _parse(text).nodes[1:]] == ["notes", "usage", "usage-1"]


def test_rst_parser_wide_characters_count_double() -> None:
    assert _outline(_parse("日本語\n======\n")) == [(1, "日本語", 1, 3, 2, 0)]
    assert _outline(_parse("日本語\n===\n")) == []


@pytest.mark.parametrize(("text", "end_line"), [(NESTED, 17), ("", 1), ("one", 1), ("a\r\nb\r\n", 2)])
def test_rst_parser_root_spans_file(text: str, end_line: int) -> None:
    tree = _parse(text)
    root = tree.nodes[0]
    assert (root.kind, root.name, root.qualified_name, root.start_line, root.end_line, root.parent) == (
        "document",
        "guide.rst",
        "docs/guide.rst",
        1,
        end_line,
        None,
    )
    assert tree.source_type == SourceType.DOC and tree.parser == "rst" and tree.language == "rst"


def test_rst_parser_codeblocks_meta() -> None:
    tree = _parse(LITERALS)
    assert tree.nodes[1].meta["codeblocks"] == [
        {"lang": "", "start_line": 6, "end_line": 7},
        {"lang": "rst", "start_line": 9, "end_line": 12},
        {"lang": "", "start_line": 16, "end_line": 17},
    ]
    assert tree.nodes[2].meta["codeblocks"] == []


TERMS = (
    "Glossary\n"  # 1
    "========\n"
    "\n"
    ".. glossary::\n"  # 4
    "\n"
    "   slotted class\n"  # 6
    "      A class with ``__slots__``\n"
    "      and no ``__dict__``.\n"  # 8
    "\n"
    "   field : classifier\n"  # 10
    "      An attribute.\n"  # 11
    "\n"
    "Term at top\n"  # 13
    "   Its *definition*.\n"  # 14
    "\n"
    "**Converter**: turns a value\n"  # 16
    "into another.\n"  # 17
    "\n"
    "- **Validator** — checks a value.\n"  # 19
    "\n"
    ".. code-block:: python\n"
    "\n"
    "   def looks_like_a_term():\n"
    "       return 1\n"
    "\n"
    "Example::\n"
    "\n"
    "    **Code**: not a term\n"
    "\n"
    "- a bullet\n"
    "    indented continuation\n"
    "\n"
    ":field: list\n"
    "    not a term\n"
    "\n"
    "Ends with a colon:\n"
    "    not a term\n"
)


def test_rst_parser_terms() -> None:
    tree = _parse(TERMS)
    got = [(e.type, e.name, e.start_line, e.end_line, e.node, e.detail) for e in tree.entities]
    assert got == [
        ("term", "slotted class", 6, 8, 1, "A class with __slots__ and no __dict__."),
        ("term", "field", 10, 11, 1, "An attribute."),
        ("term", "Term at top", 13, 14, 1, "Its definition."),
        ("term", "Converter", 16, 17, 1, "turns a value into another."),
        ("term", "Validator", 19, 19, 1, "checks a value."),
    ]


def test_rst_parser_headings_are_not_entities() -> None:
    assert _parse(NESTED).entities == []


def test_rst_parser_supports_rst_only() -> None:
    parser = RstParser()
    assert parser.name == "rst" and parser.supports("rst")
    assert not parser.supports("markdown") and not parser.supports("text")


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("``code``", "code"),
        (":meth:`~pkg.Cls.method`", "method"),
        (":ref:`Title <label>`", "Title"),
        (":py:class:`pkg.Cls`", "pkg.Cls"),
        ("`default role`", "default role"),
        ("`post_load <m.post_load>`", "post_load"),
        ("see [1]_ and [#note]_", "see and"),
        ("escaped \\*star\\*", "escaped *star*"),
        ("a\\ b", "ab"),
        ("2 * 3 * 4", "2 * 3 * 4"),
    ],
)
def test_strip_inline_keeps_visible_text(raw: str, plain: str) -> None:
    assert strip_inline(raw) == plain


GOLDEN = Path(__file__).parent.parent / "golden" / "docs"


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.rst")))
def test_rst_parser_matches_golden_file(name: str) -> None:
    """Whole parser output against a reviewed golden file; SIFT_UPDATE_GOLDEN=1 rewrites them."""
    tree = _parse((GOLDEN / name).read_text(encoding="utf-8"), path=f"docs/{name}")
    actual = json.loads(json.dumps(dataclasses.asdict(tree)))
    expected_path = GOLDEN / f"{name}.json"
    if os.environ.get("SIFT_UPDATE_GOLDEN") == "1":
        expected_path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert actual == json.loads(expected_path.read_text(encoding="utf-8"))
