"""DocQL's tokens: whitespace, punctuation, names, strings with escapes, regex literals and integers, read from one
position in the query text; every error names its column (``InvalidQuery``). The grammar is ``parser.py``."""

from __future__ import annotations

import re

from sift.errors import InvalidQuery
from sift.retrievers.docql.ast import Regex
from sift.retrievers.docql.errors import query_error as _fail
from sift.retrievers.docql.regex import compile_regex

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"-?\d+")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "/": "/", "0": "\0"}
MAX_INT = 2**63 - 1


def _found(text: str, i: int) -> str:
    if i >= len(text):
        return "end of query"
    m = NAME.match(text, i)
    return f"'{m.group(0)}'" if m else f"'{text[i]}'"


class Scanner:
    """The query text and the position reached in it, with the reads every rule of the grammar shares."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def error(self, expected: str, at: int | None = None) -> InvalidQuery:
        i = self.i if at is None else at
        return _fail(self.text, i, f"expected {expected}, found {_found(self.text, i)}")

    def ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.i)

    def eat(self, s: str) -> bool:
        if self.peek(s):
            self.i += len(s)
            return True
        return False

    def expect(self, s: str, expected: str | None = None) -> int:
        self.ws()
        at = self.i
        if not self.eat(s):
            raise self.error(expected or f"'{s}'")
        return at

    def name(self, expected: str) -> tuple[str, int]:
        self.ws()
        m = NAME.match(self.text, self.i)
        if not m:
            raise self.error(expected)
        self.i = m.end()
        return m.group(0), m.start()

    def string(self) -> str:
        quote, start = self.text[self.i], self.i
        self.i += 1
        out: list[str] = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == quote:
                self.i += 1
                return "".join(out)
            if c == "\\":
                out.append(self._escape())
                continue
            out.append(c)
            self.i += 1
        raise _fail(self.text, start, f"unterminated string: add the closing {quote}")

    def _escape(self) -> str:
        at = self.i
        nxt = self.text[at + 1 : at + 2]
        if nxt in _ESCAPES:
            self.i += 2
            return _ESCAPES[nxt]
        if nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", self.text[at + 2 : at + 6]):
            self.i += 6
            return chr(int(self.text[at + 2 : at + 6], 16))
        raise _fail(self.text, at, "invalid escape: use \\\\, \\\", \\', \\n, \\t, \\r, \\/ or \\uXXXX")

    def regex(self) -> Regex:
        start = self.i
        self.i += 1
        out: list[str] = []
        while self.i < len(self.text) and self.text[self.i] != "/":
            c = self.text[self.i]
            if c == "\\" and self.i + 1 < len(self.text):
                nxt = self.text[self.i + 1]
                out.append("/" if nxt == "/" else c + nxt)
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        if self.i >= len(self.text):
            raise _fail(self.text, start, "unterminated regex: add the closing /")
        self.i += 1
        m = re.compile(r"[A-Za-z]*").match(self.text, self.i)
        assert m is not None
        for k, flag in enumerate(m.group(0)):
            if flag not in "ims":
                raise _fail(self.text, self.i + k, f"unknown regex flag '{flag}': use i, m or s")
        self.i = m.end()
        rx = Regex("".join(out), m.group(0), start + 1)
        compile_regex(rx.pattern, rx.flags, query=self.text, position=start + 1)
        return rx

    def int_opt(self) -> int | None:
        self.ws()
        m = _INT.match(self.text, self.i)
        if not m:
            return None
        self.i = m.end()
        return self.integer(m.group(0), m.start())

    def integer(self, digits: str, at: int) -> int:
        """An integer literal that fits 64 bits (a longer one would overflow the database driver)."""
        sign, magnitude = ("-", digits[1:]) if digits.startswith("-") else ("", digits)
        magnitude = magnitude.lstrip("0") or "0"
        if len(magnitude) > 19 or int(magnitude) > MAX_INT:
            raise _fail(self.text, at, f"number too large: integers are at most {MAX_INT} in absolute value")
        return int(sign + magnitude)
