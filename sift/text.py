"""Lines of a file as editors, tree-sitter and ``sed -n`` count them: split on ``\\n`` and nothing else.

``str.splitlines`` also breaks on form feeds, vertical tabs, U+2028 and friends, so a file holding one of those
would get more "lines" than its real line numbers, and every line after it would show the wrong text. Every
consumer of stored file content (parsers, the chunker, the file store, the checker, snippets) uses
:func:`split_lines` so that line N is the same line everywhere.
"""

from __future__ import annotations

import re


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` split on ``\\n`` only; a final newline ends the last line rather than starting one.

    Other characters (``\\r``, ``\\f``, ``\\v``, U+2028, U+0085) stay inside their line, byte for byte.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def line_count(text: str) -> int:
    """How many lines :func:`split_lines` finds in ``text``."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_span(start: int, end: int) -> str:
    """Lines ``start..end`` as a reader writes them: ``"12-20"``, or ``"12"`` for one line."""
    return str(start) if start == end else f"{start}-{end}"


def lines_phrase(start: int, end: int) -> str:
    """``"lines 12-20"``, or ``"line 12"`` for one line."""
    return f"line {start}" if start == end else f"lines {line_span(start, end)}"


__all__ = ["line_count", "line_span", "lines_phrase", "split_lines"]


# C0 controls, DEL and C1 controls; bidi embeddings/overrides (U+202A–202E) and isolates (U+2066–2069); the
# Unicode line and paragraph separators, which some terminals and editors break lines at.
_BIDI = "\u202a-\u202e\u2066-\u2069\u2028\u2029"
UNSAFE_NAME = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
UNSAFE_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")  # keeps \t and \n
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _show(match: re.Match[str]) -> str:
    ch = match.group()
    return _NAMED.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")


def shown(text: object, *, multiline: bool = False) -> str:
    """``text`` with control and bidi characters written as ``\\x1b`` / ``\\u202e`` / ``\\n``.

    Names from a repository (a file path, a symbol) can hold a newline, an ESC sequence or a bidi override; put
    in an answer or printed raw, they forge lines or drive a terminal. ``multiline`` keeps newlines and tabs
    (file content, answers); without it they are written out too (a name, one line of output).
    """
    return (UNSAFE_TEXT if multiline else UNSAFE_NAME).sub(_show, str(text))
