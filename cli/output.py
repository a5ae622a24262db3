"""What every command writes: repository text made safe for a terminal, JSON kept exact.

File names and file content come from repositories nobody vetted. Printed raw, an ESC sequence in them can set
the terminal's title or clear the screen, a bidi override (U+202E) makes a name read backwards, and a newline
inside a file name forges an extra output line. Human output therefore goes through ``escape``; JSON output
stays exact (a parser gets the very strings that were stored) but writes those characters as ``\\uXXXX`` escapes,
so even JSON printed on a terminal cannot drive it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import IO, Any

from sift.text import shown

# JSON already escapes C0 controls; these are the rest, valid only inside JSON strings (structure is ASCII).
_UNSAFE_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

FORMATS = ("text", "json", "jsonl", "grep")


def escape(text: object, *, multiline: bool = False) -> str:
    """``text`` with terminal control and bidi characters shown as ``\\x1b`` / ``\\u202e`` (``sift.text.shown``).

    ``multiline`` keeps newlines and tabs (file content, answers); without it they are escaped too (a file name,
    a symbol name, one line of grep-style output).
    """
    return shown(text, multiline=multiline)


def echo(text: object = "", *, file: IO[str] | None = None) -> None:
    """Print human output: every line escaped (callers escape names first, so a newline in one shows as ``\\n``)."""
    print(escape(text, multiline=True), file=file if file is not None else sys.stdout)


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """``obj`` as JSON: exact strings, non-ASCII kept readable, terminal-unsafe characters as ``\\uXXXX``."""
    separators = None if indent is not None else (",", ":")
    text = json.dumps(obj, indent=indent, ensure_ascii=False, default=str, separators=separators)
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(obj: Any, *, indent: int | None = 2) -> None:
    """Print ``obj`` as one JSON document (``--json``)."""
    sys.stdout.write(dumps(obj, indent=indent) + "\n")


def print_jsonl(rows: Any) -> None:
    """Print one compact JSON object per line (``--format jsonl``)."""
    for row in rows:
        sys.stdout.write(dumps(row, indent=None) + "\n")


def grep_line(path: str, line: int, text: str) -> str:
    """``path:line: text``, the shape compilers and ``grep -n`` print and editors jump to (one line, escaped)."""
    return f"{escape(path)}:{line}: {escape(text.strip())}"


def first_line(text: str | None) -> str:
    """The first non-blank line of ``text`` (file content; a name is shown whole, escaped)."""
    return next((line for line in (text or "").splitlines() if line.strip()), "")


def add_format(p: argparse.ArgumentParser, formats: tuple[str, ...] = FORMATS) -> None:
    """``--format`` (text by default) and ``--json``, its short form for ``--format json``."""
    p.add_argument("--format", choices=formats, default="text",
                   help="text for people (default); json, jsonl (one object per line) or grep "
                        "(path:line: text) for programs" if "grep" in formats else "output format (default text)")
    p.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
