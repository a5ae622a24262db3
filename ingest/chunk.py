"""Chunks for the three index levels, cut from a document tree.

- **file**: one per file — path, outline of symbols, module docstring and the head of the content.
- **function**: one per class (header and fields, up to the first method) and per function/method (its code,
  from the doc comment above it where the language documents a definition there: JSDoc, ``///``, ``/** */``);
  long ones are split into windows that repeat the signature. Module-level code outside every definition gets
  window chunks too, so nothing in a code file is unreachable. A type-only declaration (the parser marks it
  ``meta["declaration"]``: a TypeScript interface or type alias, what is under ``declare``, everything in a
  ``.d.ts`` file) is cut the same way into chunks of kind **type**.
- **doc**: sections of about ``min_chars``–``max_chars`` characters, split on blank lines outside code (a
  Markdown fence, a reST literal block or directive), never crossing a heading, each carrying its heading path.

A chunk's ``text`` is the exact source lines ``start_line..end_line`` (so snippets and citations map to lines);
what gets embedded and keyword-indexed is :func:`embedding_text`, which adds the path, name or heading path.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from sift.languages import is_declaration_file
from sift.models import (
    CALLABLE_KINDS,
    CONTAINER_KINDS,
    ChunkDraft,
    ChunkKind,
    DocumentTree,
    NodeKind,
    ParsedNode,
    SourceType,
)

# The chunker's version, stored with every file: a file chunked by another version is chunked again by the next
# ingest even when its content is unchanged. Bump it whenever chunk boundaries or texts change, or what the parse
# records beside them (definitions, call sites).
# 2: a definition's chunk starts at the doc comment above it (JSDoc, ``///``, ``/** */``).
# 3: JavaScript functions assigned to an object, a prototype or the module, and object-literal methods, are
#    definitions; a file comment stops at its copyright or licence lines.
# 4: TypeScript type aliases and body-less functions (``declare function``, overloads) are definitions; a run
#    of overloads is one definition, from its first signature.
# 5: JavaScript and TypeScript exported bindings with a doc comment (``export const parse = …``) are definitions;
#    a comment that only holds directives to tools (``/*#__PURE__*/``, ``// eslint-disable…``) is no doc comment.
# 6: only Markdown (and plain text) has code fences; a reST heading underlined with tildes no longer opens one.
#    A reST literal block or directive is one block with its indented lines, across blank lines.
# 7: a call of a name the calling function binds itself (a parameter, a loop or assigned variable) is marked
#    ``bound_locally`` and is no definition's call site. The chunks are those of 6.
# 8: TypeScript type-only declarations (interfaces, type aliases, what is under ``declare``, everything in a
#    ``.d.ts`` file) are chunks of kind ``type``, not ``function``; their texts are those of 7.
CHUNKING = 8
OUTLINE_MAX_ENTRIES = 80
MODULE_GAP_MIN_LINES = 4
FLAT_CODE_WINDOW = 60


@dataclass(frozen=True, slots=True)
class ChunkLimits:
    """Size limits for chunking (from Settings)."""

    doc_min_chars: int = 400
    doc_max_chars: int = 800
    function_max_lines: int = 120
    file_head_lines: int = 40


def embedding_text(kind: str, path: str, name: str, heading_path: str | None, text: str) -> str:
    """The text that represents a chunk to the embedder and BM25: location and name first, then content."""
    if kind == ChunkKind.DOC:
        return f"{path} | {heading_path or name}\n{text}"
    if kind in (ChunkKind.FUNCTION, ChunkKind.TYPE):
        return f"{path} | {name}\n{text}"
    return text  # the file chunk already starts with its path and outline


# Windows: a function or doc chunk longer than this is also embedded in windows of about this many characters
# (whole lines), each searched on its own, so a question about a passage deep in a long chunk finds it even though
# the chunk's one vector averages over all of it. 500 beat 800 on the vector channel of the dev and spent sets,
# and with windows the ranker's held-out MRR went from 0.644 to 0.661 (lab/NOTEBOOK.md, "Windows").
WINDOW_CHARS = 500
WINDOW_KINDS = (ChunkKind.FUNCTION, ChunkKind.DOC)


def window_texts(kind: str, path: str, name: str, text: str, size: int = WINDOW_CHARS) -> list[str]:
    """What is embedded for each window of a chunk: its path and name, then about ``size`` characters of whole
    lines; ``[]`` for a file chunk or a chunk that fits in one window."""
    if kind not in WINDOW_KINDS or len(text) < size:
        return []
    windows: list[str] = []
    lines: list[str] = []
    n = 0
    for line in text.split("\n"):
        lines.append(line)
        n += len(line) + 1
        if n >= size:
            windows.append("\n".join(lines))
            lines, n = [], 0
    if "".join(lines).strip():
        windows.append("\n".join(lines))
    return [f"{path} | {name}\n{w}" for w in windows] if len(windows) > 1 else []


def text_hash(text: str) -> str:
    """The sha256 of a text (surrogates kept): the key of the embedding cache and of the LLM parser's cache."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def content_hash(kind: str, path: str, name: str, heading_path: str | None, text: str) -> str:
    """Hash of exactly what is embedded: equal hashes never need embedding twice."""
    return text_hash(embedding_text(kind, path, name, heading_path, text))


