"""Name matching shared by the compiler and the executor: fuzzy heading titles and dotted symbol names."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_WORD = re.compile(r"[^\W_]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only, exactly as SQL ``lower()`` does in SQLite."""
    return text.translate(_ASCII_LOWER)


def heading_words(text: str) -> list[str]:
    """The words of a title, lower-cased, without punctuation: ``"Auth-Service: Setup"`` → auth, service, setup."""
    return _WORD.findall(text.lower())


def normalize_title(text: str) -> str:
    """A title reduced for fuzzy comparison (case and punctuation ignored)."""
    return " ".join(heading_words(text))


def fuzzy_headings(rows: list[dict[str, Any]], wanted: str) -> list[dict[str, Any]]:
    """Rows whose title equals ``wanted`` up to case and punctuation; failing that, those that contain it."""
    target = normalize_title(wanted)
    titles = [(row, normalize_title(row["name"])) for row in rows]
    exact = [row for row, title in titles if title == target]
    if exact:
        return exact
    padded = f" {target} "
    return [row for row, title in titles if padded in f" {title} "] or [
        row for row, title in titles if target and target in title
    ]


def name_conditions(
    name_col: Any, qualified_col: Any, target: str, ends_with: Callable[[Any, str], Any]
) -> list[Any]:
    """SQL conditions selecting symbols called ``target``: ``m``, ``Cls.m`` or ``path/to/file.py::Cls.m``."""
    if "::" in target:
        return [qualified_col == target]
    if "." in target:
        last = target.rsplit(".", 1)[1]
        from sqlalchemy import or_

        return [
            name_col == last,
            or_(ends_with(qualified_col, "::" + target), ends_with(qualified_col, "." + target)),
        ]
    return [name_col == target]
