"""Markdown documents → heading tree, fenced code blocks and glossary terms, from markdown-it-py's token stream.

Line numbers come from each block token's ``map`` (0-based, end-exclusive), so ATX and Setext headings, code
fences and front matter are all recognised by a CommonMark parser, never by pattern-matching lines. MyST
extensions used by Sphinx projects are understood: ``:::`` directives, ``{role}`content``` and ``{glossary}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.myst_role import myst_role_plugin

from sift.ingest.parsers.doc_terms import (
    TERM_NAME_LIMIT,
    HeadingDraft,
    build_tree,
    clip,
    collapse,
    definition_terms,
    document_tree,
)
from sift.ingest.parsers.text import line_count
from sift.models import DocumentTree, ParsedEntity

# MyST directives whose body is code: the lang is the directive's argument (``{code-block} python``) or, for the
# doctest family, the directive name itself.
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "code-cell"})
_DOCTEST_DIRECTIVES = frozenset({"doctest", "testcode", "testoutput", "testsetup", "testcleanup"})
# Directives whose body is neither Markdown nor code (options, paths, rST): not searched for terms.
_OPAQUE_DIRECTIVES = frozenset({"toctree", "include", "literalinclude", "eval-rst", "raw", "math", "mermaid"})
# What may follow a bold lead-in for it to count as ``**Term**: definition``.
_LEAD_SEPARATORS = (":", "—", "–", "- ", "-- ")


@dataclass(slots=True)
class _Collected:
    """What a walk over the token stream gathers."""

    headings: list[HeadingDraft] = field(default_factory=list)
    preamble_codeblocks: list[dict[str, Any]] = field(default_factory=list)
    entities: list[ParsedEntity] = field(default_factory=list)

    def add_codeblock(self, block: dict[str, Any]) -> None:
        """File a code block under the latest heading (the innermost section it sits in)."""
        target = self.headings[-1].meta if self.headings else None
        (target["codeblocks"] if target is not None else self.preamble_codeblocks).append(block)


def make_markdown() -> MarkdownIt:
    """A CommonMark parser with tables, front matter, definition lists and the MyST block/role syntax."""
    return (
        MarkdownIt("commonmark")
        .enable(["table", "strikethrough"])
        .use(front_matter_plugin)
        .use(deflist_plugin)
        .use(colon_fence_plugin)
        .use(myst_role_plugin)
    )


def plain_text(tokens: list[Token] | None) -> str:
    """Inline tokens as the reader sees them: markup dropped, code/link/image text kept, breaks as spaces."""
    out: list[str] = []
    for tok in tokens or []:
        if tok.type in ("text", "code_inline", "text_special"):
            out.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif tok.type == "myst_role":
            out.append(_role_text(tok.content))
        elif tok.children:
            out.append(plain_text(tok.children))
    return "".join(out)


def _role_text(content: str) -> str:
    """``title <target>`` → ``title``; a bare target keeps its last dotted part only when prefixed by ``~``."""
    content = content.strip()
    if content.endswith(">") and " <" in content:
        return content[: content.rindex(" <")].strip()
    if content.startswith("~"):
        return content[1:].rsplit(".", 1)[-1]
    return content.lstrip("!")


_LONE_CR = re.compile(r"\r(?!\n)")


def _strip_toml_front_matter(text: str) -> str:
    """Blank out a ``+++`` TOML front-matter block at the top, keeping line numbers."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "+++":
        return text
    for end in range(1, len(lines)):
        if lines[end].rstrip() == "+++":
            return "\n" * end + "\n" + "\n".join(lines[end + 1 :])
    return text


def _directive(info: str) -> tuple[str, str] | None:
    """``{name} argument`` → (name, argument); None when the fence is not a MyST directive."""
    info = info.strip()
    if not info.startswith("{") or "}" not in info:
        return None
    close = info.index("}")
    return info[1:close].strip(), info[close + 1 :].strip()


def _codeblock(lang: str, tok: Token, offset: int) -> dict[str, Any]:
    """The codeblocks-meta record of a fence token (lines of the opening and closing fence, 1-based)."""
    assert tok.map is not None
    return {"lang": lang, "start_line": tok.map[0] + 1 + offset, "end_line": tok.map[1] + offset}


