"""reStructuredText documents → heading tree, literal blocks and glossary terms, without docutils.

Section titles follow docutils' rules: a title starts a body element (after a blank line, a title, or an
unindent) at column 0; it is underlined, or over- and underlined with the same line, in any ASCII punctuation
character. Each adornment style (character, with or without overline) gets the next level when first seen. An
underline shorter than the title is accepted when it is at least 4 characters long (docutils warns, but still
makes a section) and rejected otherwise. A lone punctuation line between blank lines is a transition. Literal
blocks (after ``::``, and bodies of code directives) are skipped, as is every indented line: docutils never
starts a section inside an indented block.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sift.ingest.parsers.doc_terms import (
    TERM_NAME_LIMIT,
    HeadingDraft,
    build_tree,
    clip,
    collapse,
    definition_terms,
    document_tree,
    indent_of,
    section_index,
)
from sift.ingest.parsers.text import line_count
from sift.models import DocumentTree, ParsedEntity

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CODE_DIRECTIVES = frozenset(
    {"code-block", "code", "sourcecode", "literalinclude", "highlight", "parsed-literal"}
)
_DOCTEST_DIRECTIVES = frozenset({"doctest", "testcode", "testoutput", "testsetup", "testcleanup", "ipython"})
_VERBATIM_DIRECTIVES = frozenset({"math", "raw", "productionlist", "graphviz", "mermaid", "csv-table"})
_TRANSITION_MIN = 4

_DIRECTIVE = re.compile(r"\.\.\s+([\w:.+-]+)::(?:\s+(.*))?$")
_BLOCK_START = re.compile(
    r"(?:\.\.(?:\s|$)"  # explicit markup: directives, comments, targets
    r"|__(?:\s|$)"  # anonymous target
    r"|[-*+\u2022\u2023\u2043](?:\s|$)"  # bullet list item
    r"|(?:\d+|[a-zA-Z#]|[ivxlcdmIVXLCDM]+)[.)]\s|\((?:\d+|[a-zA-Z#])\)\s"  # enumerated list item
    r"|:[^:\s][^:]*:(?:\s|$)"  # field list item
    r"|>>>"  # doctest block
    r"|\|(?:\s|$)"  # line block
    r"|\+[-=]"  # grid table border
    r")"
)
_BOLD_LEAD = re.compile(r"(?:[-*+\u2022]\s+)?\*\*(?P<term>[^*\n]+?)\*\*(?P<rest>.*)$")
_LEAD_SEPARATORS = (":", "—", "–", "- ", "-- ")

# Inline markup, innermost first, each replaced by its visible text.
_INLINE = [
    (re.compile(r"``(.+?)``"), r"\1"),
    (re.compile(r":[\w:.+-]+:`~[^`]*?\.?([^`.]+)`"), r"\1"),  # :func:`~pkg.mod.name` shows ``name``
    (re.compile(r":[\w:.+-]+:`([^`<]+?)\s*<[^`>]*>`"), r"\1"),  # :role:`title <target>`
    (re.compile(r":[\w:.+-]+:`!?([^`]+)`"), r"\1"),
    (re.compile(r"`([^`<]+?)\s*<[^`>]*>`(?:__?)?"), r"\1"),  # `text <url>`_ and `title <target>`
    (re.compile(r"`([^`]+)`(?::[\w:.+-]+:|__?)?"), r"\1"),
    (re.compile(r"\*\*(.+?)\*\*"), r"\1"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"\1"),
    (re.compile(r"\[(?:\d+|#[\w-]*|\*)\]_"), ""),  # footnote references
    (re.compile(r"(?<![\w_])([A-Za-z0-9]+(?:[-.+:_][A-Za-z0-9]+)*)__?(?![\w])"), r"\1"),  # simple reference
]
_ESCAPE = re.compile(r"\\([\x20-\x7e])")
_ESCAPE_BASE = 0xF0000  # a private-use plane: never in real text
_ESCAPED = re.compile("[\U000f0020-\U000f007e]")


@dataclass(slots=True)
class _Literal:
    """A literal (code) region: its lines are never titles or terms."""

    start: int  # 0-based first line of the literal text (or of the directive)
    end: int  # 0-based last non-blank line
    lang: str


def strip_inline(text: str) -> str:
    """rST inline markup removed: ``code``, *emphasis*, **strong**, roles, references → their visible text."""
    # Escaped characters are hidden from the markup patterns, then restored; an escaped space vanishes.
    text = _ESCAPE.sub(lambda m: "" if m.group(1).isspace() else chr(_ESCAPE_BASE + ord(m.group(1))), text)
    for pattern, repl in _INLINE:
        text = pattern.sub(repl, text)
    return collapse(_ESCAPED.sub(lambda m: chr(ord(m.group(0)) - _ESCAPE_BASE), text))


def column_width(text: str) -> int:
    """Display width as docutils measures titles: wide East Asian characters count 2, combining marks 0."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text
    )


