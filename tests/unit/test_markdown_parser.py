"""MarkdownParser: heading tree, line ranges, anchors, code blocks and terms, on hand-checked documents."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from sift.ingest.parsers.doc_terms import clip, slugify, unique_anchor
from sift.ingest.parsers.markdown import MarkdownParser
from sift.models import DocumentTree, SourceType


def _outline(tree: DocumentTree) -> list[tuple[int, str, int, int | None, int, int | None]]:
    """(level, name, start, body_start, end, parent) of every heading."""
    return [(n.level, n.name, n.start_line, n.body_start_line, n.end_line, n.parent) for n in tree.nodes[1:]]


def _parse(text: str, path: str = "docs/guide.md") -> DocumentTree:
    return MarkdownParser().parse(path, text, "markdown")


NESTED = (
    "# Guide\n\nIntro.\n\n## Install\n\npip install.\n\n### From source\n\nClone.\n\n## Use\n\nCall it.\n"
)
SETEXT = "Title\n=====\n\nBody.\n\nPart\n----\n\nMore.\n# ATX\n"
FENCES = (
    "# Real\n"
    "\n"
    "```python\n"
    "# not a heading\n"
    "```\n"
    "\n"
    "~~~\n"
    "## nor this\n"
    "~~~\n"
    "\n"
    "    # indented code, not a heading\n"
    "\n"
    "## Also real\n"
)
YAML_FRONT = "---\ntitle: Guide\n# comment: not a heading\n---\n\n# Guide\n\nText.\n"
TOML_FRONT = '+++\ntitle = "Guide"\n+++\n# Guide\nText.\n'
DUPLICATES = "# Notes\n\n## Usage\n\n## Usage\n\n## Usage\n"
INLINE = "# The **bold** `code` [link *text*](http://x) ![alt](i.png) title\n\n## Hello, World! (v2.0)\n"
NO_HEADINGS = "Just a paragraph.\n\nAnother one.\n"
SKIPPED_LEVEL = "# A\n\n### C\n\n## B\n\n#### D\n"
TRAILING_HASHES = "## Closed ##\ntext\n"
BLOCKQUOTE = "> # Quoted\n\nText\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            NESTED,
            [
                (1, "Guide", 1, 2, 15, 0),
                (2, "Install", 5, 6, 12, 1),
                (3, "From source", 9, 10, 12, 2),
                (2, "Use", 13, 14, 15, 1),
            ],
        ),
        (SETEXT, [(1, "Title", 1, 3, 9, 0), (2, "Part", 6, 8, 9, 1), (1, "ATX", 10, 11, 10, 0)]),
        (FENCES, [(1, "Real", 1, 2, 13, 0), (2, "Also real", 13, 14, 13, 1)]),
        (YAML_FRONT, [(1, "Guide", 6, 7, 8, 0)]),
        (TOML_FRONT, [(1, "Guide", 4, 5, 5, 0)]),
        (NO_HEADINGS, []),
        ("", []),
        (
            SKIPPED_LEVEL,
            [(1, "A", 1, 2, 7, 0), (3, "C", 3, 4, 4, 1), (2, "B", 5, 6, 7, 1), (4, "D", 7, 8, 7, 3)],
        ),
        (TRAILING_HASHES, [(2, "Closed", 1, 2, 2, 0)]),
        (BLOCKQUOTE, [(1, "Quoted", 1, 2, 3, 0)]),
    ],
    ids=[
        "nested",
        "setext",
        "code-fences",
        "yaml-front-matter",
        "toml-front-matter",
        "no-headings",
        "empty",
        "skipped-level",
        "closing-hashes",
        "blockquote",
    ],
)
def test_markdown_parser_heading_tree(text: str, expected: list[tuple]) -> None:
    assert _outline(_parse(text)) == expected


@pytest.mark.parametrize(
    ("text", "end_line"),
    [(NESTED, 15), ("", 1), ("one line, no newline", 1), ("a\nb", 2), ("a\n\n\n", 3), (YAML_FRONT, 8)],
)
def test_markdown_parser_root_spans_file(text: str, end_line: int) -> None:
    tree = _parse(text)
    root = tree.nodes[0]
    assert (root.kind, root.name, root.qualified_name, root.start_line, root.end_line, root.level) == (
        "document",
        "guide.md",
        "docs/guide.md",
        1,
        end_line,
        0,
    )
    assert root.parent is None and root.docstring is None
    assert tree.source_type == SourceType.DOC and tree.parser == "markdown" and tree.language == "markdown"


@pytest.mark.parametrize(
    ("text", "anchors"),
    [
        (DUPLICATES, ["notes", "usage", "usage-1", "usage-2"]),
        (INLINE, ["the-bold-code-link-text-alt-title", "hello-world-v20"]),
        ("# API_Reference -- draft\n", ["api_reference----draft"]),
        ("# Ünïcode Tïtle\n", ["ünïcode-tïtle"]),
    ],
)
def test_markdown_parser_anchors(text: str, anchors: list[str]) -> None:
    tree = _parse(text)
    assert [n.anchor for n in tree.nodes[1:]] == anchors
    assert [n.qualified_name for n in tree.nodes[1:]] == [f"docs/guide.md#{a}" for a in anchors]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (INLINE, ["The bold code link text alt title", "Hello, World! (v2.0)"]),
        ("Two line\nsetext title\n---\n", ["Two line setext title"]),
        ("# Use {func}`attrs.define` and {class}`~attrs.Attribute`\n", ["Use attrs.define and Attribute"]),
        ("# See {ref}`the guide <guide>`\n", ["See the guide"]),
        ("# Escaped \\*stars\\* &amp; <b>html</b>\n", ["Escaped *stars* & html"]),
    ],
)
def test_markdown_parser_titles_are_plain_text(text: str, names: list[str]) -> None:
    assert [n.name for n in _parse(text).nodes[1:]] == names


CODEBLOCKS = (
    "```bash\n"  # 1 preamble block
    "pip install x\n"
    "```\n"
    "# Guide\n"  # 4
    "\n"
    "```python title=x.py\n"  # 6
    "print(1)\n"
    "```\n"  # 8
    "\n"
    "## Sub\n"  # 10
    "\n"
    "~~~\n"  # 12
    "plain\n"
    "~~~\n"  # 14
    "\n"
    "```{code-block} yaml\n"  # 16
    "a: 1\n"
    "```\n"  # 18
    "\n"
    "```{doctest}\n"  # 20
    ">>> 1\n"
    "```\n"  # 22
    "\n"
    "```{toctree}\n"  # 24: not code
    "api\n"
    "```\n"
    "\n"
    ":::{note}\n"  # 28
    "```json\n"  # 29
    "{}\n"
    "```\n"  # 31
    ":::\n"
    "\n"
    "    indented code is not fenced\n"
)


def test_markdown_parser_codeblocks_meta_per_section() -> None:
    tree = _parse(CODEBLOCKS)
    assert tree.nodes[0].meta["codeblocks"] == [{"lang": "bash", "start_line": 1, "end_line": 3}]
    assert tree.nodes[1].meta["codeblocks"] == [{"lang": "python", "start_line": 6, "end_line": 8}]
    assert tree.nodes[2].meta["codeblocks"] == [
        {"lang": "", "start_line": 12, "end_line": 14},
        {"lang": "yaml", "start_line": 16, "end_line": 18},
        {"lang": "doctest", "start_line": 20, "end_line": 22},
        {"lang": "json", "start_line": 29, "end_line": 31},
    ]


TERMS = (
    "# Glossary\n"  # 1
    "\n"
    "Slot\n"  # 3
    ": A fixed attribute *storage* place.\n"
    "\n"
    "**Frozen class**\n"  # 6
    "\n"
    ": An instance that cannot be changed.\n"  # 8
    "  Really.\n"  # 9
    "\n"
    "**Converter**: turns a value into another.\n"  # 11
    "\n"
    "- **Validator** — checks a value.\n"  # 13
    "- **Hook:** runs\n"  # 14
    "  later.\n"  # 15
    "\n"
    "**Just bold.** No separator, not a term.\n"  # 17
    "\n"
    "Some **bold**: not at the start.\n"  # 19
    "\n"
    "```\n"
    "**Code**: not a term\n"
    "```\n"
)


def test_markdown_parser_terms() -> None:
    tree = _parse(TERMS)
    got = [(e.type, e.name, e.start_line, e.end_line, e.node, e.detail) for e in tree.entities]
    assert got == [
        ("term", "Slot", 3, 4, 1, "A fixed attribute storage place."),
        ("term", "Frozen class", 6, 9, 1, "An instance that cannot be changed. Really."),
        ("term", "Converter", 11, 11, 1, "turns a value into another."),
        ("term", "Validator", 13, 13, 1, "checks a value."),
        ("term", "Hook", 14, 15, 1, "runs later."),
    ]


MYST_GLOSSARY = (
    "# Glossary\n"  # 1
    "\n"
    ":::{glossary}\n"  # 3
    "dunder methods\n"  # 4
    "  Methods like `__init__`, see {func}`object.__init__`.\n"
    "\n"
    "  More text.\n"  # 7
    "\n"
    "\n"
    "slotted classes\n"  # 10
    "  Classes with `__slots__`:\n"
    "\n"
    "  ```{doctest}\n"  # 13
    "  >>> 1\n"
    "  ```\n"  # 15
    ":::\n"
)


def test_markdown_parser_myst_glossary_terms() -> None:
    tree = _parse(MYST_GLOSSARY)
    got = [(e.name, e.start_line, e.end_line, e.detail) for e in tree.entities]
    assert got == [
        ("dunder methods", 4, 7, "Methods like __init__, see object.__init__. More text."),
        ("slotted classes", 10, 15, "Classes with __slots__:"),
    ]
    assert tree.nodes[1].meta["codeblocks"] == [{"lang": "doctest", "start_line": 13, "end_line": 15}]


def test_markdown_parser_headings_are_not_entities() -> None:
    assert _parse(NESTED).entities == []


def test_markdown_parser_long_definition_is_clipped() -> None:
    tree = _parse("Term\n: " + "word " * 200 + "\n")
    (term,) = tree.entities
    assert len(term.detail or "") <= 300 and term.detail.endswith("…")


@pytest.mark.parametrize("language", ["markdown"])
def test_markdown_parser_supports_markdown(language: str) -> None:
    parser = MarkdownParser()
    assert parser.name == "markdown" and parser.supports(language)
    assert not parser.supports("rst") and not parser.supports("python")


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Hello World", "hello-world"),
        ("Hello, World!", "hello-world"),
        ("  padded  ", "padded"),
        ("snake_case-and-kebab", "snake_case-and-kebab"),
        ("What's new in 2.0?", "whats-new-in-20"),
        ("", ""),
    ],
)
def test_slugify_github_style(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_unique_anchor_numbers_repeats() -> None:
    seen: set[str] = set()
    assert [unique_anchor(s, seen) for s in ["a", "a", "a-1", "a", "b"]] == ["a", "a-1", "a-1-1", "a-2", "b"]


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short  text\n here", 300, "short text here"),
        ("alpha beta gamma delta", 12, "alpha beta…"),
        ("x" * 20, 10, "x" * 9 + "…"),
        ("", 10, ""),
    ],
)
def test_clip_cuts_at_word_boundary(text: str, limit: int, expected: str) -> None:
    assert clip(text, limit) == expected


GOLDEN = Path(__file__).parent.parent / "golden" / "docs"


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("*.md")))
def test_markdown_parser_matches_golden_file(name: str) -> None:
    """Whole parser output against a reviewed golden file; SIFT_UPDATE_GOLDEN=1 rewrites them."""
    tree = _parse((GOLDEN / name).read_text(encoding="utf-8"), path=f"docs/{name}")
    actual = json.loads(json.dumps(dataclasses.asdict(tree)))
    expected_path = GOLDEN / f"{name}.json"
    if os.environ.get("SIFT_UPDATE_GOLDEN") == "1":
        expected_path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert actual == json.loads(expected_path.read_text(encoding="utf-8"))
