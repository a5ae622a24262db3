"""What a chat model says about a file's definitions, checked: its answer parsed, each item kept only when its range
lies inside the file, its name appears on or near its start line and its nesting is consistent, then built into a
document tree. Pure functions of the answer and the file's lines (the model itself: ``llm.py``)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ValidationError

from sift.ingest.parsers.text import line_count
from sift.models import CONTAINER_KINDS, DocumentTree, NodeKind, ParsedEntity, ParsedNode, SourceType

NEAR_LINES = 3  # how far below its start line a symbol's name may appear (decorators, attributes, comments)
_CONTAINERS = frozenset(k.value for k in CONTAINER_KINDS)
_KINDS = {k: k for k in (*_CONTAINERS, "function", "method")} | {
    "def": "function", "fn": "function", "func": "function", "procedure": "function", "subroutine": "function",
    "constructor": "method", "object": "class", "impl": "class", "protocol": "interface", "record": "struct",
}
_PREFIX_LINE = re.compile(r"\s*(@|#\[|\[[A-Z]|///?|#|/\*|\*|--)")


class BoundaryItem(BaseModel):
    """One definition as the model reports it (nothing here is trusted yet)."""

    name: str
    kind: str
    start_line: int
    end_line: int
    parent: str | None = None


class BoundaryAnswer(BaseModel):
    """The model's whole answer for one excerpt."""

    items: list[BoundaryItem]


RESPONSE_FORMAT = {"type": "json_schema",
                   "json_schema": {"name": "boundaries", "schema": BoundaryAnswer.model_json_schema()}}


@dataclass(frozen=True, slots=True)
class Boundary:
    """A validated definition; ``parent`` is an index into the same list (parents come first)."""

    name: str
    kind: str
    start_line: int
    end_line: int
    parent: int | None = None


class InvalidAnswer(ValueError):
    """The reply is not JSON of the expected shape."""


def number_lines(lines: Sequence[str], start: int, end: int) -> str:
    """Lines ``start..end`` (1-based, inclusive), each prefixed with its number."""
    return "\n".join(f"{n}| {lines[n - 1]}" for n in range(start, end + 1))


