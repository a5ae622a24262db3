"""Whether a build-output folder (``dist``, ``build``) is all the code a published package has.

The walker skips ``dist`` and ``build`` as generated: in a repository they repeat the sources beside them. A
package as published to npm often ships nothing else: its ``package.json`` points the entry points (``main``,
``module``, ``types``, ``exports`` …) into ``dist/`` and no source folder (``src``, ``lib``, ``source``) sits
beside it. Then the folder is the package's code, and skipping it would leave almost nothing to answer from (a
README and a manifest). ``is_package_output`` says so; a Python ``build/`` has no ``package.json`` and stays
skipped.

``package.json`` is read only when it is a regular file of at most ``MAX_MANIFEST_BYTES`` (not a symlink, which
could point outside the repository); one that cannot be read or parsed makes no exception.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Iterator
from typing import Any

OUTPUT_DIRS = frozenset({"dist", "build"})
SOURCE_DIRS = frozenset({"src", "lib", "source", "sources"})
ENTRY_FIELDS = ("main", "module", "types", "typings", "browser", "exports", "bin")
MANIFEST = "package.json"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_ENTRY_POINTS = 10_000  # strings read from the entry fields of one manifest at most


def entry_points(manifest: Any) -> list[str]:
    """The paths a ``package.json`` (parsed) names in its entry fields, nested ``exports`` and ``browser`` maps
    included (at most ``MAX_ENTRY_POINTS``)."""
    if not isinstance(manifest, dict):
        return []
    out: list[str] = []
    for value in (manifest.get(name) for name in ENTRY_FIELDS):
        for path in _strings(value):
            if len(out) >= MAX_ENTRY_POINTS:
                return out
            out.append(path)
    return out


def _strings(value: Any) -> Iterator[str]:
    """The strings in a JSON value, depth first, without recursion (``exports`` maps nest freely)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def points_into(paths: list[str], folder: str) -> bool:
    """True when one of ``paths`` (relative to the manifest: ``./dist/index.js``, ``dist``) lies in ``folder``."""
    for path in paths:
        norm = posixpath.normpath(path.replace("\\", "/"))
        if norm == folder or norm.startswith(folder + "/"):
            return True
    return False


def is_package_output(name: str, parent: str, sibling_names: set[str]) -> bool:
    """``parent/name`` is a build-output folder that the ``package.json`` beside it names as the package's entry
    point, with no source folder beside it: the published package's own code."""
    if name not in OUTPUT_DIRS or MANIFEST not in sibling_names or not SOURCE_DIRS.isdisjoint(sibling_names):
        return False
    manifest = _read_manifest(os.path.join(parent, MANIFEST))
    return manifest is not None and points_into(entry_points(manifest), name)


def _read_manifest(path: str) -> Any:
    """The parsed manifest, or None when it is no regular file, too large, unreadable or not JSON."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MANIFEST_BYTES:
            return None
        with open(path, "rb") as fh:
            return json.loads(fh.read(MAX_MANIFEST_BYTES + 1).decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