def _slice(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1 : end])


def chunk_tree(tree: DocumentTree, lines: list[str], limits: ChunkLimits = ChunkLimits()) -> list[ChunkDraft]:
    """All chunks of one file: its file chunk, then function or doc-section chunks."""
    chunks = [_file_chunk(tree, lines, limits)]
    if not lines:
        return chunks
    if tree.source_type == SourceType.CODE:
        if len(tree.nodes) > 1:
            chunks.extend(_symbol_chunks(tree, lines, limits))
        else:
            kind = ChunkKind.TYPE if is_declaration_file(tree.path) else ChunkKind.FUNCTION
            chunks.extend(_windows(tree, lines, 1, len(lines), FLAT_CODE_WINDOW, tree.nodes[0].name, 0, kind=kind))
    else:
        chunks.extend(_doc_chunks(tree, lines, limits))
    return chunks


def _file_chunk(tree: DocumentTree, lines: list[str], limits: ChunkLimits) -> ChunkDraft:
    root = tree.nodes[0]
    parts = [tree.path]
    outline = []
    for node in tree.nodes[1 : OUTLINE_MAX_ENTRIES + 1]:
        indent = "  " * max(0, node.level - 1)
        label = node.signature or node.name
        outline.append(f"{indent}{node.kind} {label} (L{node.start_line}-{node.end_line})")
    if outline:
        parts.append("\n".join(outline))
    if root.docstring:
        parts.append(root.docstring.strip())
    head = _slice(lines, 1, min(len(lines), limits.file_head_lines))
    if head.strip():
        parts.append(head)
    return ChunkDraft(
        kind=ChunkKind.FILE,
        node=0,
        symbol=tree.path,
        start_line=1,
        end_line=max(1, len(lines)),
        text="\n\n".join(parts),
    )


def _chunk_start(tree: DocumentTree, lines: list[str], node: ParsedNode) -> int:
    """Where a definition's chunk starts: at the doc comment just above it, when its language puts the
    documentation there (not Python, whose docstring is inside), so its words are embedded and indexed with it."""
    if tree.language == "python" or not node.docstring or node.start_line < 2:
        return node.start_line
    from sift.ingest.parsers.comments import comment_start, line_comment_markers  # parsers import chunk

    return comment_start(lines, node.start_line - 1, line_comment_markers(tree.language)) + 1


