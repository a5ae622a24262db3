"""Pieces shared by the Markdown and reStructuredText parsers: anchors, the heading tree, glossary terms.

Both parsers find their headings their own way, then hand ``HeadingDraft`` records to ``build_tree``, which
fills in what depends only on the order and levels of headings: parents, section end lines and unique anchors.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from sift.models import DocumentTree, NodeKind, ParsedEntity, ParsedNode, SourceType

DETAIL_LIMIT = 300
TERM_NAME_LIMIT = 120

_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
_SPACES = re.compile(r"\s+")


@dataclass(slots=True)
class HeadingDraft:
    """A heading as a parser found it, before parents, ends and anchors are known."""

    level: int
    name: str
    start_line: int
    body_start_line: int
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RawTerm:
    """A definition-list item as written: the term line and its indented definition lines."""

    term: str
    definition: list[str]
    start_line: int
    end_line: int


def slugify(title: str) -> str:
    """GitHub-style anchor: lowercase, punctuation except ``-``/``_`` removed, spaces to ``-``."""
    return _SLUG_DROP.sub("", title.strip().lower()).replace(" ", "-")


def unique_anchor(slug: str, seen: set[str]) -> str:
    """``slug`` itself the first time, then ``slug-1``, ``slug-2``… (GitHub's rule for repeated titles)."""
    anchor, n = slug, 0
    while anchor in seen:
        n += 1
        anchor = f"{slug}-{n}"
    seen.add(anchor)
    return anchor


def collapse(text: str) -> str:
    """Whitespace runs (newlines included) to single spaces, stripped."""
    return _SPACES.sub(" ", text).strip()


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    """Collapse whitespace and cut to at most ``limit`` characters, at a word boundary when possible."""
    text = collapse(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def root_node(path: str, n_lines: int, meta: dict[str, Any] | None = None) -> ParsedNode:
    """The ``document`` node spanning the whole file (an empty file still spans line 1)."""
    return ParsedNode(
        index=0,
        kind=NodeKind.DOCUMENT,
        name=PurePosixPath(path).name,
        qualified_name=path,
        start_line=1,
        end_line=max(1, n_lines),
        level=0,
        meta=meta or {},
    )


def build_tree(
    path: str, headings: Sequence[HeadingDraft], n_lines: int, root_meta: dict[str, Any] | None = None
) -> list[ParsedNode]:
    """Root plus one node per heading (in document order) with parent, end line and unique anchor filled in.

    A section ends on the line before the next heading of the same or a higher level (smaller or equal level
    number), or on the last line of the file.
    """
    nodes = [root_node(path, n_lines, root_meta)]
    seen: set[str] = set()
    stack: list[ParsedNode] = []
    for h in headings:
        while stack and stack[-1].level >= h.level:
            stack.pop().end_line = h.start_line - 1
        anchor = unique_anchor(slugify(h.name), seen)
        node = ParsedNode(
            index=len(nodes),
            kind=NodeKind.HEADING,
            name=h.name,
            qualified_name=f"{path}#{anchor}",
            start_line=h.start_line,
            end_line=nodes[0].end_line,
            parent=stack[-1].index if stack else 0,
            level=h.level,
            anchor=anchor,
            body_start_line=h.body_start_line,
            meta=h.meta,
        )
        nodes.append(node)
        stack.append(node)
    return nodes


def section_index(nodes: Sequence[ParsedNode], line: int) -> int:
    """Index of the innermost node whose section contains ``line`` (0 before the first heading)."""
    starts = [n.start_line for n in nodes[1:]]
    return bisect.bisect_right(starts, line)


def attach_sections(nodes: Sequence[ParsedNode], entities: list[ParsedEntity]) -> list[ParsedEntity]:
    """Set each entity's ``node`` to the section it sits in, and order entities by line."""
    for entity in entities:
        entity.node = section_index(nodes, entity.start_line)
    return sorted(entities, key=lambda e: (e.start_line, e.name))


def document_tree(path: str, language: str, parser: str, nodes: list[ParsedNode],
                  entities: list[ParsedEntity]) -> DocumentTree:
    """A documentation file's tree: its heading nodes, with each entity attached to its section."""
    return DocumentTree(path=path, language=language, source_type=SourceType.DOC, nodes=nodes,
                        entities=attach_sections(nodes, entities), parser=parser)


def indent_of(line: str) -> int:
    """Leading whitespace width (tabs count as 8, as docutils expands them)."""
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def definition_terms(
    lines: Sequence[str], first_line: int, is_term_line: Callable[[str], bool]
) -> list[RawTerm]:
    """Definition-list items: a line after a blank (or the start), followed directly by more-indented lines.

    ``lines`` are consecutive lines of one block whose first is line ``first_line`` of the file. An item's
    definition is skipped as a whole, so lines inside it are never taken for terms. ``is_term_line`` rejects
    lines that only look like terms (list bullets, directives, field markers…).
    """
    terms: list[RawTerm] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        prev_blank = i == 0 or not lines[i - 1].strip()
        nxt = lines[i + 1] if i + 1 < n else ""
        if not (
            line.strip()
            and prev_blank
            and nxt.strip()
            and indent_of(nxt) > indent_of(line)
            and is_term_line(line.strip())
        ):
            i += 1
            continue
        base = indent_of(line)
        j = i + 1
        while j < n and (not lines[j].strip() or indent_of(lines[j]) > base):
            j += 1
        last = j - 1
        while last > i and not lines[last].strip():
            last -= 1
        terms.append(
            RawTerm(
                line.strip(),
                [ln.strip() for ln in lines[i + 1 : last + 1]],
                first_line + i,
                first_line + last,
            )
        )
        i = j
    return terms
