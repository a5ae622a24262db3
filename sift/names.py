"""Names that end up in file paths, lock names and URLs: knowledge bases and tenants.

A tenant such as ``../../pwn`` must never become a path outside the data directory, so every identifier is
checked against one pattern where it enters (CLI, API, key creation) and again where it becomes a path.
"""

from __future__ import annotations

import re

from sift.errors import InvalidQuery

#: Letters, digits, ``.``, ``_`` and ``-``; starts with a letter or digit; at most 100 characters.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
_NAME = re.compile(NAME_PATTERN)


def check_name(value: str, what: str) -> str:
    """``value`` if it is a valid ``what`` (``"tenant"``, ``"knowledge base"``) name, else InvalidQuery."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InvalidQuery(
            f"invalid {what} name {value!r}: use 1-100 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit",
            field="tenant" if what == "tenant" else "kb",
        )
    return value


__all__ = ["NAME_PATTERN", "check_name"]
