"""A hand-written recursive-descent parser for DocQL, with validation against the schema whitelist.

Grammar (whitespace is allowed between any two tokens)::

    query      := "$" "." ROOT selector? step* window? projection? EOF
    selector   := "." NAME ( "(" [ arg ( "," arg )* ] ")" )?
    step       := "[" "*" "]" | "[" "?" "(" expr ")" "]"
    window     := "[" INT "]" | "[" INT? ":" INT? "]"
    projection := "." ( "source" | "content" | "text" )
    expr       := and_expr ( "||" and_expr )*
    and_expr   := unary ( "&&" unary )*
    unary      := "!" unary | "(" expr ")" | "@" "." NAME ( op value )?
    op         := "==" | "!=" | "~=" | "=~" | ">=" | ">" | "<=" | "<" | "startsWith" | "endsWith"
    value      := STRING | NUMBER | "true" | "false" | "null" | REGEX        (REGEX only after "=~")
    arg        := STRING | REGEX
    STRING     := '…' | "…" with backslash escapes; REGEX := "/" … "/" [ims]*

Errors raise ``InvalidQuery`` with the 1-based column, the query, a caret under the offending character and what
was expected. Limits keep hostile queries from reaching Python's recursion limit or the database's expression
limits: filters nest at most ``MAX_DEPTH`` levels of ``(`` and ``!``, hold at most ``MAX_TERMS`` comparisons in
all, and numbers fit a 64-bit integer (or are finite floats).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager

from sift.errors import InvalidQuery
from sift.retrievers.docql.ast import (
    And,
    Compare,
    Expr,
    Not,
    Or,
    Query,
    Regex,
    Scalar,
    Selector,
    Truthy,
    Window,
)
from sift.retrievers.docql.errors import query_error as _fail
from sift.retrievers.docql.regex import compile_regex
from sift.retrievers.docql.scanner import NAME, Scanner
from sift.retrievers.docql.schema import FIELDS, PROJECTIONS, ROOT_RECORD, SELECTORS, selector_label

_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_SYMBOL_OPS = ("==", "!=", "~=", "=~", ">=", "<=", ">", "<")
_WORD_OPS = ("startsWith", "endsWith")
_STRING_OPS = frozenset({"~=", "=~", "startsWith", "endsWith"})
MAX_DEPTH = 64
MAX_TERMS = 256


class _Parser(Scanner):
    """The grammar: one method per rule, over ``Scanner``'s tokens."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.terms = 0

    # -- query -----------------------------------------------------------------------------------------------
    def query(self) -> Query:
        self.expect("$", "'$' at the start of the query")
        self.expect(".", "'.' after '$'")
        root, root_at = self.name("a root: " + ", ".join(f"$.{r}" for r in SELECTORS))
        if root not in SELECTORS:
            raise _fail(
                self.text,
                root_at,
                f"unknown root '{root}': use one of " + ", ".join(f"$.{r}" for r in SELECTORS),
            )
        selector = self.selector(root)
        if selector is None and root not in ROOT_RECORD:
            raise self.error(
                f"a function after $.{root}: "
                + ", ".join(selector_label(s) for s in SELECTORS[root].values())
            )
        record = SELECTORS[root][selector.name].record if selector else ROOT_RECORD[root]
        filters, window, projection = self.steps(record)
        self.ws()
        if self.i < len(self.text):
            raise self.error("'[', '.source', '.content' or the end of the query")
        return Query(self.text, root, record, selector, tuple(filters), window, projection)

    def selector(self, root: str) -> Selector | None:
        self.ws()
        if not self.peek(".") or self._at_projection():
            return None
        self.eat(".")
        specs = SELECTORS[root]
        name, at = self.name("a function name")
        if name not in specs:
            if not specs:
                hint = f"filter on its fields instead, e.g. $.{root}[?(@.name == '…')]"
                raise _fail(self.text, at, f"'{name}' is not a function of $.{root}: {hint}")
            valid = ", ".join(selector_label(s) for s in specs.values())
            raise _fail(self.text, at, f"unknown function '{name}' on $.{root}: valid are {valid}")
        spec = specs[name]
        args: list[str | Regex] = []
        if self.peek("("):
            if not spec.is_call:
                raise _fail(self.text, self.i, f"'{name}' takes no arguments: write $.{root}.{name}")
            args = self.args(spec.regex_arg)
        elif spec.is_call and spec.min_args:
            raise self.error(f"'(' and arguments: $.{root}.{name}(\"…\")")
        if not spec.min_args <= len(args) <= spec.max_args:
            want = spec.min_args if spec.min_args == spec.max_args else f"{spec.min_args} to {spec.max_args}"
            raise _fail(self.text, at, f"{name}() takes {want} argument(s), got {len(args)}")
        return Selector(name, tuple(args), spec.is_call, at + 1)

    def _at_projection(self) -> bool:
        m = NAME.match(self.text, self.i + 1) if self.text.startswith(".", self.i) else None
        if not m:
            return False
        rest = self.text[m.end() :].lstrip()
        return m.group(0) in PROJECTIONS and not rest.startswith("(") and not rest.startswith(".")

    def args(self, regex_ok: bool) -> list[str | Regex]:
        self.expect("(")
        out: list[str | Regex | None] = []
        if self.eat(")"):
            return []
        while True:
            self.ws()
            at = self.i
            if self.text[at : at + 1] in ("'", '"'):
                value = self.string()
                out.append(self._string_regex(value, at, out) if regex_ok else value)
            elif regex_ok and self.text[self.i : self.i + 1] == "/":
                out.append(self.regex())
            else:
                raise self.error("a quoted string argument" + (" or a /regex/" if regex_ok else ""))
            if self.eat(")"):
                return [a for a in out if a is not None]
            self.expect(",", "',' or ')'")

    def _string_regex(self, value: str, at: int, before: list[str | Regex | None]) -> Regex | None:
        """A quoted pattern becomes a Regex; a quoted second argument holds its flags (returns None)."""
        if not before:
            compile_regex(value, "", query=self.text, position=at + 1)
            return Regex(value, "", at + 1)
        first = before[0]
        bad = [k for k, f in enumerate(value) if f not in "ims"]
        if len(before) > 1 or not isinstance(first, Regex) or bad:
            raise _fail(
                self.text, at + 1 + (bad[0] if bad else 0), "the second argument holds regex flags: i, m or s"
            )
        before[0] = Regex(first.pattern, first.flags + value, first.pos)
        return None

    def steps(self, record: str) -> tuple[list[Expr], Window | None, str | None]:
        filters: list[Expr] = []
        window: Window | None = None
        projection: str | None = None
        while True:
            self.ws()
            at = self.i
            if self.eat("["):
                if window is not None:
                    raise _fail(self.text, at, "nothing may follow an index or slice except .source/.content")
                if self.eat("*"):
                    self.expect("]", "']' after '*'")
                elif self.eat("?"):
                    self.expect("(", "'(' after '?'")
                    filters.append(self.expr(record))
                    self.expect(")", "')' or an operator ('&&', '||')")
                    self.expect("]", "']' to close the filter")
                else:
                    window = self.window(at)
            elif self.peek("."):
                self.eat(".")
                name, nat = self.name("'source', 'content' or 'text'")
                if name not in PROJECTIONS:
                    raise _fail(
                        self.text,
                        nat,
                        f"unknown property '{name}': only .source, .content or .text may end a query",
                    )
                projection = "text"
                self.ws()
                if self.i < len(self.text):
                    raise self.error("the end of the query after ." + name)
                return filters, window, projection
            else:
                return filters, window, projection

    def window(self, at: int) -> Window:
        self.ws()
        start = self.int_opt()
        if self.eat(":"):
            stop = self.int_opt()
            self.expect("]", "an integer or ']'")
            if start is not None and stop is not None and start >= 0 and stop >= 0 and stop < start:
                raise _fail(
                    self.text, at, f"slice [{start}:{stop}] is empty: the end must not be before the start"
                )
            return Window(start, stop, False, at + 1)
        if start is None:
            raise self.error("'*', '?(', an index such as [0] or a slice such as [0:10]")
        self.expect("]", "']' or ':'")
        return Window(start, None, True, at + 1)

    # -- filter expressions ----------------------------------------------------------------------------------
    def expr(self, record: str) -> Expr:
        items = [self.and_expr(record)]
        while self.eat("||"):
            items.append(self.and_expr(record))
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self, record: str) -> Expr:
        items = [self.unary(record)]
        while self.eat("&&"):
            items.append(self.unary(record))
        return items[0] if len(items) == 1 else And(tuple(items))

    def unary(self, record: str) -> Expr:
        self.ws()
        at = self.i
        if self.peek("!") and not self.peek("!="):
            self.eat("!")
            with self._nested(at):
                return Not(self.unary(record), at + 1)
        if self.eat("("):
            with self._nested(at):
                inner = self.expr(record)
            self.expect(")", "')' or an operator ('&&', '||')")
            return inner
        if not self.eat("@"):
            raise self.error("'@.field', '!' or '('")
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise _fail(self.text, at, f"too many conditions: a query may test at most {MAX_TERMS} fields")
        self.expect(".", "'.' after '@'")
        field, fat = self.name("a field name")
        fields = FIELDS[record]
        if field not in fields:
            raise _fail(self.text, fat, f"unknown field '{field}': valid are {', '.join(sorted(fields))}")
        op = self.op()
        if op is None:
            return Truthy(field, at + 1)
        self.ws()
        vat = self.i
        value = self.value(op)
        self._check_types(field, fields[field], op, value, at, vat)
        return Compare(field, op, value, at + 1, vat + 1)  # type: ignore[arg-type]

    @contextmanager
    def _nested(self, at: int) -> Iterator[None]:
        """One more level of '(' or '!' (bounded: each level is a Python frame here and in the compiler)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _fail(self.text, at, f"filter nested too deeply: at most {MAX_DEPTH} levels of '(' and '!'")
        try:
            yield
        finally:
            self.depth -= 1

    def op(self) -> str | None:
        self.ws()
        for op in _SYMBOL_OPS:
            if self.text.startswith(op, self.i):
                self.i += len(op)
                return op
        m = NAME.match(self.text, self.i)
        if m and m.group(0) in _WORD_OPS:
            self.i = m.end()
            return m.group(0)
        if m or self.text[self.i : self.i + 1] in ("=", "~", "'", '"'):
            raise self.error("an operator: " + ", ".join(_SYMBOL_OPS + _WORD_OPS))
        return None

    def value(self, op: str) -> Scalar | Regex:
        c = self.text[self.i : self.i + 1]
        if c in ("'", '"'):
            return self.string()
        if c == "/" and op == "=~":
            return self.regex()
        m = _NUMBER.match(self.text, self.i)
        if m:
            self.i = m.end()
            if not m.group(1):
                return self.integer(m.group(0), m.start())
            number = float(m.group(0))
            if not math.isfinite(number):
                raise _fail(self.text, m.start(), "number too large: use a finite number")
            return number
        m = NAME.match(self.text, self.i)
        if m and m.group(0) in ("true", "false", "null"):
            self.i = m.end()
            return {"true": True, "false": False, "null": None}[m.group(0)]
        raise self.error(
            "a value: a quoted string, a number, true, false or null"
            + (" or a /regex/" if op == "=~" else "")
        )

    def _check_types(self, field: str, ftype: str, op: str, value: Scalar | Regex, at: int, vat: int) -> None:
        if op == "=~":
            if isinstance(value, str):
                compile_regex(value, "", query=self.text, position=vat + 1)
            elif not isinstance(value, Regex):
                raise _fail(self.text, vat, "=~ needs a /regex/ or a quoted pattern")
            if ftype != "str":
                raise _fail(self.text, at, f"=~ applies to text fields; '{field}' is a number")
            return
        if isinstance(value, bool) or value is None:
            if op not in ("==", "!="):
                raise _fail(
                    self.text,
                    vat,
                    f"{op} cannot compare with {str(value).lower() if value is not None else 'null'}: use == or !=",
                )
            return
        if op in _STRING_OPS:
            if ftype != "str" or not isinstance(value, str):
                raise _fail(
                    self.text,
                    at if ftype != "str" else vat,
                    f"{op} compares text: '{field}' with a quoted string",
                )
            return
        if ftype == "int" and not isinstance(value, int | float):
            raise _fail(self.text, vat, f"'{field}' is a number: compare it with a number, not {value!r}")
        if ftype == "str" and not isinstance(value, str):
            raise _fail(self.text, vat, f"'{field}' is text: compare it with a quoted string, not {value!r}")


def parse(query: str) -> Query:
    """Parse and validate a DocQL query; raises ``InvalidQuery`` with the column of the first problem."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidQuery(
            "DocQL error at column 1: empty query; start with $.toc, $.content, $.code, $.files, $.entities or $.structure",
            position=1,
        )
    return _Parser(query).query()
