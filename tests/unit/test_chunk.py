"""Chunker: file, function and doc-section chunks cut from hand-built document trees."""

from __future__ import annotations

import pytest

from sift.ingest.chunk import (
    ChunkLimits,
    _paragraphs,
    _split_section,
    chunk_tree,
    content_hash,
    embedding_text,
    window_texts,
)
from sift.models import ChunkKind, DocumentTree, NodeKind, ParsedNode, SourceType, display_name


def _code_tree(n_lines: int, defs: list[tuple[str, str, int, int, int | None]]) -> DocumentTree:
    nodes = [ParsedNode(0, NodeKind.FILE, "m.py", "m.py", 1, n_lines, docstring="Module doc.")]
    for i, (kind, name, start, end, parent) in enumerate(defs, 1):
        nodes.append(ParsedNode(i, kind, name, f"m.py::{name}", start, end, parent=parent, level=1,
                                signature=f"def {name}()"))
    return DocumentTree("m.py", "python", SourceType.CODE, nodes)


def test_chunk_tree_code_file_function_and_class_header():
    lines = [f"line {i}" for i in range(1, 21)]
    tree = _code_tree(20, [("class", "A", 1, 10, 0), ("method", "A.f", 4, 10, 1), ("function", "g", 12, 15, 0)])
    chunks = chunk_tree(tree, lines)
    kinds = [(c.kind, c.name, c.start_line, c.end_line) for c in chunks]
    assert kinds[0] == (ChunkKind.FILE, "m.py", 1, 20)
    assert (ChunkKind.FUNCTION, "A", 1, 3) in kinds  # class header up to its first method
    assert (ChunkKind.FUNCTION, "A.f", 4, 10) in kinds
    assert (ChunkKind.FUNCTION, "g", 12, 15) in kinds
    assert (ChunkKind.FUNCTION, "m.py (module code)", 16, 20) in kinds  # trailing module-level code
    module = next(c for c in chunks if c.start_line == 16)
    assert (module.symbol, module.part, module.module_code) == ("m.py", None, True)
    for c in chunks[1:]:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


def test_chunk_tree_long_function_split_with_signature_repeated():
    lines = [f"x{i}" for i in range(1, 301)]
    tree = _code_tree(300, [("function", "big", 1, 300, 0)])
    parts = [c for c in chunk_tree(tree, lines, ChunkLimits(function_max_lines=100)) if c.kind == ChunkKind.FUNCTION]
    assert [(c.start_line, c.end_line) for c in parts] == [(1, 100), (101, 200), (201, 300)]
    assert [(c.symbol, c.part, c.module_code, c.name) for c in parts] == [
        ("big", n, False, f"big (part {n})") for n in (1, 2, 3)]
    assert parts[1].text.startswith("def big()  # (continued)\nx101")


def test_chunk_tree_file_chunk_has_outline_and_docstring():
    tree = _code_tree(5, [("function", "g", 1, 5, 0)])
    file_chunk = chunk_tree(tree, ["a"] * 5)[0]
    assert "function def g() (L1-5)" in file_chunk.text
    assert "Module doc." in file_chunk.text


def _doc_tree(lines: list[str], heads: list[tuple[str, int, int, int, int | None]]) -> DocumentTree:
    nodes = [ParsedNode(0, NodeKind.DOCUMENT, "d.md", "d.md", 1, len(lines))]
    for i, (name, level, start, end, parent) in enumerate(heads, 1):
        nodes.append(ParsedNode(i, NodeKind.HEADING, name, f"d.md#{name.lower()}", start, end, parent=parent,
                                level=level))
    return DocumentTree("d.md", "markdown", SourceType.DOC, nodes)


def test_chunk_tree_doc_sections_never_cross_headings():
    lines = ["intro", "", "# A", "", "text a", "", "## B", "", "text b", "# C", "text c"]
    tree = _doc_tree(lines, [("A", 1, 3, 9, 0), ("B", 2, 7, 9, 1), ("C", 1, 10, 11, 0)])
    docs = [c for c in chunk_tree(tree, lines) if c.kind == ChunkKind.DOC]
    spans = [(c.heading_path, c.start_line, c.end_line) for c in docs]
    assert spans == [("d.md", 1, 1), ("A", 3, 5), ("A > B", 7, 9), ("C", 10, 11)]


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [
        ([100], [(1, 1)]),
        ([300, 300, 300], [(1, 3), (5, 5)]),  # 3 paragraphs: first two fit 800, third starts a new chunk
        ([900], [(1, 1)]),  # one long line cannot be split further
        ([500, 100], [(1, 3)]),
        ([300, 600], [(1, 3)]),  # under min_chars: may run over max by min/2 rather than stay tiny
        ([300, 800], [(1, 1), (3, 3)]),
    ],
)
def test_split_section_packs_paragraphs(sizes, expected):
    lines: list[str] = []
    for size in sizes:
        if lines:
            lines.append("")
        lines.append("w" * (size - 1))
    assert _split_section(lines, 1, len(lines), 400, 800) == expected


