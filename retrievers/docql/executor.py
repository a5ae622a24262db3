"""Run a DocQL query: compile, fetch rows, re-check in Python where SQL could not decide, window, group by file."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from sift.db.tables import File
from sift.models import Filters
from sift.retrievers.docql.ast import And, Compare, Expr, Not, Or, Query, Regex, Truthy, Window
from sift.retrievers.docql.compiler import Plan, compile_query, row_key
from sift.retrievers.docql.errors import query_error
from sift.retrievers.docql.matching import ascii_lower, fuzzy_headings
from sift.retrievers.docql.parser import parse
from sift.retrievers.docql.regex import Deadline, QueryTimeout, compile_regex
from sift.retrievers.docql.results import Texts, build_items, expand_codeblocks, grep_rows, group_by_file

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000


def window_bounds(window: Window | None, n: int) -> tuple[int, int]:
    """``[start, stop)`` of ``n`` ordered results selected by ``[i]`` / ``[a:b]`` (negative counts from the end)."""
    if window is None:
        return 0, n
    if window.single:
        assert window.start is not None
        i = window.start if window.start >= 0 else n + window.start
        return (i, i + 1) if 0 <= i < n else (0, 0)
    start, stop, _ = slice(window.start, window.stop).indices(n)
    return start, max(start, stop)


def _compare(value: Any, op: str, target: Any, pattern: Any, deadline: Deadline) -> bool:
    if target is None:
        return (value is None) == (op == "==")
    if isinstance(target, bool):
        return bool(value) == target if op == "==" else bool(value) != target
    if op == "!=":
        return value is None or value != target
    if value is None:
        return False
    if op == "=~":
        return deadline.search(pattern, str(value))
    if op == "~=":
        return ascii_lower(target) in ascii_lower(str(value))
    if op == "startsWith":
        return str(value).startswith(target)
    if op == "endsWith":
        return str(value).endswith(target)
    return {
        "==": value == target,
        ">": value > target,
        ">=": value >= target,
        "<": value < target,
        "<=": value <= target,
    }[op]


class _Evaluator:
    """Evaluates filter expressions on one row at a time, reading text fields lazily."""

    def __init__(self, query: Query, table: str, texts: Texts, deadline: Deadline) -> None:
        self.query, self.table, self.texts, self.deadline = query, table, texts, deadline
        self.patterns: dict[int, Any] = {}

    def value(self, row: dict[str, Any], name: str) -> Any:
        key = row_key(self.table, name)
        if key in row:
            return row[key]
        return self.texts.field_text(self.query.record, row, name)

    def pattern(self, c: Compare) -> Any:
        if id(c) not in self.patterns:
            rx = c.value if isinstance(c.value, Regex) else Regex(str(c.value), "", c.value_pos)
            self.patterns[id(c)] = compile_regex(rx.pattern, rx.flags, query=self.query.text, position=rx.pos)
        return self.patterns[id(c)]

    def __call__(self, e: Expr, row: dict[str, Any]) -> bool:
        if isinstance(e, Compare):
            self.deadline.position = e.value_pos
            pattern = self.pattern(e) if e.op == "=~" else None
            return _compare(self.value(row, e.field), e.op, e.value, pattern, self.deadline)
        if isinstance(e, Truthy):
            return bool(self.value(row, e.field))
        if isinstance(e, Not):
            return not self(e.operand, row)
        if isinstance(e, And):
            return all(self(x, row) for x in e.operands)
        assert isinstance(e, Or)
        return any(self(x, row) for x in e.operands)


def _apply_scope(plan: Plan, scope: Filters | None) -> str | None:
    """Restrict the plan to a channel's metadata filters; returns a path glob left for Python."""
    if scope is None:
        return None
    if scope.language:
        plan.stmt = plan.stmt.where(File.language == scope.language)
    if scope.source_type:
        plan.stmt = plan.stmt.where(File.source_type == str(scope.source_type))
    return scope.path_glob


