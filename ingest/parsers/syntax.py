"""Tree-sitter syntax nodes: their source text and the lines they span."""

from __future__ import annotations

from tree_sitter import Node


def node_text(node: Node) -> str:
    """The node's source text (a tree parsed from bytes always has it)."""
    return (node.text or b"").decode("utf-8", "replace")


def end_line(node: Node) -> int:
    """1-based last line of a node (a node ending just after a newline ends on the line before)."""
    row, col = node.end_point
    return row if col == 0 and row > node.start_point.row else row + 1


def python_end_line(node: Node) -> int:
    """Last line of a Python definition as ``ast`` counts it: trailing comments in its blocks do not count."""
    while True:
        kids = node.children
        i = len(kids) - 1
        while i >= 0 and kids[i].type == "comment":
            i -= 1
        if i < 0 or kids[i].child_count == 0:
            return end_line(kids[i] if i >= 0 else node)
        node = kids[i]