def test_split_section_blank_section_is_empty():
    assert _split_section(["", "  ", ""], 1, 3, 400, 800) == []


_RST_TILDE_HEADING = ["Yes Parameters", "~~~~~~~~~~~~~~", "", "First paragraph.", "", "Second paragraph."]
_RST_EXAMPLE = ["It goes like this::", "", "    def f():", "", "        return 1", "", "After the example."]
_RST_DIRECTIVE = [".. code-block:: python", "", "    a = 1", "", "    b = 2", "Right after."]
_MD_FENCE = ["Intro.", "", "~~~python", "a = 1", "", "b = 2", "~~~", "", "After."]
_MD_MIXED_FENCE = ["````", "```", "", "still code", "````", "", "After."]
_MD_INLINE_TICKS = ["```not a fence``` here", "", "Next."]


@pytest.mark.parametrize(
    ("lines", "language", "expected"),
    [
        # reST: a tilde underline is no fence, so paragraphs stay paragraphs (before, the rest of the section was
        # one block, cut wherever it reached the size limit)
        (_RST_TILDE_HEADING, "rst", [(1, 2), (4, 4), (6, 6)]),
        # a literal block and a directive are one block with their indented lines, across blank lines
        (_RST_EXAMPLE, "rst", [(1, 5), (7, 7)]),
        (_RST_DIRECTIVE, "rst", [(1, 6)]),  # an unindented line right after the body joins the block
        # Markdown: a fence holds blank lines until a fence of its own characters closes it
        (_MD_FENCE, "markdown", [(1, 1), (3, 7), (9, 9)]),
        (_MD_MIXED_FENCE, "markdown", [(1, 5), (7, 7)]),
        (_MD_INLINE_TICKS, "markdown", [(1, 1), (3, 3)]),  # backticks in the info string: inline code
        # the same lines elsewhere: reST has no fences, Markdown no literal blocks
        (_MD_FENCE, "rst", [(1, 1), (3, 4), (6, 7), (9, 9)]),
        (_RST_EXAMPLE, "markdown", [(1, 1), (3, 3), (5, 5), (7, 7)]),
    ],
)
def test_paragraphs_keep_code_whole(lines: list[str], language: str, expected: list[tuple[int, int]]) -> None:
    assert [(s, e) for s, e, _ in _paragraphs(lines, 1, len(lines), language)] == expected


def test_split_section_keeps_a_rst_section_under_a_tilde_heading_in_paragraphs() -> None:
    # Three paragraphs of 300 characters: two fit a chunk, the third starts the next, as in any section.
    lines = ["Title", "~~~~~", "", "a" * 300, "", "b" * 300, "", "c" * 300]
    assert _split_section(lines, 1, len(lines), 400, 800, "rst") == [(1, 6), (8, 8)]


def test_content_hash_changes_with_what_is_embedded():
    a = content_hash("function", "a.py", "f", None, "x")
    assert a == content_hash("function", "a.py", "f", None, "x")
    assert a != content_hash("function", "b.py", "f", None, "x")
    assert embedding_text("doc", "d.md", "B", "A > B", "t").startswith("d.md | A > B")


def test_chunk_tree_empty_file_has_only_file_chunk():
    tree = DocumentTree("e.py", "python", SourceType.CODE,
                        [ParsedNode(0, NodeKind.FILE, "e.py", "e.py", 1, 1)])
    assert [c.kind for c in chunk_tree(tree, [])] == [ChunkKind.FILE]


@pytest.mark.parametrize(
    ("symbol", "part", "module_code", "name"),
    [
        ("Schema.load", None, False, "Schema.load"),
        ("Schema.load", 2, False, "Schema.load (part 2)"),
        ("fields.py", None, True, "fields.py (module code)"),
        ("fields.py", 3, True, "fields.py (module code) (part 3)"),
        ("Options (advanced)", None, False, "Options (advanced)"),  # a heading's own parentheses are kept
    ],
)
def test_display_name_table(symbol, part, module_code, name):
    assert display_name(symbol, part, module_code) == name


JS = '''import { clamp } from "./math.js";

/**
 * Format a duration in milliseconds as "1h 2m".
 * @param {number} ms
 */
export function formatDuration(ms) {
  return `${Math.floor(ms / 3600000)}h`;
}

// Not a doc comment: a blank line separates it.

function helper() {
  return 1;
}

class Clock {
  /** The current time in milliseconds. */
  now() {
    return Date.now();
  }
}
'''

