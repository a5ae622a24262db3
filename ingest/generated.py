"""What the walk counts as generated rather than authored, by name, and the one exception to it.

Dependency trees, build output, caches and virtualenvs (``VENDORED_DIRS``), lock files, minified bundles and
source maps are generated; binary extensions hold no text. The walker (``walk.py``) skips them. A minified bundle
is known by its name (``.min.js``) or, for a script or stylesheet named like source (a package's ``plugin/utc.js``
built as one line), by its text: ``minified``.

The exception: a build-output folder (``dist``, ``build``) that is all the code a published package has. In a
repository such a folder repeats the sources beside it. A package as published to npm often ships nothing else:
its ``package.json`` points the entry points (``main``, ``module``, ``types``, ``exports`` …) into ``dist/`` and no
source folder (``src``, ``lib``, ``source``) sits beside it. Then the folder is the package's code, and skipping it
would leave almost nothing to answer from (a README and a manifest). ``package_output`` says so; a Python
``build/`` has no ``package.json`` and stays skipped. Packages often build the same modules several times
(``dist/cjs``, ``dist/esm``, ``dist/esm-browser``): then only the build the first entry point names is kept
(``types`` before ``module`` before ``main`` …), so that search does not return each definition once per build.

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

# Dependency trees, build output, caches and virtualenvs: generated, not authored in the repository.
VENDORED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "vendor",
        "third_party",
        "dist",
        "build",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "site-packages",
        "coverage",
        "htmlcov",
        ".next",
        ".nuxt",
        ".sift",  # sift's own data directory, which an ingest of the folder it sits in would otherwise read
    }
)
# `target` is only build output when it sits beside a Cargo or Maven project file.
BUILD_TARGET_MARKERS = frozenset({"Cargo.toml", "pom.xml"})

LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "Pipfile.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
    }
)
MINIFIED_SUFFIXES = (".min.js", ".min.css", ".map")
MINIFIABLE = frozenset({".js", ".mjs", ".cjs", ".css"})
# GitHub Linguist's test for a minified script or stylesheet: lines longer than this on average.
MINIFIED_LINE = 110
# Shorter files are kept whatever their lines: a one-line module (a regex, a re-export) is source, and a short
# minified one costs little.
MINIFIED_MIN_CHARS = 500


def minified(name: str, text: str) -> bool:
    """A script or stylesheet (by its extension) of at least ``MINIFIED_MIN_CHARS`` whose lines are longer than
    ``MINIFIED_LINE`` characters on average: a minified bundle, whatever its name."""
    if os.path.splitext(name)[1].lower() not in MINIFIABLE or len(text) < MINIFIED_MIN_CHARS:
        return False
    return len(text) / (text.count("\n") + 1) > MINIFIED_LINE


BINARY_EXTENSIONS = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff", ".psd", ".avif",
        # archives and packages
        ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar", ".war", ".whl", ".egg",
        # compiled objects
        ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".lib", ".obj", ".class", ".pyc", ".pyo", ".pyd", ".wasm",
        ".bin",
        # media and fonts
        ".mp3", ".mp4", ".wav", ".ogg", ".flac", ".avi", ".mov", ".webm", ".mkv",
        ".ttf", ".otf", ".woff", ".woff2", ".eot",
        # office documents, databases, serialized data and model weights
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".sqlite", ".sqlite3", ".db",
        ".npy", ".npz", ".pkl", ".pickle", ".parquet", ".h5", ".pt", ".onnx", ".safetensors",
    }
)  # fmt: skip

OUTPUT_DIRS = frozenset({"dist", "build"})
SOURCE_DIRS = frozenset({"src", "lib", "source", "sources"})
ENTRY_FIELDS = ("types", "typings", "module", "main", "exports", "browser", "bin")  # in order of preference
MANIFEST = "package.json"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_ENTRY_POINTS = 10_000  # strings read from the entry fields of one manifest at most


def entry_points(manifest: Any) -> list[str]:
    """The paths a ``package.json`` (parsed) names in its entry fields and in their nested ``exports`` and
    ``browser`` maps, at most ``MAX_ENTRY_POINTS``."""
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


def output_part(paths: list[str], folder: str) -> str | None:
    """Where in ``folder`` the first of ``paths`` (relative to the manifest: ``./dist/esm/main.js``) lies: the
    subfolder holding it (``esm``), ``""`` for a file directly in ``folder`` or the folder itself, None when no
    path lies in ``folder``."""
    for path in paths:
        norm = posixpath.normpath(path.replace("\\", "/"))
        if norm == folder:
            return ""
        if norm.startswith(folder + "/"):
            rest = norm[len(folder) + 1:]
            return rest.split("/", 1)[0] if "/" in rest else ""
    return None


def package_output(name: str, parent: str, sibling_names: set[str]) -> str | None:
    """For a build-output folder ``parent/name`` that the ``package.json`` beside it names as the package's entry
    point, with no source folder beside it: the part of it to keep (``output_part``: one build's subfolder, or
    ``""`` for all of it). None when the folder is build output to skip."""
    if name not in OUTPUT_DIRS or MANIFEST not in sibling_names or not SOURCE_DIRS.isdisjoint(sibling_names):
        return None
    manifest = _read_manifest(os.path.join(parent, MANIFEST))
    return None if manifest is None else output_part(entry_points(manifest), name)


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