def _adornment(line: str) -> str | None:
    """The adornment string if ``line`` is one punctuation character repeated from column 0, else None."""
    s = line.rstrip()
    if s and s[0] in _PUNCTUATION and s == s[0] * len(s):
        return s
    return None


def _block_end(lines: Sequence[str], start: int, indent: int) -> tuple[int, int]:
    """From ``start``, lines that are blank or indented past ``indent``: (first line after, last non-blank)."""
    j, last = start, start - 1
    while j < len(lines) and (not lines[j].strip() or indent_of(lines[j]) > indent):
        if lines[j].strip():
            last = j
        j += 1
    return j, last


def find_literals(lines: Sequence[str]) -> list[_Literal]:
    """Literal regions at any depth: ``::`` blocks (indented or quoted) and bodies of code directives."""
    found: list[_Literal] = []
    i, n = 0, len(lines)
    while i < n:
        stripped = lines[i].strip()
        indent = indent_of(lines[i])
        directive = _DIRECTIVE.match(stripped)
        if directive:
            name = directive.group(1).split(":")[-1]
            argument = (directive.group(2) or "").strip()
            if name in _CODE_DIRECTIVES | _DOCTEST_DIRECTIVES | _VERBATIM_DIRECTIVES:
                j, last = _block_end(lines, i + 1, indent)
                lang = name if name in _DOCTEST_DIRECTIVES else argument.split()[0] if argument else ""
                found.append(_Literal(i, max(i, last), lang if name not in _VERBATIM_DIRECTIVES else name))
                i = j
                continue
        elif stripped.endswith("::") and i + 1 < n and not lines[i + 1].strip():
            k = i + 1
            while k < n and not lines[k].strip():
                k += 1
            if k < n and indent_of(lines[k]) > indent:
                j, last = _block_end(lines, k, indent)
                found.append(_Literal(k, last, ""))
                i = j
                continue
            if k < n and indent_of(lines[k]) == indent and lines[k].strip()[0] in _PUNCTUATION:
                quote = lines[k].strip()[0]
                j = k
                while j < n and lines[j].strip().startswith(quote) and indent_of(lines[j]) == indent:
                    j += 1
                found.append(_Literal(k, j - 1, ""))
                i = j
                continue
        i += 1
    return found


def _overline_title(lines: Sequence[str], i: int, over: str) -> str | None:
    """The title text if lines ``i..i+2`` are overline, title, identical underline (docutils' checks)."""
    if i + 2 >= len(lines):
        return None
    title, under = lines[i + 1].rstrip(), lines[i + 2].rstrip()
    if not title.strip() or _adornment(title) or under != over:
        return None
    if column_width(title) > len(over) and len(over) < _TRANSITION_MIN:
        return None
    return title.strip()


def find_titles(
    lines: Sequence[str], literal_lines: set[int]
) -> list[tuple[tuple[str, bool], str, int, int]]:
    """Section titles as (style, raw title, 0-based first line, 0-based first body line), in order."""
    titles: list[tuple[tuple[str, bool], str, int, int]] = []
    prev = "blank"  # blank | para | block | indented | title: what the previous line was
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if i in literal_lines or (line.strip() and line[0].isspace()):
            prev, i = "indented", i + 1
            continue
        if not line.strip():
            prev, i = "blank", i + 1
            continue
        if prev == "para":  # continuation of a paragraph: never a title
            i += 1
            continue
        over = _adornment(line)
        if over is not None:
            title = _overline_title(lines, i, over)
            if title is not None:
                titles.append(((over[0], True), title, i, i + 3))
                prev, i = "title", i + 3
                continue
            at_end = i + 1 >= n or not lines[i + 1].strip()
            prev = "block" if at_end and len(over) >= _TRANSITION_MIN else "para"  # transition, or plain text
            i += 1
            continue
        if _BLOCK_START.match(line):
            prev, i = "block", i + 1
            continue
        under = _adornment(lines[i + 1]) if i + 1 < n and i + 1 not in literal_lines else None
        if under is not None and (column_width(line.rstrip()) <= len(under) or len(under) >= _TRANSITION_MIN):
            titles.append(((under[0], False), line.strip(), i, i + 2))
            prev, i = "title", i + 2
            continue
        prev, i = "para", i + 1
    return titles