def _symbol_chunks(tree: DocumentTree, lines: list[str], limits: ChunkLimits) -> list[ChunkDraft]:
    out: list[ChunkDraft] = []
    children: dict[int, list[int]] = {}
    for node in tree.nodes[1:]:
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node.index)
    for node in tree.nodes[1:]:
        label = node.qualified_name.split("::", 1)[-1]
        start = _chunk_start(tree, lines, node)
        kind = ChunkKind.TYPE if node.meta.get("declaration") else ChunkKind.FUNCTION
        if node.kind in CALLABLE_KINDS:
            out.extend(_windows(tree, lines, start, node.end_line, limits.function_max_lines, label,
                                node.index, node.signature, kind=kind))
        elif node.kind in CONTAINER_KINDS or node.kind == NodeKind.VARIABLE:  # an object's methods have own chunks
            kids = [tree.nodes[i] for i in children.get(node.index, [])]
            end = node.end_line
            if kids:
                end = max(node.start_line, min(_chunk_start(tree, lines, k) for k in kids) - 1)
            out.extend(_windows(tree, lines, start, end, limits.function_max_lines, label, node.index,
                                node.signature, kind=kind))
    out.extend(_module_gaps(tree, lines, children.get(0, [])))
    return out


def _module_gaps(tree: DocumentTree, lines: list[str], top: list[int]) -> list[ChunkDraft]:
    """Window chunks over module-level code between top-level definitions."""
    spans = sorted((_chunk_start(tree, lines, tree.nodes[i]), tree.nodes[i].end_line) for i in top)
    gaps, cursor = [], 1
    for start, end in spans:
        if start > cursor:
            gaps.append((cursor, start - 1))
        cursor = max(cursor, end + 1)
    if cursor <= len(lines):
        gaps.append((cursor, len(lines)))
    out: list[ChunkDraft] = []
    name = tree.nodes[0].name
    kind = ChunkKind.TYPE if is_declaration_file(tree.path) else ChunkKind.FUNCTION
    for start, end in gaps:
        while start <= end and not lines[start - 1].strip():
            start += 1
        while end >= start and not lines[end - 1].strip():
            end -= 1
        if end < start:
            continue
        nonblank = sum(1 for ln in lines[start - 1 : end] if ln.strip())
        if nonblank >= MODULE_GAP_MIN_LINES:
            out.extend(_windows(tree, lines, start, end, FLAT_CODE_WINDOW, name, 0, module_code=True, kind=kind))
    return out


def _windows(
    tree: DocumentTree,
    lines: list[str],
    start: int,
    end: int,
    max_lines: int,
    name: str,
    node: int,
    signature: str | None = None,
    *,
    module_code: bool = False,
    kind: ChunkKind = ChunkKind.FUNCTION,
) -> list[ChunkDraft]:
    """One chunk of ``kind`` for ``start..end``, or windows of ``max_lines`` (parts 1, 2, …) with the signature
    repeated."""
    end = min(end, len(lines))
    if end < start:
        return []
    if end - start + 1 <= max_lines:
        return [ChunkDraft(kind, node, name, start, end, _slice(lines, start, end), module_code=module_code)]
    out: list[ChunkDraft] = []
    for s in range(start, end + 1, max_lines):
        e = min(end, s + max_lines - 1)
        body = _slice(lines, s, e)
        if s != start and signature:
            body = f"{signature}  # (continued)\n{body}"
        out.append(ChunkDraft(kind, node, name, s, e, body, part=len(out) + 1, module_code=module_code))
    return out


def _doc_chunks(tree: DocumentTree, lines: list[str], limits: ChunkLimits) -> list[ChunkDraft]:
    """Sections of 400–800 characters that never cross a heading."""
    nodes = tree.nodes
    heads = sorted(nodes[1:], key=lambda n: n.start_line)
    titles: dict[int, str] = {}
    for node in nodes[1:]:
        parent_title = titles.get(node.parent) if node.parent else None
        titles[node.index] = f"{parent_title} > {node.name}" if parent_title else node.name
    # Each section's own body runs from its heading to the line before the next heading of any level.
    sections: list[tuple[int, int, int, str]] = []  # (node index, start, end, heading path)
    first = heads[0].start_line if heads else len(lines) + 1
    if first > 1:
        sections.append((0, 1, first - 1, nodes[0].name))
    for i, node in enumerate(heads):
        nxt = heads[i + 1].start_line - 1 if i + 1 < len(heads) else len(lines)
        end = min(node.end_line, nxt) if node.end_line >= node.start_line else nxt
        sections.append((node.index, node.start_line, max(node.start_line, end), titles[node.index]))
    out: list[ChunkDraft] = []
    for index, start, end, path in sections:
        for s, e in _split_section(lines, start, end, limits.doc_min_chars, limits.doc_max_chars,
                                     tree.language):
            out.append(ChunkDraft(ChunkKind.DOC, index, path.rsplit(" > ", 1)[-1], s, e, _slice(lines, s, e),
                                  heading_path=path))
    return out


