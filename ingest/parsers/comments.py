"""Comments in source text: a definition's doc comment above it, a file's leading comment without its licence,
a Python string literal's text. Pure functions of the file's lines; no parser needed."""

from __future__ import annotations

import inspect
import re

_LINE_COMMENTS = {"ruby": ("#",), "python": ("#",)}
_C_LINE_COMMENTS = ("//",)
_COMMENT_MARKERS = re.compile(r"^(?:/\*+|\*+/|///?!?|#+|\*+(?!/))\s?")


def clean_comment(lines: list[str]) -> str | None:
    """Comment lines without their markers (``/** * */``, ``//``, ``///``, ``#``), or None when empty."""
    out = [_COMMENT_MARKERS.sub("", ln.strip()).removesuffix("*/").rstrip() for ln in lines]
    text = "\n".join(out).strip()
    return text or None


# Comments addressed to tools, not readers: bundler annotations (``/*#__PURE__*/``), linter, formatter, coverage
# and type-checker switches.
_DIRECTIVE = re.compile(
    r"^(?:[#@]__[A-Z_]+__|eslint[- ]|jshint\b|prettier-ignore|istanbul ignore|c8 ignore|v8 ignore"
    r"|@ts-(?:ignore|expect-error|nocheck|check)|tslint:|noqa\b|pragma:|type: ?ignore|fmt: ?(?:off|on|skip)|rubocop:)"
)


def comment_above(lines: list[str], row: int, markers: tuple[str, ...]) -> str | None:
    """The comment block ending on the line just above 0-based ``row`` (no blank line in between); None when
    there is none or it only holds directives to tools (``/*#__PURE__*/``, ``// eslint-disable-next-line``)."""
    first = comment_start(lines, row, markers)
    text = clean_comment(lines[max(first, 0) : row]) if first < row else None
    if text is not None and all(_DIRECTIVE.match(ln.strip()) for ln in text.splitlines() if ln.strip()):
        return None
    return text


def line_comment_markers(language: str) -> tuple[str, ...]:
    """How a line comment starts in ``language`` (``#`` or ``//``)."""
    return _LINE_COMMENTS.get(language, _C_LINE_COMMENTS)


def comment_start(lines: list[str], row: int, markers: tuple[str, ...]) -> int:
    """The first 0-based row of the comment block ending just above ``row`` (``row`` itself when there is none)."""
    first = row
    r = row - 1
    while r >= 0:
        s = lines[r].strip()
        if s.endswith("*/") and markers != ("#",):
            while r >= 0 and "/*" not in lines[r]:
                r -= 1
            first, r = r, r - 1
        elif s.startswith(markers):
            first, r = r, r - 1
        else:
            break
    return max(first, 0)


def python_string(literal: str) -> str:
    """A Python string literal's text without prefix and quotes, dedented like ``inspect.cleandoc``."""
    body = literal.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return inspect.cleandoc(body[len(quote) : len(body) - len(quote)])


def file_comment(lines: list[str], markers: tuple[str, ...]) -> str | None:
    """The first comment block of a file (after blank lines and a shebang), or None when code comes first."""
    in_block = False
    started = False
    for row, line in enumerate(lines):
        s = line.strip()
        if in_block:
            in_block = "*/" not in s
        elif s.startswith("/*") and markers != ("#",):
            in_block = "*/" not in s[2:]
        elif s.startswith(markers) and not s.startswith("#!"):
            pass
        elif started or (s and not s.startswith("#!")):
            return comment_above(lines, row, markers) if started else None
        else:
            continue
        started = True
    return comment_above(lines, len(lines), markers)


_LICENSE_LINE = re.compile(r"^\s*(?:@license\b|copyright\b|\(c\)|©|licen[cs]ed under\b|spdx-license-identifier\b)", re.I)


def without_license(comment: str | None) -> str | None:
    """A file comment up to its copyright or licence lines: they say who owns the file, not what it does."""
    if comment is None:
        return None
    kept = []
    for line in comment.split("\n"):
        if _LICENSE_LINE.match(line):
            break
        kept.append(line)
    return "\n".join(kept).strip() or None
