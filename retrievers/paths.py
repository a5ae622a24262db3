"""What a repository path holds, for ranking: test code, release notes, project meta files, type stubs.

One owner for these patterns: fusion lowers such hits unless the query asks for them, and the extractive
writer prefers explanations over them, so both must agree on which paths they are.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sift.languages import is_declaration_file

_TEST = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__|testing)/"
    r"|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$"
)
_CHANGELOG = re.compile(
    r"(^|/)(changelog|changes|history|news|releases?|upgrading|migrating|migrations?)([._-][^/]*)?(\.\w+)?$"
    r"|(^|/)changelog\.d/", re.I)
# Files about the project rather than its code or usage: they mention names without explaining them.
_PROJECT_META = re.compile(r"(^|/)(pkg-info|authors|contributing)([._-][^/]*)?$|(^|/)\.github/", re.I)


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """Test code: a ``tests/``, ``spec/`` or ``__tests__/`` folder, ``test_*``, ``*_test.*``, ``*.test.*``,
    ``*.spec.*`` or ``conftest.py``."""
    return bool(_TEST.search(path))


@lru_cache(maxsize=65536)
def is_changelog_path(path: str) -> bool:
    """Release or upgrade notes: ``CHANGELOG``, ``CHANGES``, ``HISTORY``, ``NEWS``, ``upgrading``…, ``changelog.d/``."""
    return bool(_CHANGELOG.search(path))


@lru_cache(maxsize=65536)
def is_notes_path(path: str) -> bool:
    """Release notes or project meta files (``AUTHORS``, ``CONTRIBUTING``, ``PKG-INFO``, ``.github/``)."""
    return is_changelog_path(path) or bool(_PROJECT_META.search(path))


def is_stub_path(path: str) -> bool:
    """A type stub (``.pyi``, or TypeScript's ``.d.ts``), which repeats a definition that lives elsewhere."""
    return path.endswith(".pyi") or is_declaration_file(path)