def _candidates(
    conn: Connection, plan: Plan, q: Query, texts: Texts, deadline: Deadline
) -> Iterator[dict[str, Any]]:
    rows: Iterable[dict[str, Any]] = (dict(r) for r in conn.execute(plan.stmt).mappings())
    if plan.expand == "codeblock":
        return expand_codeblocks(rows, texts)
    if plan.expand == "grep":
        rx = plan.extra["pattern"]
        # grep is line-oriented: ^ and $ anchor at every line.
        pattern = compile_regex(
            rx.pattern, "".join(sorted(set(rx.flags + "m"))), query=q.text, position=rx.pos
        )
        deadline.position = rx.pos
        return grep_rows(conn, rows, pattern, deadline, texts)
    return iter(rows)


def _streamed_window(window: Window | None) -> tuple[int, float] | None:
    """``[start, stop)`` of a window that needs no count of the results first; None for negative bounds."""
    if window is None:
        return 0, math.inf
    if window.single:
        assert window.start is not None
        return (window.start, window.start + 1) if window.start >= 0 else None
    if (window.start or 0) < 0 or (window.stop is not None and window.stop < 0):
        return None
    start = window.start or 0
    return start, max(start, window.stop) if window.stop is not None else math.inf


def _select(
    conn: Connection, plan: Plan, q: Query, texts: Texts, deadline: Deadline, glob: str | None, limit: int
) -> tuple[list[dict[str, Any]], int, bool]:
    """Rows filtered in Python: the window's first ``limit``, the window's total, and whether the deadline cut it.

    Rows stream: only the ``limit`` kept are held, and the scan stops once the window is full. A grep that
    runs out of time answers what it found so far (``cut``); other queries fail with ``QueryTimeout``.
    """
    evaluate = _Evaluator(q, plan.table, texts, deadline)
    candidates = (
        row
        for row in _candidates(conn, plan, q, texts, deadline)
        if (glob is None or fnmatch.fnmatchcase(row["path"], glob)) and all(evaluate(f, row) for f in q.filters)
    )
    bounds = _streamed_window(q.window)
    whole = "heading" in plan.extra or bounds is None  # the window needs every result before it can pick
    start, stop = (0, math.inf) if whole or bounds is None else bounds
    kept: list[dict[str, Any]] = []
    seen, cut = 0, False
    try:
        for row in candidates:
            if start <= seen < stop and (whole or len(kept) < limit):
                kept.append(row)
            seen += 1
            if seen >= stop:
                break
    except QueryTimeout:
        if plan.expand != "grep":
            raise
        cut = True
    if not whole:
        return kept, max(0, seen - start), cut  # the loop stops at ``stop``
    if "heading" in plan.extra:
        kept = fuzzy_headings(kept, plan.extra["heading"])
    first, last = window_bounds(q.window, len(kept))
    return kept[first:last][:limit], last - first, cut


def run(
    conn: Connection,
    q: Query,
    kb_id: int,
    generation: int,
    *,
    limit: int = DEFAULT_LIMIT,
    scope: Filters | None = None,
) -> dict[str, Any]:
    """Execute a parsed query on an open connection."""
    if q.record == "outline" and q.projection:
        raise query_error(q.text, len(q.text) - 1, "$.structure outlines have no text: drop .source/.content")
    limit = max(1, min(int(limit), MAX_LIMIT))
    plan = compile_query(q, kb_id, generation)
    glob = _apply_scope(plan, scope)
    texts = Texts(conn)
    deadline = Deadline()
    cut = False
    if plan.exact and glob is None:
        n = conn.execute(select(func.count()).select_from(plan.stmt.order_by(None).subquery())).scalar_one()
        start, stop = window_bounds(q.window, n)
        take = min(stop - start, limit)
        rows = [dict(r) for r in conn.execute(plan.stmt.offset(start).limit(take)).mappings()] if take else []
        total = stop - start
    else:
        rows, total, cut = _select(conn, plan, q, texts, deadline, glob, limit)
    items = build_items(q, rows, texts)
    return {
        "type": "docql_result",
        "query": q.text,
        "files": group_by_file(items),
        "total": total,
        "truncated": cut or total > len(rows),
        "deadline_exceeded": cut,
    }


def execute(
    engine: Engine,
    kb_id: int,
    generation: int,
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    scope: Filters | None = None,
) -> dict[str, Any]:
    """Parse and run ``query`` against knowledge base ``kb_id`` at ``generation``; returns a ``docql_result``."""
    q = parse(query)
    with engine.connect() as conn:
        return run(conn, q, kb_id, generation, limit=limit, scope=scope)
