"""The file reader channel: ``list_file_content(path, start_line?, end_line?)`` over the stored text.

Reads the text of the serving generation from the database (never the live file system), so it is confined to
what was ingested: absolute paths, ``..`` segments and unknown files are clear errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from sqlalchemy import Engine

from sift.catalog import KbRef, get_serving_kb, read_lines
from sift.errors import InvalidQuery, OutsideRoot

MAX_LINES = 2000


@dataclass(frozen=True, slots=True)
class FileLines:
    """A line range of a stored file."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[str]

    def numbered(self) -> str:
        """The lines prefixed with their numbers, as tools show them to a model."""
        return "\n".join(f"{n}: {line}" for n, line in enumerate(self.lines, self.start_line))


def normalize_path(path: str) -> str:
    """A repository-relative POSIX path, or OutsideRoot when it could point outside the knowledge base."""
    if not path or "\x00" in path:
        raise OutsideRoot("path is empty or contains a NUL byte", field="path")
    raw = path.replace("\\", "/")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise OutsideRoot(f"{path!r} is absolute; give a path relative to the repository root", field="path")
    parts = [p for p in PurePosixPath(raw).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise OutsideRoot(f"{path!r} leaves the repository root; '..' is not allowed", field="path")
    if not parts:
        raise OutsideRoot(f"{path!r} names the root, not a file", field="path")
    return "/".join(parts)


def slice_lines(path: str, lines: list[str], start_line: int | None, end_line: int | None) -> FileLines:
    """Validate and apply a 1-based inclusive line range (bounded to MAX_LINES lines)."""
    total = len(lines)
    start = 1 if start_line is None else start_line
    if start < 1:
        raise InvalidQuery(f"start_line must be >= 1, got {start}", field="start_line")
    if total and start > total:
        raise InvalidQuery(f"start_line {start} is past the end of {path} ({total} lines)", field="start_line")
    end = total if end_line is None else min(end_line, total)
    if end_line is not None and end_line < start:
        raise InvalidQuery(f"end_line {end_line} is before start_line {start}", field="end_line")
    end = min(end, start + MAX_LINES - 1)
    return FileLines(path, start, max(end, start if total else 0), total, lines[start - 1 : end])


def read_file_lines(
    engine: Engine,
    kb: str | KbRef,
    path: str,
    start_line: int | None = None,
    end_line: int | None = None,
    *,
    tenant: str = "default",
) -> FileLines:
    """``list_file_content``: lines of an ingested file, confined to the knowledge base."""
    ref = kb if isinstance(kb, KbRef) else get_serving_kb(engine, kb, tenant)
    clean = normalize_path(path)
    return slice_lines(clean, read_lines(engine, ref, clean), start_line, end_line)
