"""Turn rows into ``docql_result`` items: file text slices, code blocks, grep matches, outlines, grouping by file."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, select

from sift.db.tables import File, Node
from sift.retrievers.docql.ast import Query
from sift.retrievers.docql.regex import Deadline
from sift.text import split_lines

MAX_TEXT_LINES = 400
Row = dict[str, Any]


class Texts:
    """File contents of one query, loaded on demand (one SELECT per batch of files) and split into lines."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._lines: dict[int, list[str]] = {}

    def remember(self, file_id: int, content: str) -> list[str]:
        """Cache ``content`` already fetched for ``file_id``."""
        return self._lines.setdefault(file_id, split_lines(content))

    def prefetch(self, file_ids: Iterable[int]) -> None:
        """Load the contents of every file in ``file_ids`` not loaded yet, in one query."""
        missing = sorted({i for i in file_ids if i not in self._lines})
        if missing:
            for fid, content in self.conn.execute(select(File.id, File.content).where(File.id.in_(missing))):
                self.remember(fid, content)

    def lines(self, file_id: int) -> list[str]:
        """All lines of a file."""
        self.prefetch([file_id])
        return self._lines.get(file_id, [])

    def span(self, file_id: int, start: int, end: int, cap: int | None = MAX_TEXT_LINES) -> tuple[str, bool]:
        """Lines ``start``..``end`` (1-based, inclusive), at most ``cap`` of them; and whether it was cut."""
        lines = self.lines(file_id)[max(start, 1) - 1 : max(end, start)]
        if cap is not None and len(lines) > cap:
            return "\n".join(lines[:cap]) + f"\n… ({len(lines) - cap} more lines)", True
        return "\n".join(lines), False

    def field_text(self, record: str, row: Row, name: str) -> str | None:
        """The value of a text field (``content``/``source``) of a row, uncapped, for filters."""
        if record == "file":
            return "\n".join(self.lines(row["file_id"]))
        if record == "call":
            return self.span(row["file_id"], row["line"], row["line"], None)[0]
        if record in ("heading", "code"):
            return self.span(row["file_id"], row["start_line"], row["end_line"], None)[0]
        return None


def expand_codeblocks(rows: Iterable[Row], texts: Texts) -> Iterator[Row]:
    """One row per fenced/literal code block recorded in heading metadata, ordered by path and line."""
    blocks: dict[tuple[str, int], Row] = {}
    for row in rows:
        for cb in (row.get("meta") or {}).get("codeblocks") or []:
            start, end = int(cb["start_line"]), int(cb["end_line"])
            key = (row["path"], start)
            if key not in blocks:
                source, _ = texts.span(row["file_id"], start, end)
                lang = cb.get("lang") or None
                blocks[key] = {
                    "file_id": row["file_id"],
                    "node_id": row["id"],
                    "path": row["path"],
                    "lang": lang,
                    "language": lang,
                    "heading": row["name"],
                    "start_line": start,
                    "end_line": end,
                    "line": start,
                    "source": source,
                }
    return iter(blocks[k] for k in sorted(blocks))


class Sections:
    """The headings of one file, for "which section holds line N" by bisection instead of a scan per line."""

    def __init__(self, headings: Iterable[tuple[str, int, int]]) -> None:
        ordered = sorted(headings, key=lambda h: (h[1], -h[2]))
        self.names = [h[0] for h in ordered]
        self.starts = [h[1] for h in ordered]
        self.ends = [h[2] for h in ordered]
        # outer[i]: the nearest earlier heading whose section still holds heading i's first line (-1: none).
        self.outer: list[int] = []
        open_: list[int] = []
        for i, start in enumerate(self.starts):
            while open_ and self.ends[open_[-1]] < start:
                open_.pop()
            self.outer.append(open_[-1] if open_ else -1)
            open_.append(i)

    def at(self, line: int) -> str | None:
        """The title of the innermost section holding ``line``, or None before the first heading."""
        i = bisect.bisect_right(self.starts, line) - 1
        while i >= 0 and self.ends[i] < line:
            i = self.outer[i]
        return self.names[i] if i >= 0 else None


