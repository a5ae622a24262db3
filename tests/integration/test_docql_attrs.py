"""DocQL on a real repository from PyPI (attrs): every class ``ast`` finds, every top-level doc heading."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from docutils import nodes as du_nodes
from docutils.core import publish_doctree
from markdown_it import MarkdownIt
from sqlalchemy import Engine

from sift.config import Settings
from sift.db import open_database
from sift.ingest.pipeline import ingest
from sift.retrievers.docql import execute, resolve_kb


@pytest.fixture(scope="module")
def attrs_kb(attrs_src: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, int, int]:
    """The attrs sdist ingested by the real pipeline."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("docql_attrs"))
    ingest(settings, attrs_src, "attrs", build_index=False)
    engine = open_database(settings)
    kb_id, generation = resolve_kb(engine, "attrs")
    return engine, kb_id, generation


def _ast_classes(root: Path) -> list[tuple[str, str, int, int]]:
    """(path, name, first line including decorators, last line) of every class in every .py/.pyi file."""
    found = []
    for file in sorted(root.rglob("*.py*")):
        if file.suffix not in (".py", ".pyi"):
            continue
        rel = file.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found.append((rel, node.name, start, node.end_lineno or node.lineno))
    return found


def test_docql_class_finds_every_ast_class(attrs_kb: tuple[Engine, int, int], attrs_src: Path) -> None:
    engine, kb_id, generation = attrs_kb
    expected = _ast_classes(attrs_src)
    assert len(expected) > 100
    missing = []
    for path, name, start, end in expected:
        result = execute(engine, kb_id, generation, f'$.code.class("{name}")', limit=200)
        spans = {(item["start_line"], item["end_line"]) for item in result["files"].get(path, [])}
        if (start, end) not in spans:
            missing.append((path, name, start, end, sorted(spans)))
    assert missing == []


def _markdown_h1(root: Path) -> set[tuple[str, str, int]]:
    md = MarkdownIt("commonmark")
    out = set()
    for file in sorted(root.rglob("*.md")):
        tokens = md.parse(file.read_text(encoding="utf-8"))
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and tok.tag == "h1" and tok.map:
                text = "".join(
                    c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline")
                )
                out.add((file.relative_to(root).as_posix(), text.strip(), tok.map[0] + 1))
    return out


def _rst_top_titles(root: Path) -> set[tuple[str, str]]:
    out = set()
    overrides = {"report_level": 5, "halt_level": 5, "doctitle_xform": False, "file_insertion_enabled": False}
    for file in sorted(root.rglob("*.rst")):
        tree = publish_doctree(file.read_text(encoding="utf-8"), settings_overrides=overrides)
        for section in tree.children:
            if isinstance(section, du_nodes.section):
                out.add(
                    (file.relative_to(root).as_posix(), section.next_node(du_nodes.title).astext().strip())
                )
    return out


def test_docql_toc_level_one_is_every_top_heading(attrs_kb: tuple[Engine, int, int], attrs_src: Path) -> None:
    engine, kb_id, generation = attrs_kb
    result = execute(engine, kb_id, generation, "$.toc[?(@.level == 1)]", limit=1000)
    got = {(path, item["text"], item["line"]) for path, items in result["files"].items() for item in items}
    assert result["truncated"] is False
    md = {g for g in got if g[0].endswith(".md")}
    assert md == _markdown_h1(attrs_src)
    rst = {(p, t) for p, t, _ in got if p.endswith(".rst")}
    assert rst == _rst_top_titles(attrs_src)
