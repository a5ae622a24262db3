"""A definition the code query found, before it gets its place in the document tree.

Shared by the parser (``code``), which builds and arranges definitions, and the call-site pass (``calls``), which
places each call inside the innermost definition; keeping it here lets neither import the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node


@dataclass(slots=True, eq=False)
class Definition:
    """A definition found by the query, before it gets its place in the tree."""

    kind: str
    node: Node
    outer: Node
    name_node: Node
    name: str
    receiver: str | None = None
    parent: Definition | None = None
    alias: Definition | None = None  # an `impl X` block merged into X's node
    first: Node | None = None  # the first of the overload signatures this definition absorbed (``_merge_overloads``)
    declaration: bool = False  # declares a type and implements nothing (``code._declares_only``)
    children: list[Definition] = field(default_factory=list)
    index: int = 0
    level: int = 1
    qual: str = ""
    prefix: str | None = None
