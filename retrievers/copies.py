"""Copies of one definition in several files of a project, shown as one place.

A package often ships one source more than once: a browser bundle beside the modules it was built from,
CommonJS and ES module builds, a vendored or generated copy. Each copy is a chunk with the same symbol and
(nearly) the same words, so fused search would give one definition two or three of its first places. Here the
copies of a hit become one hit, listed under ``Hit.copies``, and the one shown is the copy in the file that the
package's manifest (``package.json``) names as its entry point, or in that file's folder: the code a user's
``require`` or ``import`` runs. Without a manifest, or when no copy is in an entry folder, the best-ranked copy
is shown.

Pure functions, no I/O: the caller reads the chunk texts and the manifest.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from sift.models import Copy, Hit

COPY_OVERLAP = 0.9  # the share of their distinct words two chunks of one symbol share when one is a copy
MANIFEST = "package.json"  # at the root of the knowledge base
# The manifest's fields that name the files a user's code loads, most preferred first; then every file that its
# "exports" map names, in the order written.
ENTRY_FIELDS = ("main", "module", "types", "typings")


class _Place(Protocol):
    path: str
    symbol: str
    module_code: bool


def is_copy(a: _Place, b: _Place, words_a: set[str], words_b: set[str]) -> bool:
    """``a`` and ``b`` are one symbol in two files with (nearly) the same words: a built or vendored copy."""
    if a.path == b.path or a.symbol != b.symbol or a.module_code != b.module_code or not a.symbol:
        return False
    union = words_a | words_b
    return bool(union) and len(words_a & words_b) >= COPY_OVERLAP * len(union)


def _files(value: Any) -> list[str]:
    """The file paths in a manifest value: a string, or the strings of a conditions map or list, in the order
    written (read without recursion: a manifest may nest as deep as its JSON reader allows)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return out


def entry_paths(manifest: str) -> tuple[str, ...]:
    """The files a ``package.json`` names as the package's entry points, normalized to paths of the knowledge
    base ("./lib/cjs/index.js" → "lib/cjs/index.js"), most preferred first; none for a manifest that does not parse
    (or nests too deeply to read)."""
    try:
        data = json.loads(manifest)
        if not isinstance(data, dict):
            return ()
        named = [p for f in ENTRY_FIELDS for p in _files(data.get(f))] + _files(data.get("exports"))
    except (ValueError, RecursionError):  # not JSON, or nested too deeply for the JSON reader
        return ()
    out: list[str] = []
    for raw in named:
        path = posixpath.normpath(raw.strip())
        if path in (".", "..") or path.startswith(("../", "/")) or "*" in path:
            continue  # outside the package, or a pattern
        if path not in out:
            out.append(path)
    return tuple(out)


def preference(path: str, entries: Sequence[str]) -> tuple[int, int]:
    """How well ``path`` fits the entry points (lower is better): the entry file itself, then a file in an entry's
    folder, by the entry's order; ``(2, 0)`` for any other file."""
    for i, entry in enumerate(entries):
        if path == entry:
            return 0, i
    for i, entry in enumerate(entries):
        if posixpath.dirname(path) == posixpath.dirname(entry):
            return 1, i
    return 2, 0


def collapse(hits: Sequence[Hit], words: Callable[[Hit], set[str]], entries: Sequence[str] = ()) -> list[Hit]:
    """``hits`` (best first) with the copies of each hit folded into it: one hit per place, at its best copy's
    position and score, shown in the copy that ``preference`` puts first (ties: the better-ranked), the others
    in ``copies``. ``words`` gives a hit's distinct words; it is called only for hits that share a symbol."""
    groups: list[list[Hit]] = []
    by_symbol: dict[tuple[str, bool], list[int]] = {}
    cache: dict[int, set[str]] = {}

    def words_of(i: int, h: Hit) -> set[str]:
        if i not in cache:
            cache[i] = words(h)
        return cache[i]

    first: dict[int, int] = {}  # group index → position of its head in ``hits``
    for i, h in enumerate(hits):
        key = (h.symbol, h.module_code)
        home = None
        if h.symbol and h.kind != "doc":
            for g in by_symbol.get(key, ()):
                head = groups[g][0]
                if all(m.path != h.path for m in groups[g]) and is_copy(head, h, words_of(first[g], head), words_of(i, h)):
                    home = g
                    break
        if home is None:
            first[len(groups)] = i
            by_symbol.setdefault(key, []).append(len(groups))
            groups.append([h])
        else:
            groups[home].append(h)
    out = []
    for group in groups:
        if len(group) == 1:
            out.append(group[0])
            continue
        shown = min(range(len(group)), key=lambda j: (preference(group[j].path, entries), j))
        best = group[0]
        copies = tuple(Copy(path=m.path, start_line=m.start_line, end_line=m.end_line)
                       for j, m in enumerate(group) if j != shown)
        channels = tuple(sorted({c for m in group for c in (m.channels or (m.channel,))}))
        out.append(group[shown].model_copy(update={"score": best.score, "rank": best.rank, "channels": channels,
                                                   "copies": copies}))
    return [h.model_copy(update={"rank": r}) for r, h in enumerate(out, 1)]


def words_from(texts: Mapping[int, str], tokenize: Callable[[str], list[str]]) -> Callable[[Hit], set[str]]:
    """``collapse``'s ``words`` over chunk texts by id (a hit without a text has no words, so no copies)."""
    return lambda h: set(tokenize(texts.get(h.chunk_id, ""))) if h.chunk_id is not None else set()