C = '''#include <stdio.h>

// Print a greeting to standard output.
// Returns the number of characters printed.
int greet(const char *name) {
    return printf("hi %s", name);
}
'''

PY = '''# A comment above a Python function stays outside its chunk: the docstring is inside.
def area(w, h):
    """Return the area of a rectangle."""
    return w * h
'''


def _cut(language: str, path: str, source: str) -> dict[str, tuple[int, int]]:
    from sift.ingest.parsers.code import CodeParser
    from sift.text import split_lines

    tree = CodeParser().parse(path, source, language)
    return {c.symbol: (c.start_line, c.end_line) for c in chunk_tree(tree, split_lines(source))
            if c.kind == ChunkKind.FUNCTION and not c.module_code}


@pytest.mark.parametrize(("language", "path", "source", "expected"), [
    ("javascript", "d.js", JS, {"formatDuration": (3, 9), "helper": (13, 15), "Clock": (17, 17),
                                "Clock.now": (18, 21)}),
    ("c", "g.c", C, {"greet": (3, 7)}),
    ("python", "a.py", PY, {"area": (2, 4)}),
])
def test_a_definition_chunk_starts_at_the_doc_comment_above_it(language, path, source, expected):
    cut = _cut(language, path, source)
    assert {name: cut[name] for name in expected} == expected


def test_module_code_does_not_repeat_a_definitions_doc_comment():
    from sift.ingest.parsers.code import CodeParser
    from sift.text import split_lines

    source = "\n".join(f"const c{i} = {i};" for i in range(6)) + "\n\n" + JS.split("\n", 1)[1]
    chunks = chunk_tree(CodeParser().parse("d.js", source, "javascript"), split_lines(source))
    module = [c for c in chunks if c.module_code]
    fn = next(c for c in chunks if c.symbol == "formatDuration")
    assert fn.text.startswith("/**")
    assert module and all(c.end_line < fn.start_line for c in module)


@pytest.mark.parametrize(("kind", "text", "size", "expected"), [
    ("file", "a\n" * 400, 500, []),  # a file chunk has no windows
    ("function", "x = 1\n", 500, []),  # short: its own vector says it all
    ("function", "a" * 600, 500, []),  # long but one line: one window is the chunk itself
    ("doc", "aaaa\nbbbb\ncccc\n", 8, ["p | n\naaaa\nbbbb", "p | n\ncccc\n"]),  # whole lines, about size each
    ("function", "aaaa\nbbbb\ncccc", 8, ["p | n\naaaa\nbbbb", "p | n\ncccc"]),
    ("doc", "aaaa\nbbbb\n\n", 8, []),  # what is left after the first window is blank: no second one
])
def test_window_texts(kind: str, text: str, size: int, expected: list[str]) -> None:
    assert window_texts(kind, "p", "n", text, size) == expected


TS = """\
export interface Options {
  retries: number;
  onRetry(attempt: number): void;
}

export type Mode = 'fast' | 'safe';

declare module 'host' {
  export function connect(url: string): void;
}

export enum Level { Low, High }

export class Client {
  constructor(private options: Options) {}

  pause(attempt: number): number {
    return 2 ** attempt * 100;
  }
}

export function start(options: Options): Client {
  return new Client(options);
}
"""


@pytest.mark.parametrize(("path", "expected"), [
    ("src/client.ts", {"Options": ChunkKind.TYPE, "Options.onRetry": ChunkKind.TYPE, "Mode": ChunkKind.TYPE,
                       "connect": ChunkKind.TYPE, "Level": ChunkKind.FUNCTION, "Client": ChunkKind.FUNCTION,
                       "Client.pause": ChunkKind.FUNCTION, "start": ChunkKind.FUNCTION}),
    # a declaration file: everything in it declares, nothing implements
    ("types/client.d.ts", {"Options": ChunkKind.TYPE, "Level": ChunkKind.TYPE, "Client": ChunkKind.TYPE,
                           "Client.pause": ChunkKind.TYPE, "start": ChunkKind.TYPE}),
])
def test_typescript_type_only_declarations_are_type_chunks(path, expected):
    from sift.ingest.parsers.code import CodeParser
    from sift.text import split_lines

    chunks = chunk_tree(CodeParser().parse(path, TS, "typescript"), split_lines(TS))
    kinds = {c.symbol: c.kind for c in chunks if c.kind != ChunkKind.FILE}
    assert {name: kinds.get(name) for name in expected} == expected


def test_a_type_chunk_is_embedded_as_a_definition_is():
    args = ("src/a.ts", "Options", None, "interface Options {}")
    assert embedding_text(ChunkKind.TYPE, *args) == embedding_text(ChunkKind.FUNCTION, *args)
    assert window_texts(ChunkKind.TYPE, "src/a.ts", "Options", "x\n" * 600) == []  # no windows: one vector