def grep_rows(
    conn: Connection, rows: Iterable[Row], pattern: Any, deadline: Deadline, texts: Texts
) -> Iterator[Row]:
    """One row per doc line the pattern matches (``^``/``$`` anchor at line ends), with its enclosing section.

    Rows stream in file and line order, so a caller that needs only the first few stops early; the shared
    ``deadline`` is checked at every file and every matching line, and raises ``QueryTimeout`` once spent.
    """
    for row in rows:
        deadline.remaining()
        content: str = row["content"]
        lines = texts.remember(row["file_id"], content)
        starts = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
        sections: Sections | None = None
        pos = 0
        while (m := deadline.search_from(pattern, content, pos)) is not None:
            n = bisect.bisect_right(starts, m.start())
            if n > len(lines):
                break
            pos = starts[n]  # one row per line: go on at the next line
            if sections is None:
                sections = Sections(
                    (h.name, h.start_line, h.end_line)
                    for h in conn.execute(
                        select(Node.name, Node.start_line, Node.end_line).where(
                            Node.file_id == row["file_id"], Node.kind == "heading"
                        )
                    )
                )
            yield {
                "file_id": row["file_id"],
                "path": row["path"],
                "line": n,
                "start_line": n,
                "end_line": n,
                "text": lines[n - 1],
                "section": sections.at(n),
            }


def _include_text(q: Query) -> bool:
    if q.record == "heading":
        return q.root == "content" or q.projection is not None
    if q.record == "code":
        return bool(q.selector and q.selector.is_call) or q.projection is not None
    return q.record == "call" or q.projection is not None


def _item(q: Query, row: Row, texts: Texts, with_text: bool) -> Row:
    r = q.record
    if r == "heading":
        item = {"type": "heading", "text": row["name"], "level": row["level"], "anchor": row["anchor"]}
    elif r in ("code", "outline"):
        item = {
            "type": row["kind"],
            "name": row["name"],
            "qualified_name": row["qualified_name"],
            "level": row["level"],
        }
        if row.get("signature"):
            item["signature"] = row["signature"]
    elif r == "call":
        item = {
            "type": "call",
            "name": row["callee"],
            "caller": row["caller_name"],
            "callee_qualified": row["callee_qualified"],
        }
    elif r == "file":
        item = {
            "type": "file",
            "name": row["path"].rsplit("/", 1)[-1],
            "language": row["language"],
            "source_type": row["source_type"],
            "line_count": row["line_count"],
        }
    elif r == "entity":
        item = {"type": row["type"], "name": row["name"], "detail": row["detail"]}
    elif r == "codeblock":
        item = {"type": "codeblock", "lang": row["lang"], "heading": row["heading"], "source": row["source"]}
    else:
        item = {"type": "match", "text": row["text"], "section": row["section"]}
    start: int = row["start_line"] if "start_line" in row else row.get("line", 1)
    end: int
    if "end_line" in row:
        end = row["end_line"]
    elif "line" in row:
        end = row["line"]
    else:
        end = max(1, row.get("line_count") or 1)
    if r == "file":
        start, end = 1, max(1, row["line_count"])
    item.update({"line": start, "start_line": start, "end_line": end})
    node_id = row.get("node_id", row.get("id") if r in ("heading", "code", "outline") else None)
    if node_id is not None:
        item["node_id"] = node_id
    if with_text and r not in ("codeblock", "match"):
        key = "content" if r in ("heading", "file") else "source"
        text, cut = texts.span(row["file_id"], start, end)
        item[key] = text
        if cut:
            item["text_truncated"] = True
    return item


def build_items(q: Query, rows: list[Row], texts: Texts) -> list[tuple[str, Row]]:
    """``(path, item)`` pairs in result order; an outline ``tree()`` nests children under their parents."""
    with_text = _include_text(q)
    if with_text:
        texts.prefetch(row["file_id"] for row in rows)
    pairs = [(row["path"], _item(q, row, texts, with_text)) for row in rows]
    if q.record == "outline" and q.selector and q.selector.name == "tree":
        by_id = {row["id"]: item for row, (_, item) in zip(rows, pairs, strict=True)}
        top: list[tuple[str, Row]] = []
        for row, (path, item) in zip(rows, pairs, strict=True):
            item["children"] = item.get("children", [])
            parent = by_id.get(row["parent_id"])
            if parent is not None:
                parent.setdefault("children", []).append(item)
            else:
                top.append((path, item))
        return top
    return pairs


def group_by_file(pairs: list[tuple[str, Row]]) -> dict[str, list[Row]]:
    """Items grouped under their file path, keeping result order (path, then line)."""
    files: dict[str, list[Row]] = {}
    for path, item in pairs:
        files.setdefault(path, []).append(item)
    return files
