"""Self-supervised (query → target span) pairs from sift's own document trees of one repository.

Every file the ingest walk would index is parsed with sift's ``ParserRegistry`` (tree-sitter code trees,
Markdown/rST heading trees); the pairs come from those trees, so a target span is exactly a node sift indexes:

- ``docstring`` / ``jsdoc``: a Python docstring's (JS/TS doc comment's) first sentence, the symbol's own name
  masked → the definition (class, function, method…), outside test code;
- ``module_doc``: a module docstring's (a JS/TS file's header comment's) first sentence, the module's name
  masked → the whole file;
- ``doc_section``: the first sentence of a Markdown/rST section's first paragraph, the heading's words masked →
  the section's own text (heading line to the line before the next heading, trailing blanks and link labels
  left out), outside changelogs (see ``sections.py``);
- ``test_name``: a Python test function's name as words (``test_parse_empty_input`` → ``parse empty input``) →
  the one package definition it calls that the name points at (see ``calls.py``);
- ``test_doc``: that test's docstring's first sentence, the target's name masked → the same definition.

Queries are then filtered (``text.query_from``), de-duplicated (a query that points at two different targets is
dropped, unless all but one are type stubs), and capped per package and source so none dominates.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lab.train.text import docstring_summary, mask_keys, query_from
from sift.ingest.parsers import ParserRegistry
from sift.ingest.walk import walk
from sift.languages import classify
from sift.models import CALLABLE_KINDS, CONTAINER_KINDS, DocumentTree, NodeKind, SourceType
from sift.retrievers.paths import is_changelog_path, is_test_path  # the one owner of path classes

SOURCES = ("docstring", "jsdoc", "module_doc", "doc_section", "test_name", "test_doc")
CODE_KINDS = frozenset(k.value for k in CONTAINER_KINDS | CALLABLE_KINDS)
STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
# Per package and source: enough pairs from every package, none from one package drowning the rest.
DEFAULT_CAP = 200


@dataclass(frozen=True, slots=True)
class Pair:
    """One train question: ``query`` should find lines ``start_line``–``end_line`` of ``path``."""

    source: str
    query: str
    path: str
    start_line: int
    end_line: int
    target_kind: str  # the node kind: function, method, class…, file, heading
    target: str  # the node's qualified name (``path::Class.method``, ``path#anchor``, or the path)


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A file of the repository with its lines and the tree sift's parser made of it."""

    path: str
    lines: list[str]
    tree: DocumentTree


def parse_repo(root: Path, registry: ParserRegistry | None = None) -> list[ParsedFile]:
    """Every code and doc file the ingest walk yields under ``root``, parsed, in path order (files whose parser
    failed are left out: their tree is flat text)."""
    registry = registry or ParserRegistry()
    out: list[ParsedFile] = []
    for walked in walk(root):
        language, source_type = classify(walked.path)
        if source_type == SourceType.TEXT:
            continue
        tree, error = registry.parse(walked.path, walked.text, language, source_type)
        if error is None and tree.parser != "text":
            out.append(ParsedFile(walked.path, walked.text.split("\n"), tree))
    return out


def is_test(path: str) -> bool:
    """Whether ``path`` is test code, as sift's ranking decides it."""
    return is_test_path(path)


def is_changelog(path: str) -> bool:
    """Whether ``path`` is a changelog or upgrade notes, as sift's ranking decides it."""
    return is_changelog_path(path)


def is_stub(path: str) -> bool:
    """Whether ``path`` is a type stub (``.pyi``, ``.d.ts``) that repeats a definition living elsewhere."""
    return path.endswith(STUB_SUFFIXES)


def docstring_pairs(f: ParsedFile) -> list[Pair]:
    """``docstring``/``jsdoc`` pairs for the definitions of one code file, and its ``module_doc`` pair."""
    tree = f.tree
    if tree.source_type != SourceType.CODE or is_test(f.path):
        return []
    source = "docstring" if tree.language == "python" else "jsdoc"
    out: list[Pair] = []
    for node in tree.nodes:
        if not node.docstring or (node.kind not in CODE_KINDS and node.kind != NodeKind.FILE):
            continue
        if node.kind == NodeKind.FILE:
            query = query_from(docstring_summary(node.docstring), mask_keys(_module_names(f.path)))
            if query:
                out.append(Pair("module_doc", query, f.path, 1, node.end_line, "file", f.path))
            continue
        query = query_from(docstring_summary(node.docstring), mask_keys([node.name]))
        if query:
            out.append(
                Pair(source, query, f.path, node.start_line, node.end_line, str(node.kind), node.qualified_name)
            )
    return out


def _module_names(path: str) -> list[str]:
    """The names a module goes by: its file stem, and its directory for an ``__init__``/``index`` file."""
    p = PurePosixPath(path)
    stem = p.name.split(".", 1)[0]
    names = [stem]
    if stem in ("__init__", "index", "__main__", "main", "mod") and p.parent.name:
        names.append(p.parent.name)
    return names


def select(pairs: Iterable[Pair], kb: str, cap: int = DEFAULT_CAP) -> list[Pair]:
    """De-duplicated pairs, at most ``cap`` per source (a seeded sample of ``kb``'s pairs), in a fixed order."""
    by_query: dict[str, list[Pair]] = {}
    for p in sorted(pairs, key=_order):
        by_query.setdefault(" ".join(p.query.lower().split()), []).append(p)
    kept: list[Pair] = []
    for group in by_query.values():
        targets = {(p.path, p.start_line, p.end_line): p for p in group}
        if len(targets) > 1:
            real = [p for p in targets.values() if not is_stub(p.path)]
            if len(real) != 1:
                continue  # the same words describe different things: no single right answer
            group = [p for p in group if p.path == real[0].path and p.start_line == real[0].start_line]
        kept.append(group[0])
    out: list[Pair] = []
    for source in SOURCES:
        mine = [p for p in kept if p.source == source]
        if len(mine) > cap:
            mine = sorted(random.Random(seed(kb, source)).sample(mine, cap), key=_order)
        out.extend(mine)
    return out


def seed(kb: str, source: str) -> int:
    """A sampling seed that depends only on the package and source names (not on Python's hash salt)."""
    return int.from_bytes(hashlib.sha256(f"{kb}/{source}".encode()).digest()[:8], "big")


def _order(p: Pair) -> tuple[str, str, int, int, str]:
    return (p.source, p.path, p.start_line, p.end_line, p.query)
