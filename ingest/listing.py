"""The walk ahead of the parse: every file listed first, so that parse progress has a total, with its text kept
only while the texts kept stay within a budget.

A first ingest needs every file's text, and a repository's texts can run to hundreds of megabytes (a 10,000-file
repository: about 90 million characters), more than the parse needs at once. ``list_files`` keeps the texts of the
files the run will parse until they pass ``TEXT_BUDGET_CHARS``; past it, it keeps none and ``texts`` walks the
repository a second time, handing each file's text to the parse as it is read (the same confined walk, in the
same path order). A re-ingest that changes little keeps the few texts it needs and walks once; unchanged files'
texts are never kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sift.ingest.walk import WalkedFile, WalkStats, walk

#: The most characters of file text the listing keeps for the parse (about as many bytes for source code).
TEXT_BUDGET_CHARS = 32 * 2**20


@dataclass(slots=True)
class Listing:
    """Every file walked, in path order, and whether their texts must be read again (``texts``)."""

    files: list[WalkedFile]
    streamed: bool = False


def list_files(root: Path, *, needs_text: Callable[[WalkedFile], bool], max_file_bytes: int, stats: WalkStats,
               within: Path | None = None, progress: Callable[[int], None] | None = None,
               budget: int | None = None) -> Listing:
    """Walk ``root`` once, keeping the texts of the files that ``needs_text`` while they fit in ``budget``
    characters (default ``TEXT_BUDGET_CHARS``); ``progress(n)`` after each file."""
    budget = TEXT_BUDGET_CHARS if budget is None else budget
    listing = Listing([])
    kept = 0
    for wf in walk(root, max_file_bytes=max_file_bytes, stats=stats, within=within):
        if not listing.streamed and needs_text(wf):
            kept += len(wf.text)
            if kept > budget:  # over the budget: no text is kept, the parse reads them again as it goes
                listing.streamed = True
                listing.files = [_without_text(f) for f in listing.files]
        if listing.streamed or not needs_text(wf):
            wf = _without_text(wf)
        listing.files.append(wf)
        if progress:
            progress(len(listing.files))
    return listing


def texts(listing: Listing, root: Path, *, max_file_bytes: int, within: Path | None = None) -> Iterable[WalkedFile]:
    """The listed files with their texts: those kept, or a second walk when they were not (its skips are counted
    by the first walk already; a file that appeared or changed in between is read as it is now)."""
    if not listing.streamed:
        return listing.files
    return _walk_again(root, max_file_bytes, within)


def _walk_again(root: Path, max_file_bytes: int, within: Path | None) -> Iterator[WalkedFile]:
    yield from walk(root, max_file_bytes=max_file_bytes, stats=WalkStats(), within=within)


def _without_text(wf: WalkedFile) -> WalkedFile:
    return dataclasses.replace(wf, text="") if wf.text else wf
