"""Compile a validated ``Query`` to one parameterised SQLAlchemy SELECT plus, where SQL cannot decide, a Python
predicate over the rows SQL already narrowed.

Filters become SQL over indexed columns (kind, name, path, level) whenever they can; regexes and text fields
(``content``/``source``) cannot, so the SQL keeps a superset (those atoms are dropped from ANDs, an OR or NOT that
contains one is not pushed down) and ``Plan.exact`` is False: the executor then re-checks the whole expression in
Python on each candidate row. User values are always bound parameters; column names come only from ``COLUMNS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, literal, not_, or_, select, true
from sqlalchemy.orm import aliased

from sift.db import json_array_len, str_position, visible_in
from sift.db.tables import Entity, File, Node, Ref
from sift.models import CALLABLE_KINDS, CONTAINER_KINDS
from sift.models import CODE_KINDS as MODEL_CODE_KINDS
from sift.retrievers.docql.ast import And, Compare, Expr, Not, Query, Regex, Truthy
from sift.retrievers.docql.matching import heading_words, name_conditions

CODE_KINDS = tuple(sorted(MODEL_CODE_KINDS))
CLASS_KINDS = tuple(sorted(CONTAINER_KINDS))
FUNCTION_KINDS = tuple(sorted(CALLABLE_KINDS))
OUTLINE_KINDS = (*CODE_KINDS, "heading")

Parent = aliased(Node, name="parent_node")

# Field name → row key, per record (aliases resolve here); fields missing from a row map are text fields.
ROW_KEYS: dict[str, dict[str, str]] = {
    "node": {"type": "kind", "title": "name", "text": "name", "line": "start_line", "depth": "level"},
    "call": {"name": "callee", "caller": "caller_name", "start_line": "line", "end_line": "line"},
    "file": {},
    "entity": {"kind": "type", "line": "start_line"},
}

_NODE_COLS = {
    c: getattr(Node, c)
    for c in [
        "id",
        "file_id",
        "parent_id",
        "path",
        "language",
        "source_type",
        "kind",
        "name",
        "qualified_name",
        "level",
        "start_line",
        "end_line",
        "body_start_line",
        "signature",
        "docstring",
        "anchor",
    ]
}
COLUMNS: dict[str, dict[str, Any]] = {
    "node": {**_NODE_COLS, "parent": Parent.name},
    "call": {
        c: getattr(Ref, c)
        for c in [
            "id",
            "file_id",
            "path",
            "caller_node_id",
            "caller_name",
            "callee",
            "callee_name",
            "callee_qualified",
            "line",
        ]
    },
    "file": {
        c: getattr(File, c)
        for c in ["id", "path", "language", "source_type", "line_count", "size_bytes", "parser"]
    }
    | {"file_id": File.id},
    "entity": {
        c: getattr(Entity, c)
        for c in ["id", "file_id", "node_id", "path", "type", "name", "detail", "start_line", "end_line"]
    },
}
NULLABLE = frozenset(
    {
        "body_start_line",
        "signature",
        "docstring",
        "anchor",
        "parent",
        "parent_id",
        "detail",
        "callee_qualified",
        "caller_name",
        "node_id",
    }
)
TABLE_OF_RECORD = {
    "heading": "node",
    "code": "node",
    "outline": "node",
    "call": "call",
    "file": "file",
    "entity": "entity",
    "codeblock": "node",
    "match": "file",
}


@dataclass
class Plan:
    """How to run a query: ordered candidate rows, and whether SQL alone decides membership."""

    stmt: Select[*tuple[Any, ...]]
    table: str
    exact: bool
    filters: tuple[Expr, ...] = ()
    refine: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    expand: str | None = None  # "codeblock" | "grep": rows become several records in Python
    extra: dict[str, Any] = field(default_factory=dict)


def row_key(table: str, name: str) -> str:
    """The row key that holds field ``name`` of a ``table`` record."""
    return ROW_KEYS.get(table, {}).get(name, name)


def _column(table: str, name: str) -> Any | None:
    return COLUMNS[table].get(row_key(table, name))


def _ends_with(col: Any, value: str) -> ColumnElement[bool]:
    """Case-sensitive suffix test that works on any SQL engine (LIKE folds case in SQLite)."""
    if not value:
        return true()
    return func.substr(col, func.length(col) - len(value) + 1) == value


def _starts_with(col: Any, value: str) -> ColumnElement[bool]:
    """Case-sensitive prefix test, bounded above and below so an index on ``col`` turns it into a range scan."""
    if not value:
        return true()
    cond = [col >= value, func.substr(col, 1, len(value)) == value]
    last = ord(value[-1])
    if last < 0x10FFFF and not 0xD7FF <= last < 0xE000:
        cond.append(col < value[:-1] + chr(last + 1))
    return and_(*cond)


def _atom(col: Any, nullable: bool, is_int: bool, op: str, value: Any) -> ColumnElement[bool]:
    if value is None:
        return col.is_(None) if op == "==" else col.is_not(None)
    if isinstance(value, bool):
        truthy = and_(col.is_not(None), col != (0 if is_int else ""))
        return truthy if (op == "==") == value else not_(truthy)
    if op == "!=":
        return or_(col.is_(None), col != value) if nullable else col != value
    cond = {
        "==": lambda: col == value,
        ">": lambda: col > value,
        ">=": lambda: col >= value,
        "<": lambda: col < value,
        "<=": lambda: col <= value,
        "~=": lambda: func.lower(col).contains(value.lower(), autoescape=True),
        "startsWith": lambda: _starts_with(col, value),
        "endsWith": lambda: _ends_with(col, value),
    }[op]()
    # Two-valued logic: a NULL column makes the atom false (not unknown), so NOT behaves as in Python.
    return and_(col.is_not(None), cond) if nullable else cond


def compile_expr(
    expr: Expr, table: str, int_fields: frozenset[str]
) -> tuple[ColumnElement[bool] | None, bool]:
    """SQL for ``expr`` and whether it is exact; ``None`` means SQL cannot narrow (every row is a candidate)."""
    if isinstance(expr, Compare | Truthy):
        col = _column(table, expr.field)
        if col is None or (isinstance(expr, Compare) and (expr.op == "=~" or isinstance(expr.value, Regex))):
            return None, False
        key = row_key(table, expr.field)
        if isinstance(expr, Truthy):
            return _atom(col, key in NULLABLE, expr.field in int_fields, "==", True), True
        return _atom(col, key in NULLABLE, expr.field in int_fields, expr.op, expr.value), True
    if isinstance(expr, Not):
        inner, exact = compile_expr(expr.operand, table, int_fields)
        return (not_(inner), True) if exact and inner is not None else (None, False)
    parts = [compile_expr(e, table, int_fields) for e in expr.operands]
    exact = all(ex for _, ex in parts)
    clauses = [c for c, _ in parts if c is not None]
    if isinstance(expr, And):
        return (and_(*clauses) if clauses else None), exact
    if len(clauses) < len(parts):
        return None, False
    return or_(*clauses), exact


def _uses_parent(exprs: tuple[Expr, ...]) -> bool:
    def walk(e: Expr) -> bool:
        if isinstance(e, Compare | Truthy):
            return e.field == "parent"
        if isinstance(e, Not):
            return walk(e.operand)
        return any(walk(x) for x in e.operands)

    return any(walk(e) for e in exprs)


def _node_select(kb_id: int, generation: int, filters: tuple[Expr, ...]) -> Select[*tuple[Any, ...]]:
    cols = [c.label(k) for k, c in _NODE_COLS.items()]
    stmt = select(*cols).select_from(Node).join(File, File.id == Node.file_id)
    if _uses_parent(filters):
        stmt = stmt.add_columns(Parent.name.label("parent")).outerjoin(Parent, Parent.id == Node.parent_id)
    else:
        stmt = stmt.add_columns(literal(None).label("parent"))
    # Order by an expression, not the bare column: otherwise SQLite walks ix_nodes_kb_path over every node of
    # the knowledge base to skip a sort, instead of narrowing through the kind/name/level indexes.
    return stmt.where(Node.kb_id == kb_id, visible_in(File, generation)).order_by(
        Node.path + "", Node.start_line, Node.id
    )


def _selector_where(q: Query) -> tuple[list[Any], dict[str, Any]]:
    """Conditions from the root/selector, and settings for Python refinement."""
    sel = q.selector
    name = sel.name if sel else None
    arg = sel.args[0] if sel and sel.args else None
    if q.record == "heading":
        conds: list[Any] = [Node.kind == "heading"]
        if name and name.startswith("h") and name[1:].isdigit():
            conds.append(Node.level == int(name[1:]))
        if isinstance(arg, str):
            conds += [
                func.lower(Node.name).contains(w, autoescape=True) for w in heading_words(arg) if w.isascii()
            ]
            return conds, {"heading": arg}
        return conds, {}
    if q.record == "code":
        kinds = {
            "classes": CLASS_KINDS,
            "functions": ("function",),
            "methods": ("method",),
            "class": CLASS_KINDS,
            "function": FUNCTION_KINDS,
            "method": ("method",),
        }.get(name or "", CODE_KINDS)
        conds = [Node.kind.in_(kinds)]
        if isinstance(arg, str):
            conds += name_conditions(Node.name, Node.qualified_name, arg, _ends_with)
        return conds, {}
    if q.record == "outline":
        conds = [Node.kind.in_(OUTLINE_KINDS)]
        if isinstance(arg, str) and arg.strip("/"):
            prefix = arg.strip("/")
            # Everything at or under ``prefix`` sorts inside [prefix, prefix + "0"): "/" is the byte before "0".
            conds += [Node.path >= prefix, Node.path < prefix + "0"]
            conds.append(or_(Node.path == prefix, func.substr(Node.path, 1, len(prefix) + 1) == prefix + "/"))
        return conds, {}
    raise AssertionError(q.record)


def compile_query(q: Query, kb_id: int, generation: int) -> Plan:
    """Turn a parsed query into a ``Plan`` for knowledge base ``kb_id`` at ``generation``."""
    table = TABLE_OF_RECORD[q.record]
    from sift.retrievers.docql.schema import FIELDS

    int_fields = frozenset(k for k, t in FIELDS[q.record].items() if t == "int")
    if q.record in ("codeblock", "match"):
        return _expanding_plan(q, kb_id, generation)
    if table == "node":
        stmt = _node_select(kb_id, generation, q.filters)
        conds, extra = _selector_where(q)
        stmt = stmt.where(*conds)
    elif table == "call":
        stmt, extra = _call_select(q, kb_id, generation), {}
    elif table == "file":
        cols = [c.label(k) for k, c in COLUMNS["file"].items()]
        stmt = (
            select(*cols)
            .where(File.kb_id == kb_id, visible_in(File, generation))
            .order_by(File.path, File.id)
        )
        extra = {}
    else:
        cols = [c.label(k) for k, c in COLUMNS["entity"].items()]
        stmt = (
            select(*cols)
            .join(File, File.id == Entity.file_id)
            .where(Entity.kb_id == kb_id, visible_in(File, generation))
            .order_by(Entity.path, Entity.start_line, Entity.id)
        )
        extra = {}
    exact = True
    for f in q.filters:
        clause, ok = compile_expr(f, table, int_fields)
        exact = exact and ok
        if clause is not None:
            stmt = stmt.where(clause)
    plan = Plan(
        stmt=stmt, table=table, exact=exact and "heading" not in extra, filters=q.filters, extra=extra
    )
    return plan


def _call_select(q: Query, kb_id: int, generation: int) -> Select[*tuple[Any, ...]]:
    assert q.selector is not None and isinstance(q.selector.args[0], str)
    target = q.selector.args[0]
    cols = [c.label(k) for k, c in COLUMNS["call"].items()]
    stmt = (
        select(*cols)
        .join(File, File.id == Ref.file_id)
        .where(Ref.kb_id == kb_id, visible_in(File, generation))
    )
    last = target.split("::")[-1].split(".")[-1]
    if q.selector.name == "callers":
        stmt = stmt.where(Ref.callee_name == last, Ref.bound_locally.is_(False))  # a local variable's call is no caller
        if "." in target or "::" in target:
            suffix = target.split("::")[-1]
            stmt = stmt.where(
                or_(
                    Ref.callee_qualified.is_(None),
                    Ref.callee_qualified == suffix,
                    _ends_with(Ref.callee_qualified, "." + suffix),
                    _ends_with(Ref.callee_qualified, "::" + suffix),
                )
            )
    else:
        callers = (
            select(Node.id)
            .join(File, File.id == Node.file_id)
            .where(
                Node.kb_id == kb_id,
                Node.kind.in_(FUNCTION_KINDS),
                visible_in(File, generation),
                *name_conditions(Node.name, Node.qualified_name, target, _ends_with),
            )
        )
        caller_names = callers.with_only_columns(
            func.substr(Node.qualified_name, str_position(Node.qualified_name, "::") + 2)
        )
        # caller_name narrows through its index; caller_node_id makes the match exact.
        stmt = stmt.where(Ref.caller_name.in_(caller_names), Ref.caller_node_id.in_(callers))
    return stmt.order_by(Ref.path, Ref.line, Ref.id)


def _expanding_plan(q: Query, kb_id: int, generation: int) -> Plan:
    if q.record == "codeblock":
        stmt = (
            _node_select(kb_id, generation, ())
            .where(
                Node.kind.in_(("heading", "document")), json_array_len(Node.meta, "codeblocks") > 0
            )
            .add_columns(Node.meta.label("meta"))
        )
        return Plan(stmt=stmt, table="node", exact=False, filters=q.filters, expand="codeblock")
    assert q.selector is not None
    stmt = (
        select(File.id.label("file_id"), File.path.label("path"), File.content.label("content"))
        .where(File.kb_id == kb_id, visible_in(File, generation), File.source_type == "doc")
        .order_by(File.path, File.id)
    )
    return Plan(
        stmt=stmt,
        table="file",
        exact=False,
        filters=q.filters,
        expand="grep",
        extra={
            "pattern": q.selector.args[0],
        },
    )
