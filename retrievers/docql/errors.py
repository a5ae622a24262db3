"""Query errors that point at a column: the message repeats the query with a caret under the problem."""

from __future__ import annotations

from sift.errors import InvalidQuery


def format_error(query: str, index: int, message: str) -> str:
    """``message`` followed by the query line and a caret under character ``index`` (0-based)."""
    line_start = query.rfind("\n", 0, index) + 1
    line_end = query.find("\n", index)
    line = query[line_start : line_end if line_end != -1 else len(query)]
    return f"{message}\n  {line}\n  {' ' * (index - line_start)}^"


def query_error(query: str, index: int, message: str) -> InvalidQuery:
    """An ``InvalidQuery`` at 0-based ``index`` of ``query`` (reported as the 1-based column)."""
    col = index + 1
    text = f"DocQL error at column {col}: {message}"
    return InvalidQuery(format_error(query, index, text) if query else text, position=col)