def _is_term_line(stripped: str) -> bool:
    """Whether a line may be a definition-list term (not markup, a list item, a field or a literal intro)."""
    return not (
        _BLOCK_START.match(stripped)
        or _adornment(stripped)
        or stripped.endswith(":")
        or len(stripped) > TERM_NAME_LIMIT
    )


def _terms(lines: Sequence[str]) -> list[ParsedEntity]:
    """Definition-list terms (glossaries included) and ``**Term**: definition`` lead-ins."""
    entities: list[ParsedEntity] = []
    for raw in definition_terms(lines, 1, _is_term_line):
        name = strip_inline(raw.term.split(" : ")[0])
        if name:
            entities.append(
                ParsedEntity(
                    type="term",
                    name=name,
                    start_line=raw.start_line,
                    end_line=raw.end_line,
                    detail=clip(strip_inline(" ".join(raw.definition))),
                )
            )
    for i, line in enumerate(lines):
        if i > 0 and lines[i - 1].strip() and not _BLOCK_START.match(line.strip()):
            continue
        lead = _BOLD_LEAD.match(line.strip())
        if lead:
            entities.extend(_bold_lead_in(lines, i, lead))
    return entities


def _bold_lead_in(lines: Sequence[str], i: int, lead: re.Match[str]) -> list[ParsedEntity]:
    """``**Term**: definition`` at line ``i``; the definition runs to the end of the paragraph."""
    term, rest = strip_inline(lead.group("term")), lead.group("rest").lstrip()
    if term.endswith(":"):
        term = term.rstrip(":").strip()
    elif rest.startswith(_LEAD_SEPARATORS):
        rest = rest.lstrip(":—–-").strip()
    else:
        return []
    end = i
    while end + 1 < len(lines) and lines[end + 1].strip() and not _BLOCK_START.match(lines[end + 1].strip()):
        end += 1
        rest += " " + lines[end].strip()
    detail = clip(strip_inline(rest))
    if not term or not detail or len(term) > TERM_NAME_LIMIT:
        return []
    return [ParsedEntity(type="term", name=term, start_line=i + 1, end_line=end + 1, detail=detail)]


def _drafts(titles: list[tuple[tuple[str, bool], str, int, int]]) -> list[HeadingDraft]:
    """Levels by first appearance of each adornment style, as docutils assigns them."""
    styles: list[tuple[str, bool]] = []
    drafts = []
    for style, raw, first, body in titles:
        if style not in styles:
            styles.append(style)
        drafts.append(
            HeadingDraft(
                level=styles.index(style) + 1,
                name=strip_inline(raw),
                start_line=first + 1,
                body_start_line=body + 1,
                meta={"codeblocks": []},
            )
        )
    return drafts


class RstParser:
    """reStructuredText → document tree with heading sections, literal blocks and terms. Pure, no docutils."""

    name = "rst"

    def supports(self, language: str) -> bool:
        """Only reStructuredText."""
        return language == "rst"

    def parse(self, path: str, text: str, language: str = "rst") -> DocumentTree:
        """Parse rST ``text`` into a heading tree; see the module docstring."""
        lines = [ln.expandtabs(8) for ln in text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")]
        literals = find_literals(lines)
        literal_lines = {k for lit in literals for k in range(lit.start, lit.end + 1)}
        headings = _drafts(find_titles(lines, literal_lines))
        root_meta: dict[str, Any] = {"codeblocks": []}
        nodes = build_tree(path, headings, line_count(text), root_meta)
        for lit in literals:
            block = {"lang": lit.lang, "start_line": lit.start + 1, "end_line": lit.end + 1}
            nodes[section_index(nodes, lit.start + 1)].meta["codeblocks"].append(block)
        prose = ["" if k in literal_lines else ln for k, ln in enumerate(lines)]
        return document_tree(path, language, self.name, nodes, _terms(prose))
