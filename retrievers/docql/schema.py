"""What DocQL knows by name: roots, their selectors (collections and functions) and the fields of each record.

This is the whitelist: the parser rejects any root, selector or field not listed here, and the compiler maps only
these names to columns. Field types are ``str`` or ``int``; fields marked as text are read from file content in
Python (``content``, ``source``), never from an indexed column.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SelectorSpec:
    """A selector after a root: ``is_call`` functions take ``min_args``..``max_args`` string arguments."""

    name: str
    is_call: bool
    record: str
    min_args: int = 0
    max_args: int = 0
    regex_arg: bool = False


_NODE_FIELDS = {
    "name": "str",
    "qualified_name": "str",
    "kind": "str",
    "type": "str",
    "level": "int",
    "path": "str",
    "language": "str",
    "source_type": "str",
    "start_line": "int",
    "end_line": "int",
    "line": "int",
    "parent": "str",
}

FIELDS: dict[str, dict[str, str]] = {
    "heading": {
        **_NODE_FIELDS,
        "title": "str",
        "text": "str",
        "anchor": "str",
        "body_start_line": "int",
        "content": "str",
    },
    "code": {**_NODE_FIELDS, "depth": "int", "signature": "str", "docstring": "str", "source": "str"},
    "outline": {**_NODE_FIELDS, "depth": "int", "title": "str", "signature": "str"},
    "call": {
        "name": "str",
        "callee": "str",
        "callee_name": "str",
        "callee_qualified": "str",
        "caller": "str",
        "path": "str",
        "line": "int",
        "start_line": "int",
        "end_line": "int",
        "source": "str",
    },
    "file": {
        "path": "str",
        "language": "str",
        "source_type": "str",
        "line_count": "int",
        "size_bytes": "int",
        "parser": "str",
        "content": "str",
    },
    "entity": {
        "name": "str",
        "type": "str",
        "kind": "str",
        "detail": "str",
        "path": "str",
        "start_line": "int",
        "end_line": "int",
        "line": "int",
    },
    "codeblock": {
        "lang": "str",
        "language": "str",
        "path": "str",
        "heading": "str",
        "start_line": "int",
        "end_line": "int",
        "line": "int",
        "source": "str",
    },
    "match": {
        "path": "str",
        "line": "int",
        "start_line": "int",
        "end_line": "int",
        "text": "str",
        "section": "str",
    },
}

_HEADING_FUNCS = [SelectorSpec("heading", True, "heading", 1, 1)] + [
    SelectorSpec(f"h{n}", True, "heading", 1, 1) for n in range(1, 7)
]

SELECTORS: dict[str, dict[str, SelectorSpec]] = {
    "toc": {},
    "content": {
        s.name: s
        for s in [
            *_HEADING_FUNCS,
            SelectorSpec("grep", True, "match", 1, 2, regex_arg=True),
            SelectorSpec("codeblock", False, "codeblock"),
            SelectorSpec("codeblocks", False, "codeblock"),
        ]
    },
    "code": {
        s.name: s
        for s in [
            SelectorSpec("classes", False, "code"),
            SelectorSpec("functions", False, "code"),
            SelectorSpec("methods", False, "code"),
            SelectorSpec("class", True, "code", 1, 1),
            SelectorSpec("function", True, "code", 1, 1),
            SelectorSpec("method", True, "code", 1, 1),
            SelectorSpec("query", True, "code", 1, 1),
            SelectorSpec("callers", True, "call", 1, 1),
            SelectorSpec("calls", True, "call", 1, 1),
        ]
    },
    "files": {},
    "entities": {},
    "structure": {
        s.name: s
        for s in [SelectorSpec("tree", True, "outline", 0, 1), SelectorSpec("flat", True, "outline", 0, 1)]
    },
}

# The record a root yields when no selector follows it.
ROOT_RECORD = {"toc": "heading", "content": "heading", "code": "code", "files": "file", "entities": "entity"}

PROJECTIONS = frozenset({"source", "content", "text"})


def selector_label(spec: SelectorSpec) -> str:
    """How a selector is written, for error messages: ``class("…")`` or ``classes``."""
    return f"{spec.name}(…)" if spec.is_call else spec.name
