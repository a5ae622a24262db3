""".gitignore rules as the walk applies them: each file's patterns are in force below its folder, the deepest file
with a matching pattern decides, and its last matching pattern wins (git's order). A malformed line is dropped, as
git drops it.
"""

from __future__ import annotations

import logging

import pathspec

log = logging.getLogger(__name__)

#: The rules in force in a folder: (the folder's path prefix, its .gitignore's patterns), outermost first.
IgnoreRules = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


def is_ignored(rules: IgnoreRules, rel: str, *, is_dir: bool) -> bool:
    """Apply .gitignore rules like git: the deepest file with a matching pattern decides, last pattern wins."""
    for prefix, spec in reversed(rules):
        sub = rel[len(prefix) :] + ("/" if is_dir else "")
        include = spec.check_file(sub).include
        if include is not None:
            return include
    return False


def parse_spec(path: str, data: bytes) -> pathspec.GitIgnoreSpec | None:
    """Parse a .gitignore-style file's bytes; None when it has no patterns."""
    lines = data.decode("utf-8-sig", errors="replace").split("\n")
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:
        # git silently drops a malformed line (e.g. a lone "!"); do the same rather than fail the walk.
        log.debug("malformed pattern in %s; dropping invalid lines", path)
        spec = pathspec.GitIgnoreSpec.from_lines([line for line in lines if _is_valid_pattern(line)])
    return spec if len(spec.patterns) else None


def _is_valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True