_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")  # CommonMark: a backtick fence's info has no backtick
_RST_LITERAL = re.compile(r"\s*\.\.\s+[\w:.-]+::|.*::\s*$")  # a directive, or a paragraph ending in "::"


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _paragraphs(lines: list[str], start: int, end: int, language: str) -> list[tuple[int, int, int]]:
    """The ``(start, end, chars)`` of a section's paragraphs: runs of non-blank lines, except that a Markdown
    fenced code example and a reST literal block or directive (``Example::``, ``.. code-block:: python``,
    ``.. note::`` and the indented lines under it) count as one paragraph across their blank lines. reST has no
    fences: a line of tildes there underlines a heading."""
    found: list[tuple[int, int, int]] = []
    s: int | None = None
    last, size = 0, 0  # the block's last non-blank line, its characters
    fence: str | None = None  # the open fence's characters (``` or ~~~, as long as it was opened)
    literal: int | None = None  # the indentation of the reST marker line whose indented body is being read
    for ln in range(start, end + 1):
        text = lines[ln - 1]
        blank = not text.strip()
        if literal is not None and not blank and _indent(text) <= literal:
            literal = None  # the body ended: this line starts a block of its own unless it follows directly
            if last < ln - 1 and s is not None:
                found.append((s, last, size))
                s, size = None, 0
        if blank and fence is None and literal is None:
            if s is not None:
                found.append((s, last, size))
                s, size = None, 0
            continue
        if blank:
            if s is not None:
                size += len(text) + 1
            continue
        if s is None:
            s = ln
        size += len(text) + 1
        last = ln
        if language != "rst":
            opened = _FENCE_OPEN.fullmatch(text)
            if fence is None and opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
                fence = opened.group(1)
            elif fence is not None and text.strip() and set(text.strip()) == {fence[0]} \
                    and len(text.strip()) >= len(fence) and _indent(text) <= 3:
                fence = None
        elif literal is None and _RST_LITERAL.match(text):
            literal = _indent(text)
    if s is not None:
        found.append((s, last, size))
    return found


def _split_section(lines: list[str], start: int, end: int, min_chars: int, max_chars: int,
                   language: str = "") -> list[tuple[int, int]]:
    """Line ranges of one section, packed paragraph by paragraph (``_paragraphs``) up to ``max_chars`` (at least
    ``min_chars``)."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    if end < start:
        return []
    paragraphs = _paragraphs(lines, start, end, language)
    # Split paragraphs larger than max_chars on line boundaries.
    pieces: list[tuple[int, int, int]] = []
    for bs, be, bsize in paragraphs:
        if bsize <= max_chars:
            pieces.append((bs, be, bsize))
            continue
        cs, csize = bs, 0
        for ln in range(bs, be + 1):
            n = len(lines[ln - 1]) + 1
            if csize and csize + n > max_chars:
                pieces.append((cs, ln - 1, csize))
                cs, csize = ln, 0
            csize += n
        pieces.append((cs, be, csize))
    # Pack pieces greedily up to max_chars; a chunk still under min_chars may run over by min_chars / 2 rather
    # than be left tiny. A whole section shorter than min_chars is one chunk: chunks never cross a heading.
    out: list[tuple[int, int]] = []
    cs, ce, csize = pieces[0]
    for ps, pe, psize in pieces[1:]:
        total = csize + psize
        if total > max_chars and (csize >= min_chars or total > max_chars + min_chars // 2):
            out.append((cs, ce))
            cs, ce, csize = ps, pe, psize
        else:
            ce, csize = pe, csize + psize
    out.append((cs, ce))
    return out
