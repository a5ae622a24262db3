"""Lines of a file as editors, tree-sitter and ``sed -n`` count them: split on ``\\n`` and nothing else.

``str.splitlines`` also breaks on form feeds, vertical tabs, U+2028 and friends, so a file holding one of those
would get more "lines" than its real line numbers, and every line after it would show the wrong text. Every
consumer of stored file content (parsers, the chunker, the file store, the checker, snippets) uses
:func:`split_lines` so that line N is the same line everywhere.
"""

from __future__ import annotations


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


__all__ = ["line_count", "split_lines"]
