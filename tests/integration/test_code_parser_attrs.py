"""Every Python file of the attrs sdist: tree-sitter definitions agree exactly with Python's own ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sift.ingest.parsers.code import CodeParser
from sift.models import NodeKind

DEF_KINDS = {NodeKind.CLASS, NodeKind.FUNCTION, NodeKind.METHOD}


def ast_definitions(source: str, rel: str) -> list[tuple[str, str, int, int]]:
    """(name, qualified name, first line incl. decorators, last line) for every def/class at any depth."""
    out: list[tuple[str, str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}.{child.name}" if prefix else child.name
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append((child.name, f"{rel}::{qual}", start, child.end_lineno or child.lineno))
                visit(child, qual)
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return sorted(out, key=lambda t: (t[2], t[1]))


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".complete" not in p.name)


def test_code_parser_matches_ast_on_every_attrs_file(attrs_src: Path) -> None:
    parser = CodeParser()
    files = python_files(attrs_src)
    assert len(files) > 40
    mismatches: dict[str, tuple[list, list]] = {}
    total = 0
    for path in files:
        rel = path.relative_to(attrs_src).as_posix()
        source = path.read_text(encoding="utf-8")
        expected = ast_definitions(source, rel)
        tree = parser.parse(rel, source, "python")
        got = sorted(
            ((n.name, n.qualified_name, n.start_line, n.end_line) for n in tree.nodes if n.kind in DEF_KINDS),
            key=lambda t: (t[2], t[1]),
        )
        total += len(expected)
        if got != expected:
            mismatches[rel] = (sorted(set(expected) - set(got)), sorted(set(got) - set(expected)))
    assert total > 1000
    assert mismatches == {}


@pytest.mark.parametrize("rel", ["src/attr/_make.py", "src/attr/validators.py"])
def test_code_parser_attrs_tree_is_well_formed(attrs_src: Path, rel: str) -> None:
    source = (attrs_src / rel).read_text(encoding="utf-8")
    tree = CodeParser().parse(rel, source, "python")
    assert tree.nodes[0].kind == NodeKind.FILE and tree.nodes[0].end_line == len(source.splitlines())
    for node in tree.nodes[1:]:
        parent = tree.nodes[node.parent]
        assert node.parent < node.index and node.level == parent.level + 1
        assert parent.start_line <= node.start_line <= node.end_line <= parent.end_line
        expected_kind = NodeKind.METHOD if parent.kind == NodeKind.CLASS else node.kind
        if node.kind in (NodeKind.FUNCTION, NodeKind.METHOD):
            assert node.kind == expected_kind
    callers = {ref.caller for ref in tree.refs}
    assert callers <= set(range(len(tree.nodes)))
