"""``doc_section`` pairs: a Markdown or rST section's opening sentence, heading words masked → the section.

The target is the section's own text, as sift chunks it: from the heading line to the line before the next
heading of any level, without trailing blank lines or the link label of the next section (``(label)=``,
``.. _label:``). The query is the first sentence of the section's first paragraph (lists, tables, code,
directives and badge rows skipped). Changelogs and release-note sections (headings like ``2.0.1``) are left
out: their text says what changed, not what the project does.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from markdown_it.token import Token

from lab.train.pairs import Pair, ParsedFile, is_changelog
from lab.train.text import first_sentence, mask_keys, query_from
from sift.ingest.parsers.markdown import make_markdown, plain_text
from sift.ingest.parsers.rst import strip_inline
from sift.models import NodeKind, SourceType

_LABEL_LINE = ("(", ".. _")
_VERSION_HEADING = re.compile(r"^(?:version |release |v)?\d+(?:\.\d+)+\b", re.IGNORECASE)
# Unindented lines that open something other than a paragraph: bullets, enumerations, field lists, doctests,
# line blocks, grid and simple tables, transitions, explicit markup and literal-block markers.
_RST_BLOCK = re.compile(
    r"(?:[-*+\u2022](?:\s|$)|(?:\d+|[a-zA-Z#])[.)]\s|\((?:\d+|[a-zA-Z#])\)\s|:[^:\s][^:]*:(?:\s|$)|>>>|\|(?:\s|$)"
    r"|[+=][-=+]|([-=~^\"'`#*_])\1{3,}\s*$|\.\.(?:\s|$)|::\s*$)"
)
_RST_SUBSTITUTIONS = re.compile(r"^(?:\|[^|]+\|_?\s*)+$")  # a row of |badge| substitutions


def section_pairs(f: ParsedFile) -> list[Pair]:
    """``doc_section`` pairs for the headings of one Markdown or rST file (none for changelogs)."""
    tree = f.tree
    if tree.source_type != SourceType.DOC or is_changelog(f.path) or tree.language not in ("markdown", "rst"):
        return []
    paragraphs = md_paragraphs(f.lines) if tree.language == "markdown" else None
    heads = [n for n in tree.nodes if n.kind == NodeKind.HEADING]
    out: list[Pair] = []
    for i, node in enumerate(heads):
        if _VERSION_HEADING.match(node.name):
            continue  # release notes under another file name (``docs/versions.rst``)
        end = min(node.end_line, heads[i + 1].start_line - 1) if i + 1 < len(heads) else node.end_line
        end = trim_end(f.lines, node.start_line, end)
        body_start = node.body_start_line or node.start_line + 1
        if paragraphs is not None:
            paragraph = first_in(paragraphs, body_start, end)
        else:
            paragraph = rst_paragraph(f.lines[body_start - 1 : end])
        if not paragraph:
            continue
        query = query_from(first_sentence(paragraph), mask_keys([node.name]))
        if query:
            out.append(
                Pair("doc_section", query, f.path, node.start_line, end, "heading", node.qualified_name)
            )
    return out


def trim_end(lines: Sequence[str], start: int, end: int) -> int:
    """``end`` moved up past trailing blank lines and the link label of the next section."""
    while end > start:
        s = lines[end - 1].strip()
        if s and not (s.startswith(_LABEL_LINE) and (s.endswith(")=") or s.endswith(":"))):
            break
        end -= 1
    return end


def md_paragraphs(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(1-based first line, plain text) of every top-level paragraph of a Markdown document that is prose.

    The whole document is parsed at once, so reference-style links (``[Pool][]``) resolve to their text;
    paragraphs made only of images (badge rows) are left out.
    """
    tokens = make_markdown().parse("\n".join(lines))
    out: list[tuple[int, str]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "paragraph_open" and tok.level == 0 and tok.map and not _only_images(tokens[i + 1]):
            out.append((tok.map[0] + 1, " ".join(plain_text(tokens[i + 1].children).split())))
    return out


def _only_images(inline: Token) -> bool:
    """Whether an inline token shows nothing but images (and the links around them)."""
    stack = list(inline.children or [])
    seen_image = False
    while stack:
        tok = stack.pop()
        if tok.type == "image":
            seen_image = True
        elif tok.type in ("text", "code_inline") and tok.content.strip():
            return False
        elif tok.children:
            stack.extend(tok.children)
    return seen_image


def first_in(paragraphs: list[tuple[int, str]], start: int, end: int) -> str | None:
    """The text of the first paragraph that starts within lines ``start``–``end``."""
    k = bisect.bisect_left(paragraphs, (start, ""))
    if k < len(paragraphs) and paragraphs[k][0] <= end:
        return paragraphs[k][1]
    return None


def rst_paragraph(body: Sequence[str]) -> str | None:
    """The plain text of the first unindented paragraph of an rST section body (lists, tables, directives,
    field lists, doctests, literal blocks and badge rows skipped)."""
    i, n = 0, len(body)
    while i < n:
        line = body[i]
        if not line.strip() or line[:1].isspace():
            i += 1
            continue
        block_start = bool(_RST_BLOCK.match(line))
        para = []
        while i < n and body[i].strip() and not body[i][:1].isspace():
            para.append(body[i].strip())
            i += 1
        text = " ".join(para)
        if block_start or _RST_SUBSTITUTIONS.match(text):
            continue
        text = text[:-2].rstrip() + ":" if text.endswith("::") else text
        return strip_inline(text)
    return None
