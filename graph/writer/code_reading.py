"""What the writer reads from a definition's lines as code: the lines of one statement, the names a class declares.

Pure functions of source lines; the code excerpts (``code_quotes.py``) and the prose (``composition.py``) use them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.graph.models import Evidence
from sift.text import split_lines

MAX_CONTINUATION = 4  # lines of one statement shown after the line that opens it
MAX_ITEMS = 12  # or of a statement whose further lines are one literal or name each (a list of values)
_REACH = max(MAX_CONTINUATION, MAX_ITEMS)  # the most lines a statement may run on after its first
# A line of a list of values: quoted strings, numbers or (dotted) names, with their commas.
_VALUE = r"""(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|[\w.$-]+)"""
_ITEM = re.compile(rf"^\s*{_VALUE}(?:\s*,\s*{_VALUE})*\s*,?\s*$")
_STRING = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`""")


def _depth(line: str) -> int:
    """Round and square brackets a line opens and leaves open (closing ones subtract), outside strings."""
    bare = _STRING.sub("", line)
    return bare.count("(") + bare.count("[") - bare.count(")") - bare.count("]")


def continuation(lines: Sequence[str], off: int) -> list[int]:
    """The lines after ``off`` that finish the statement it opens (a call whose arguments run on), when that takes at
    most ``MAX_CONTINUATION`` lines, or at most ``MAX_ITEMS`` when the lines past those are one value each (the
    rules a call lists, a tuple of names); [] when the line is complete or the statement runs longer."""
    depth = _depth(lines[off])
    if depth <= 0:
        return []
    out: list[int] = []
    for j in range(off + 1, min(len(lines), off + 1 + _REACH)):
        if len(out) >= MAX_CONTINUATION and not (_ITEM.match(lines[j]) or lines[j].strip()[:1] in ")]"):
            return []  # longer than a short statement, and not a list of values
        out.append(j)
        depth += _depth(lines[j])
        if depth <= 0:
            return out
    return []


def statement(lines: Sequence[str], off: int) -> list[int]:
    """The other lines of the short statement that line ``off`` belongs to: the lines that finish it, or, for a
    line inside a statement opened above (an error message's string), the lines from its opening to its end."""
    for start in range(off - 1, max(-1, off - 1 - _REACH), -1):
        rest = continuation(lines, start)
        if off in rest:
            return [start, *(j for j in rest if j != off)]
    return continuation(lines, off)


_MEMBER = re.compile(r"(?:async\s+)?def\s+(\w+)|(?:class\s+)?([A-Za-z_]\w*)\s*(?::(?!=)|=(?!=)|\()")
_KEYWORDS = frozenset({"if", "for", "while", "with", "try", "return", "raise", "assert", "del", "pass", "elif",
                       "else", "except", "finally", "import", "from", "global", "nonlocal", "yield", "print"})
MAX_MEMBERS = 24


def members(e: Evidence) -> list[str]:
    """Names a class body declares at its own level (attributes, options, methods), in order; [] for non-classes."""
    lines = split_lines(e.text)
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("class ")), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    body: int | None = None
    out: list[str] = []
    quote: str | None = None
    for line in lines[start + 1:]:
        stripped = line.strip()
        if not stripped:
            continue
        if quote is not None:  # inside a docstring
            if quote in stripped:
                quote = None
            continue
        level = len(line) - len(line.lstrip())
        if level <= indent:
            break  # the class ended
        body = level if body is None else body
        for q in ('"""', "'''"):
            if stripped.startswith(q) or stripped.startswith(("r" + q, "f" + q)):
                if stripped.count(q) < 2:
                    quote = q
                break
        else:
            m = _MEMBER.match(stripped) if level == body else None
            name = m and (m.group(1) or m.group(2))
            if name and name not in _KEYWORDS and name not in out:
                out.append(name)
    return out[:MAX_MEMBERS]
