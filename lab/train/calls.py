"""``test_name`` and ``test_doc`` pairs: a Python test's name as words, or its docstring's first sentence with
the target's name masked → the package definition the test exercises.

A test's call refs (from the tree-sitter code tree) are resolved to definitions outside test code: first by the
import-qualified name the parser recorded (``pluggy._hooks.HookImpl``), else by a bare or attribute name that
only one package definition has. Calls whose name the test file defines itself, and attribute calls whose
method name is common on built-in types (``x.get``, ``x.append``), are not resolved: their target is a guess.
Of the targets a test reaches, the one sharing the most words with the test's name (and its test class's name)
wins; a tie, or several targets none of which the name mentions, makes the test ambiguous and it is skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from lab.train.pairs import CODE_KINDS, Pair, ParsedFile, is_test
from lab.train.text import (
    MIN_WORDS,
    docstring_summary,
    mask_keys,
    query_from,
    strip_test_lead,
    word_count,
    words_from_test_name,
)
from sift.models import CALLABLE_KINDS, ParsedNode

# Method names of built-in types and file objects: ``x.get(...)`` in a test is far more often a dict's than
# the package's one ``get``. A fixed list, so the output does not depend on the Python version.
_COMMON_METHOD_TEXT = """append add clear close copy count decode discard encode endswith extend find format get index insert
items join keys lower lstrip partition pop popitem read readline readlines remove replace reverse rsplit
rstrip seek send set setdefault sort split splitlines startswith strip tell title update upper values
write writelines flush fileno open run start stop wait result cancel done"""
COMMON_METHODS = frozenset(_COMMON_METHOD_TEXT.split())
# At most this many test names per target, so one heavily tested function does not fill the source.
PER_TARGET = 3
_SEGMENT = re.compile(r"\.")


@dataclass(slots=True)
class DefinitionIndex:
    """Package definitions outside test code, by dotted module path and by bare name."""

    by_qual: dict[str, tuple[str, ParsedNode]] = field(default_factory=dict)
    by_name: dict[str, list[tuple[str, ParsedNode]]] = field(default_factory=dict)

    def resolve(
        self, callee: str, qualified: str | None, local: frozenset[str]
    ) -> tuple[str, ParsedNode] | None:
        """The one definition a call names, or None when it is outside the package or ambiguous."""
        if qualified is not None and qualified in self.by_qual:
            return self.by_qual[qualified]
        segments = _SEGMENT.split(callee)
        name = segments[-1]
        if name in local or name.startswith("__") or (len(segments) > 1 and name in COMMON_METHODS):
            return None
        found = self.by_name.get(name, [])
        return found[0] if len(found) == 1 else None


def module_path(path: str) -> str:
    """The dotted module of a Python file: ``src/pluggy/_hooks.py`` → ``pluggy._hooks``."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def index_definitions(files: Sequence[ParsedFile]) -> DefinitionIndex:
    """Index the definitions of every Python file outside test code (stubs left out: they repeat others)."""
    index = DefinitionIndex()
    for f in files:
        if f.tree.language != "python" or is_test(f.path) or f.path.endswith(".pyi"):
            continue
        module = module_path(f.path)
        for node in f.tree.nodes:
            if node.kind not in CODE_KINDS:
                continue
            qual = node.qualified_name.split("::", 1)[1]
            index.by_qual.setdefault(f"{module}.{qual}" if module else qual, (f.path, node))
            index.by_name.setdefault(node.name, []).append((f.path, node))
    return index


def pairs_from_tests(files: Sequence[ParsedFile]) -> list[Pair]:
    """``test_name`` and ``test_doc`` pairs for every Python test function of the repository."""
    index = index_definitions(files)
    per_target: Counter[tuple[str, str, int]] = Counter()
    out: list[Pair] = []
    for f in files:
        if f.tree.language != "python" or not is_test(f.path):
            continue
        nodes = f.tree.nodes
        local = frozenset(n.name for n in nodes[1:])
        calls: dict[int, list[tuple[str, ParsedNode]]] = {}
        for ref in f.tree.refs:
            target = index.resolve(ref.callee, ref.callee_qualified, local) if ref.caller else None
            if target is not None:
                calls.setdefault(ref.caller, []).append(target)  # type: ignore[arg-type]
        for node in nodes[1:]:
            words = words_from_test_name(node.name) if node.kind in CALLABLE_KINDS else None
            if words is None or node.index not in calls:
                continue
            parent = nodes[node.parent] if node.parent else None
            hint = [node.name] + ([parent.name] if parent is not None else [])
            chosen = _choose(calls[node.index], mask_keys(hint) - mask_keys(["test"]))
            if chosen is None:
                continue
            path, target = chosen
            queries = {"test_name": words if word_count(words) >= MIN_WORDS else None}
            if node.docstring:
                queries["test_doc"] = query_from(
                    strip_test_lead(docstring_summary(node.docstring)), mask_keys([target.name])
                )
            for source, query in queries.items():
                key = (source, path, target.start_line)
                if query is None or per_target[key] >= PER_TARGET:
                    continue
                per_target[key] += 1
                out.append(
                    Pair(
                        source,
                        query,
                        path,
                        target.start_line,
                        target.end_line,
                        str(target.kind),
                        target.qualified_name,
                    )
                )
    return out


def _choose(targets: list[tuple[str, ParsedNode]], words: frozenset[str]) -> tuple[str, ParsedNode] | None:
    """The target whose name shares the most words with the test's; None on a tie or when the test reaches
    several targets and names none of them."""
    distinct: dict[tuple[str, int], tuple[str, ParsedNode]] = {}
    for path, node in targets:
        distinct.setdefault((path, node.start_line), (path, node))
    scored = sorted(
        ((len(mask_keys([node.name]) & words), path, node.start_line) for path, node in distinct.values()),
        reverse=True,
    )
    best = scored[0][0]
    if best == 0:
        return next(iter(distinct.values())) if len(distinct) == 1 else None
    if len(scored) > 1 and scored[1][0] == best:
        return None
    return distinct[(scored[0][1], scored[0][2])]
