"""Regular expressions with a compile check and a time bound.

Patterns run through the third-party ``regex`` module, whose matching functions take a ``timeout``: a pattern
that backtracks catastrophically on some line stops at the deadline and the query fails with ``InvalidQuery``
instead of pinning a CPU.
"""

from __future__ import annotations

import time

import regex

from sift.errors import InvalidQuery
from sift.retrievers.docql.errors import query_error

DEFAULT_BUDGET_S = 1.0
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL}


def compile_regex(pattern: str, flags: str, *, query: str = "", position: int = 1) -> regex.Pattern[str]:
    """Compile ``pattern`` with flags from ``ims``; a bad pattern is an ``InvalidQuery`` at ``position``."""
    value = regex.VERSION0
    for f in flags:
        value |= _FLAGS[f]
    try:
        return regex.compile(pattern, value)
    except regex.error as exc:
        raise query_error(query, position - 1, f"invalid regex /{pattern}/: {exc}") from exc


class QueryTimeout(InvalidQuery):
    """A query's time budget ran out (a regex backtracking, or a grep over very many lines)."""


class Deadline:
    """A time budget shared by every regex call of one query."""

    def __init__(self, budget_s: float = DEFAULT_BUDGET_S, *, position: int = 1) -> None:
        self.ends = time.monotonic() + budget_s
        self.position = position

    def remaining(self) -> float:
        """Seconds left; raises ``QueryTimeout`` (an ``InvalidQuery``) once the budget is spent."""
        left = self.ends - time.monotonic()
        if left <= 0:
            raise self._timeout()
        return left

    def _timeout(self) -> QueryTimeout:
        return QueryTimeout(
            f"DocQL error at column {self.position}: the regex took too long (catastrophic backtracking?); "
            "simplify it, e.g. avoid nested quantifiers such as (a+)+",
            position=self.position,
        )

    def search(self, pattern: regex.Pattern[str], text: str) -> bool:
        """Whether ``pattern`` matches anywhere in ``text``, within the budget."""
        return self.search_from(pattern, text, 0) is not None

    def search_from(self, pattern: regex.Pattern[str], text: str, pos: int) -> regex.Match[str] | None:
        """The first match of ``pattern`` in ``text`` at or after ``pos``, within the budget.

        Each call gets only the time left: the ``regex`` module starts a timeout afresh at every search, so one
        long ``finditer`` would give every match the whole budget again.
        """
        try:
            return pattern.search(text, pos, timeout=self.remaining())
        except TimeoutError as exc:
            raise self._timeout() from exc
