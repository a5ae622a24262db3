"""Turn rows into ``docql_result`` items: file text slices, code blocks, grep matches, outlines, grouping by file."""

from __future__ import annotations

import bisect
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


def grep_rows(
    conn: Connection, rows: Iterable[Row], pattern: Any, deadline: Deadline, texts: Texts
) -> Iterator[Row]:
    """One row per doc line the pattern matches (``^``/``$`` anchor at line ends), with its enclosing section."""
    for row in rows:
        content: str = row["content"]
        lines = texts.remember(row["file_id"], content)
        starts = [0]
        for i, ch in enumerate(content):
            if ch == "\n":
                starts.append(i + 1)
        hit_lines = sorted(
            {bisect.bisect_right(starts, m.start()) for m in deadline.finditer(pattern, content)}
        )
        hit_lines = [n for n in hit_lines if n <= len(lines)]
        if not hit_lines:
            continue
        sections = conn.execute(
            select(Node.name, Node.start_line, Node.end_line)
            .where(Node.file_id == row["file_id"], Node.kind == "heading")
            .order_by(Node.start_line)
        ).all()
        for n in hit_lines:
            inside = [s for s in sections if s.start_line <= n <= s.end_line]
            yield {
                "file_id": row["file_id"],
                "path": row["path"],
                "line": n,
                "start_line": n,
                "end_line": n,
                "text": lines[n - 1],
                "section": inside[-1].name if inside else None,
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