def windows(n_lines: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Overlapping 1-based line windows covering ``1..n_lines``."""
    if n_lines <= 0:
        return []
    size, step = max(1, size), max(1, size - max(0, min(overlap, size - 1)))
    out = [(1, min(size, n_lines))]
    while out[-1][1] < n_lines:
        start = out[-1][0] + step
        out.append((start, min(start + size - 1, n_lines)))
    return out


def parse_answer(content: Any) -> tuple[list[BoundaryItem], int]:
    """The items of a reply (an object with ``items`` or a bare list) and how many items were malformed."""
    text = content if isinstance(content, str) else json.dumps(content)
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidAnswer(f"reply is not JSON: {text[:80]!r}") from exc
    raw = data.get("items") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise InvalidAnswer("reply has no list of items")
    items, bad = [], 0
    for entry in raw:
        try:
            items.append(BoundaryItem.model_validate(entry))
        except ValidationError:
            bad += 1
    return items, bad


def _short(name: str) -> str:
    return re.split(r"\.|::|:|#|->", name)[-1]


def name_near(name: str, lines: Sequence[str], start: int) -> bool:
    """Whether ``name``'s last segment appears as a word on ``start`` or a few lines around it."""
    short = _short(name)
    if not short:
        return False
    n, depth = start, 0
    while n <= len(lines) and (depth > 0 or _PREFIX_LINE.match(lines[n - 1])):  # decorators, attributes, comments
        depth = max(0, depth + sum(map(lines[n - 1].count, "([{")) - sum(map(lines[n - 1].count, ")]}")))
        n += 1
    hi = n + NEAR_LINES
    word = re.compile(rf"(?<![\w$]){re.escape(short)}(?![\w$])")
    return any(word.search(lines[n - 1]) for n in range(max(1, start - 1), min(hi, len(lines)) + 1))


def validate_items(items: Iterable[BoundaryItem], lines: Sequence[str]) -> tuple[list[Boundary], Counter[str]]:
    """Keep the believable items in pre-order with parents resolved; count the rest by reason."""
    dropped: Counter[str] = Counter()
    seen: set[tuple[int, int]] = set()
    cands: list[tuple[BoundaryItem, str, str]] = []
    for it in items:
        kind = _KINDS.get(it.kind.strip().lower())
        name = re.sub(r"\s*\(.*", "", it.name).strip()
        if kind is None:
            dropped["kind"] += 1
        elif it.start_line > it.end_line:
            dropped["reversed"] += 1
        elif it.start_line < 1 or it.end_line > len(lines):
            dropped["out_of_file"] += 1
        elif not name or not name_near(name, lines, it.start_line):
            dropped["name_not_near_start"] += 1
        elif (it.start_line, it.end_line) in seen:
            dropped["duplicate"] += 1
        else:
            seen.add((it.start_line, it.end_line))
            cands.append((it, kind, name))
    cands.sort(key=lambda c: (c[0].start_line, -c[0].end_line))
    names = {_short(name) for _, _, name in cands}
    out: list[Boundary] = []
    stack: list[int] = []
    for it, kind, name in cands:
        while stack and out[stack[-1]].end_line < it.start_line:
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None and it.end_line > out[parent].end_line:
            dropped["overlaps_sibling"] += 1
            continue
        if it.parent and not _parent_agrees(_short(it.parent), parent, out, names):
            dropped["nesting"] += 1
            continue
        pkind = out[parent].kind if parent is not None else None
        if kind == "function" and pkind in _CONTAINERS:
            kind = "method"
        elif kind == "method" and pkind not in _CONTAINERS:
            kind = "function"
        if parent is not None and name.startswith(out[parent].name + "."):
            name = name[len(out[parent].name) + 1:]
        stack.append(len(out))
        out.append(Boundary(name, kind, it.start_line, it.end_line, parent))
    return out, dropped


def _parent_agrees(claimed: str, parent: int | None, out: Sequence[Boundary], names: set[str]) -> bool:
    """A claimed parent must enclose the item, unless no reported item has that name."""
    chain = set()
    while parent is not None:
        chain.add(_short(out[parent].name))
        parent = out[parent].parent
    return claimed in chain or claimed not in names


def build_tree(path: str, language: str, text: str, bounds: Sequence[Boundary], parser: str = "llm") -> DocumentTree:
    """A code document tree (file → classes → methods) with one entity per definition."""
    lines = text.split("\n")
    root = ParsedNode(index=0, kind=NodeKind.FILE, name=PurePosixPath(path).name, qualified_name=path,
                      start_line=1, end_line=max(1, line_count(text)))
    tree = DocumentTree(path, language, SourceType.CODE, [root], parser=parser)
    quals: list[str] = []
    for i, b in enumerate(bounds, start=1):
        parent = tree.nodes[b.parent + 1] if b.parent is not None else root
        qual = f"{quals[b.parent]}.{b.name}" if b.parent is not None else b.name
        quals.append(qual)
        sig = next((lines[n - 1].strip() for n in range(b.start_line, min(b.end_line, b.start_line + 8) + 1)
                    if _short(b.name) in lines[n - 1] and not _PREFIX_LINE.match(lines[n - 1])), None)
        tree.nodes.append(ParsedNode(index=i, kind=NodeKind(b.kind), name=b.name, qualified_name=f"{path}::{qual}",
                                     start_line=b.start_line, end_line=b.end_line, parent=parent.index,
                                     level=parent.level + 1, signature=sig[:300] if sig else None))
        tree.entities.append(ParsedEntity(b.kind, b.name, b.start_line, b.end_line, node=i))
    return tree