class MarkdownParser:
    """Markdown (CommonMark + MyST) → document tree with heading sections, code blocks and terms."""

    name = "markdown"

    def __init__(self) -> None:
        self._md = make_markdown()

    def supports(self, language: str) -> bool:
        """Only Markdown."""
        return language == "markdown"

    def parse(self, path: str, text: str, language: str = "markdown") -> DocumentTree:
        """Parse Markdown ``text`` into a heading tree; see the module docstring."""
        # markdown-it ends a line at a lone \r too; blanking it keeps line numbers those of split_lines.
        source = _strip_toml_front_matter(_LONE_CR.sub(" ", text.removeprefix("\ufeff")))
        found = _Collected()
        self._walk(self._md.parse(source), 0, found, headings=True)
        nodes = build_tree(path, found.headings, line_count(text), {"codeblocks": found.preamble_codeblocks})
        return document_tree(path, language, self.name, nodes, found.entities)

    def _walk(
        self, tokens: list[Token], offset: int, found: _Collected, *, headings: bool, terms: bool = True
    ) -> None:
        """Collect headings, code blocks and terms; ``offset`` shifts lines of a nested directive body."""
        for i, tok in enumerate(tokens):
            if tok.type == "heading_open" and headings and tok.map:
                # Setext headings span title and underline lines, so map[1] is the first body line either way.
                found.headings.append(
                    HeadingDraft(
                        level=int(tok.tag[1:]),
                        name=collapse(plain_text(tokens[i + 1].children)),
                        start_line=tok.map[0] + 1 + offset,
                        body_start_line=tok.map[1] + 1 + offset,
                        meta={"codeblocks": []},
                    )
                )
            elif tok.type in ("fence", "colon_fence") and tok.map:
                self._fence(tok, offset, found)
            elif tok.type == "dt_open" and tok.map and terms:
                found.entities.extend(_deflist_term(tokens, i, offset))
            elif tok.type == "paragraph_open" and tok.map and terms:
                found.entities.extend(_bold_lead_in(tokens[i + 1], tok, offset))

    def _fence(self, tok: Token, offset: int, found: _Collected) -> None:
        """A fence is a code block, a MyST glossary, or a directive whose Markdown body is walked for blocks."""
        assert tok.map is not None
        directive = _directive(tok.info)
        if directive is None:
            if tok.type == "fence":
                found.add_codeblock(_codeblock(tok.info.split()[0] if tok.info.split() else "", tok, offset))
            return
        name, argument = directive
        if name in _CODE_DIRECTIVES:
            found.add_codeblock(_codeblock(argument.split()[0] if argument else "", tok, offset))
        elif name in _DOCTEST_DIRECTIVES:
            found.add_codeblock(_codeblock(name, tok, offset))
        elif name == "glossary":
            found.entities.extend(self._glossary(tok, offset))
            self._walk(
                self._md.parse(tok.content), offset + tok.map[0] + 1, found, headings=False, terms=False
            )
        elif name not in _OPAQUE_DIRECTIVES:
            # Sections cannot start inside a directive (Sphinx rejects them), so only blocks and terms count.
            self._walk(self._md.parse(tok.content), offset + tok.map[0] + 1, found, headings=False)

    def _glossary(self, tok: Token, offset: int) -> list[ParsedEntity]:
        """Terms of a ``{glossary}`` directive: unindented term lines, each followed by an indented definition."""
        assert tok.map is not None
        lines = tok.content.split("\n")
        raw = definition_terms(
            lines, tok.map[0] + 2 + offset, lambda s: not s.startswith((":", "-", "*", "`"))
        )
        return [
            ParsedEntity(
                type="term",
                name=name,
                start_line=t.start_line,
                end_line=t.end_line,
                detail=clip(plain_text(self._md.parseInline(" ".join(_prose(t.definition)))[0].children)),
            )
            for t in raw
            if (name := collapse(plain_text(self._md.parseInline(t.term)[0].children)))
        ]


def _prose(lines: list[str]) -> list[str]:
    """Definition lines up to the first nested fence (code is not part of a term's short definition)."""
    out: list[str] = []
    for line in lines:
        if line.startswith(("```", "~~~", ":::")):
            break
        out.append(line)
    return out


def _deflist_term(tokens: list[Token], i: int, offset: int) -> list[ParsedEntity]:
    """The term at ``tokens[i]`` (``dt_open``) with the text of the ``dd`` that follows it."""
    name = collapse(plain_text(tokens[i + 1].children)).rstrip(":").strip()
    start = tokens[i].map[0] + 1 + offset  # type: ignore[index]
    parts: list[str] = []
    end = start
    depth_level = tokens[i].level
    j = i + 1
    while j < len(tokens) and tokens[j].type != "dd_open":
        j += 1
    for tok in tokens[j + 1 :]:
        if tok.type in ("dd_close", "dl_close") and tok.level == depth_level:
            break
        if tok.type == "inline":
            parts.append(plain_text(tok.children))
        if tok.map:
            end = max(end, tok.map[1] + offset)
    if not name or len(name) > TERM_NAME_LIMIT:
        return []
    return [
        ParsedEntity(type="term", name=name, start_line=start, end_line=end, detail=clip(" ".join(parts)))
    ]


def _bold_lead_in(inline: Token, para: Token, offset: int) -> list[ParsedEntity]:
    """``**Term**: definition`` (or ``**Term:**``, ``**Term** — definition``) opening a paragraph."""
    children = [c for c in inline.children or [] if not (c.type == "text" and not c.content)]
    if len(children) < 3 or children[0].type != "strong_open":
        return []
    close = next(
        (k for k, c in enumerate(children) if c.type == "strong_close" and c.level == children[0].level), None
    )
    if close is None:
        return []
    term = collapse(plain_text(children[1:close]))
    rest = plain_text(children[close + 1 :]).lstrip()
    if term.endswith(":"):
        term, detail = term.rstrip(":").strip(), rest
    elif rest.startswith(_LEAD_SEPARATORS):
        detail = rest.lstrip(":—–-").strip()
    else:
        return []
    if not term or not detail.strip() or len(term) > TERM_NAME_LIMIT:
        return []
    assert para.map is not None
    return [
        ParsedEntity(
            type="term",
            name=term,
            start_line=para.map[0] + 1 + offset,
            end_line=para.map[1] + offset,
            detail=clip(detail),
        )
    ]
