"""The Markdown and rST parsers over every doc file of real sdists, checked against independent parsers.

Markdown headings are compared with markdown-it-py's own ``heading_open`` tokens; rST section titles with
docutils' doctree (Sphinx roles registered as plain literals so titles render as Sphinx shows them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docutils.core
import docutils.nodes
import pytest
from docutils.parsers.rst import roles
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from sift.ingest.parsers.markdown import MarkdownParser
from sift.ingest.parsers.rst import RstParser
from sift.ingest.parsers.text import line_count
from sift.models import DocumentTree

SPHINX_ROLES = ["xref", "exc", "class", "func", "meth", "attr", "mod", "ref", "doc", "term", "data", "obj"]
# Sphinx projects set a cross-reference default role; docutils' own default would keep ``title <target>`` text.
DEFAULT_ROLE = ".. default-role:: xref\n\n"
DOCUTILS_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "doctitle_xform": False,  # keep a lone top-level title as a section, as the tree does
    "file_insertion_enabled": False,
    "raw_enabled": False,
}


def _xref_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None
) -> tuple[list[docutils.nodes.Node], list[Any]]:
    """A Sphinx-like cross-reference role: ``title <target>`` shows title, ``~a.b`` shows b."""
    text = text.strip()
    if text.endswith(">") and " <" in text:
        text = text[: text.rindex(" <")]
    elif text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return [docutils.nodes.literal(rawtext, text.lstrip("!"))], []


def _docutils_sections(text: str) -> list[tuple[int, str, int]]:
    """(depth, title, underline line) of every section docutils finds."""
    for name in SPHINX_ROLES:
        roles.register_local_role(name, _xref_role)
    doctree = docutils.core.publish_doctree(DEFAULT_ROLE + text, settings_overrides=DOCUTILS_SETTINGS)
    offset = DEFAULT_ROLE.count("\n")
    found = []
    for section in doctree.findall(docutils.nodes.section):
        depth, parent = 1, section.parent
        while parent is not None:
            depth += isinstance(parent, docutils.nodes.section)
            parent = parent.parent
        found.append((depth, section[0].astext(), section.line - offset))
    return found


def _doc_files(root: Path, suffix: str) -> list[Path]:
    return sorted(root.rglob(f"*{suffix}"))


def _assert_consistent(tree: DocumentTree, text: str) -> None:
    """Parents before children, children inside parents, levels increasing downward, siblings disjoint."""
    nodes = tree.nodes
    assert nodes[0].kind == "document" and nodes[0].start_line == 1
    assert nodes[0].end_line == max(1, line_count(text))
    for node in nodes[1:]:
        parent = nodes[node.parent]  # type: ignore[index]
        assert node.parent < node.index
        assert parent.level < node.level <= 6
        assert parent.start_line <= node.start_line <= node.end_line <= parent.end_line
        assert node.body_start_line is not None and node.body_start_line > node.start_line
        assert node.qualified_name == f"{tree.path}#{node.anchor}"
    for parent in nodes:
        children = [n for n in nodes if n.parent == parent.index]
        for before, after in zip(children, children[1:], strict=False):
            assert before.end_line < after.start_line
    anchors = [n.anchor for n in nodes[1:]]
    assert len(anchors) == len(set(anchors))
    for entity in tree.entities:
        section = nodes[entity.node]  # type: ignore[index]
        assert section.start_line <= entity.start_line <= entity.end_line <= section.end_line


@pytest.fixture(scope="module")
def markdown_parser() -> MarkdownParser:
    return MarkdownParser()


def test_markdown_parser_matches_markdown_it_on_attrs(
    attrs_src: Path, markdown_parser: MarkdownParser
) -> None:
    reference = MarkdownIt("commonmark").use(front_matter_plugin)
    files = _doc_files(attrs_src, ".md")
    assert len(files) >= 20
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(attrs_src).as_posix()
        tree = markdown_parser.parse(rel, text, "markdown")
        expected = [(int(t.tag[1]), t.map[0] + 1) for t in reference.parse(text) if t.type == "heading_open"]
        assert [(n.level, n.start_line) for n in tree.nodes[1:]] == expected, rel
        _assert_consistent(tree, text)
        total += len(expected)
    assert total >= 200


@pytest.mark.parametrize("sdist", ["attrs_src", "marshmallow_src"])
def test_rst_parser_matches_docutils(sdist: str, request: pytest.FixtureRequest) -> None:
    root: Path = request.getfixturevalue(sdist)
    files = _doc_files(root, ".rst")
    assert files
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        tree = RstParser().parse(rel, text, "rst")
        _assert_consistent(tree, text)
        try:
            expected = _docutils_sections(text)
        except Exception:  # noqa: BLE001 - a Sphinx-only construct docutils cannot read: tree checks still ran
            continue
        got = [(n.level, n.name, n.body_start_line - 1) for n in tree.nodes[1:]]  # type: ignore[operator]
        assert got == expected, rel
        compared += 1
    assert compared == len(files)


@pytest.mark.parametrize(
    ("path", "level", "name", "start", "body_start", "end", "parent_name"),
    [
        ("README.md", 2, "Sponsors", 26, 27, 59, "README.md"),
        ("README.md", 2, "Example", 60, 61, 133, "README.md"),
        ("README.md", 3, "Hate Type Annotations!?", 118, 119, 133, "Example"),
        ("README.md", 2, "Data Classes", 134, 135, 142, "README.md"),
        ("README.md", 3, "attrs for Enterprise", 154, 155, 159, "Project Information"),
        ("docs/overview.md", 2, "What attrs Is Not", 50, 51, 71, "Overview"),
        ("docs/api.rst", 1, "API Reference", 1, 3, 763, "api.rst"),
        ("docs/api.rst", 2, "Core", 21, 23, 98, "API Reference"),
        ("docs/api.rst", 2, "Validators", 307, 309, 631, "API Reference"),
        ("docs/api-attr.rst", 1, "API Reference for the attr Namespace", 1, 3, 248, "api-attr.rst"),
    ],
)
def test_doc_parsers_known_attrs_headings(
    attrs_src: Path, path: str, level: int, name: str, start: int, body_start: int, end: int, parent_name: str
) -> None:
    text = (attrs_src / path).read_text(encoding="utf-8")
    parser = MarkdownParser() if path.endswith(".md") else RstParser()
    tree = parser.parse(path, text, "markdown" if path.endswith(".md") else "rst")
    (node,) = [n for n in tree.nodes if n.name == name]
    assert (node.level, node.start_line, node.body_start_line, node.end_line) == (
        level,
        start,
        body_start,
        end,
    )
    assert tree.nodes[node.parent].name == parent_name  # type: ignore[index]


def test_markdown_parser_attrs_glossary_terms(attrs_src: Path) -> None:
    tree = MarkdownParser().parse(
        "docs/glossary.md", (attrs_src / "docs/glossary.md").read_text(), "markdown"
    )
    assert [(e.name, e.start_line, e.end_line) for e in tree.entities] == [
        ("dunder methods", 4, 11),
        ("dict classes", 14, 18),
        ("slotted classes", 21, 105),
        ("field", 108, 118),
        ("attribute", 120, 121),
    ]
    assert tree.entities[0].detail.startswith('"Dunder" is a contraction of "double underscore".')
