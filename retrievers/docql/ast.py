"""The DocQL syntax tree: what the parser produces and the compiler consumes.

Every node keeps ``pos``, the 1-based column where it starts in the query text, so that errors found after
parsing (an unknown field, a regex that does not compile) still point at the right character.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Scalar = str | int | float | bool | None

CompareOp = Literal["==", "!=", "~=", "=~", ">", ">=", "<", "<=", "startsWith", "endsWith"]


@dataclass(frozen=True, slots=True)
class Regex:
    """A regular expression literal ``/pattern/flags`` (flags drawn from ``i``, ``m``, ``s``)."""

    pattern: str
    flags: str
    pos: int


@dataclass(frozen=True, slots=True)
class Compare:
    """``@.field op value``; ``value`` is a scalar, or a ``Regex`` for ``=~``."""

    field: str
    op: CompareOp
    value: Scalar | Regex
    pos: int
    value_pos: int


@dataclass(frozen=True, slots=True)
class Truthy:
    """``@.field`` on its own: the field is set (not null, not empty, not zero)."""

    field: str
    pos: int


@dataclass(frozen=True, slots=True)
class Not:
    """``!expr``."""

    operand: Expr
    pos: int


@dataclass(frozen=True, slots=True)
class And:
    """``a && b && …``."""

    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """``a || b || …``."""

    operands: tuple[Expr, ...]


Expr = Compare | Truthy | Not | And | Or


@dataclass(frozen=True, slots=True)
class Selector:
    """What follows the root: a collection (``classes``, ``codeblock``) or a call (``class("X")``)."""

    name: str
    args: tuple[str | Regex, ...]
    is_call: bool
    pos: int


@dataclass(frozen=True, slots=True)
class Window:
    """``[n]`` (``stop`` is None and ``single`` is True) or ``[a:b]`` over the ordered results."""

    start: int | None
    stop: int | None
    single: bool
    pos: int


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed and validated DocQL query.

    ``root`` is one of ``toc``, ``content``, ``code``, ``files``, ``entities``, ``structure``; ``record`` is the
    kind of result it yields (``heading``, ``code``, ``call``, ``file``, ``entity``, ``codeblock``, ``match``,
    ``outline``); ``projection`` is ``"text"`` when the query ends in ``.source``/``.content``/``.text``.
    """

    text: str
    root: str
    record: str
    selector: Selector | None
    filters: tuple[Expr, ...]
    window: Window | None
    projection: str | None
