"""What the writer can quote from one evidence item's prose: plain text, a section's best sentences, list items and
code examples (among the units ``doc_units.py`` divides it into), a docstring's summary and sentences (a
definition's code lines: ``code_quotes.py``).

Pure functions of the evidence text and the question's terms. Every quote is safe to cite: no stray backticks
or ``[n]`` that the checker would read as code identifiers or citation markers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.graph.models import Evidence
from sift.graph.writer.closeness import Closeness, sentence_score
from sift.graph.writer.doc_units import (
    CITATION_MARK,
    CODE,
    LIST_ITEM,
    SENTENCE_END,
    indent,
    indented_language,
    split_units,
)
from sift.graph.writer.docstrings import Field, field_rest, field_sentence, is_data, split_fields
from sift.models import CODE_KINDS
from sift.text import shown as escaped
from sift.text import split_lines
from sift.tokenize import tokenize

# An identifier as text names it: backticked, or bare when dotted, snake_case, camelCase or called. findall gives
# (backticked, bare, called) per match.
API_NAME = re.compile(r"`([^`\n]+)`|\b([A-Za-z_][\w.]*[_.][\w.]*[A-Za-z0-9]|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b"
                      r"|\b([A-Za-z_]\w{2,})(?=\()")
_NAMES_API = re.compile(r"`[^`]+`|\b\w+\(|\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\b")
BULLET = re.compile(r"^[*+-]\s+")  # a bullet item's marker, in Markdown or reST


_ROLE = re.compile(r"(?::[\w:+-]+:|\{[\w:+-]+\})`+([^`<]*?)(?:\s*<[^>`]*>)?`+")


_LINK = re.compile(r"`+([^`<]+?)\s*<[^>`]+>`+_{0,2}")  # reST `text <target>`, a link or a default-role reference


def plain(text: str) -> str:
    """Prose without reST/MyST roles and backticks: quoted text must not pose as checked code identifiers."""
    return _LINK.sub(r"\1", _ROLE.sub(_role_text, text)).replace("`", "")


_ATTR_LIST = re.compile(r"\s*\{:?\s*[#.][^{}]*\}\s*$")  # Markdown's attribute list: "Options { #options }"


def heading(e: Evidence) -> str:
    """A documentation section's heading as a reader sees it: the last of its heading path, without a trailing
    attribute list."""
    return heading_text(e.symbol.rsplit(" > ", 1)[-1])


def heading_text(name: str) -> str:
    """A heading's name as a reader sees it: on one line, without a trailing attribute list."""
    return " ".join(_ATTR_LIST.sub("", name).split())


def section_title(e: Evidence) -> str:
    """A section's heading as a reader needs it: ``heading``, after the heading of the section it sits under when
    its file repeats it ("2.0.0 › Fixed")."""
    title = heading(e)
    if title and e.parent_heading:
        return f"{heading_text(e.parent_heading)} › {title}"
    return title


def _role_text(m: re.Match[str]) -> str:
    """What a reST role shows: its text; a target written ``~a.b.c`` shows only its last part, ``c``."""
    text = m.group(1)
    return text[1:].rsplit(".", 1)[-1] if text.startswith("~") else text


def first_sentence(text: str | None) -> str:
    """The first sentence of a docstring or paragraph, on one line."""
    if not text:
        return ""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(para.split())
    parts = SENTENCE_END.split(flat, maxsplit=1)
    return plain(parts[0].strip())


_BREAKS_QUOTE = re.compile(r"`|\[\d+\]|[.!?]\s")


def quotable(code: str) -> bool:
    """A code line can be quoted in backticks: no backtick, no ``[n]`` (read as a citation marker) and no
    sentence end inside (the checker splits sentences there and would check half a quote)."""
    return not _BREAKS_QUOTE.search(code)


def doc_sentences(evidence: Evidence, tokens: Sequence[str], limit: int = 5,
                  near: Closeness | None = None, code: bool = True) -> list[str]:
    """The section's sentences, list items and (with ``code``) code examples with the most question terms (and,
    with ``near``, closest in meaning to it: ``closeness.sentence_score``), in reading order."""
    title = heading(evidence).casefold()
    units = split_units(evidence.text, code=code, fence=evidence.fence, indented=indented_language(evidence.path))
    sentences = [u for u in units if u.casefold() != title]  # not its own title
    wanted = set(tokens)
    # A sentence that names an API (backticks, a call, a dotted or snake_case name) usually holds the answer.
    terms = [len(wanted & set(tokenize(s))) + (1 if _NAMES_API.search(s) else 0) for s in sentences]
    meaning = near(sentences) if near is not None and sentences else [0.0] * len(sentences)
    scored = [(sentence_score(t, c) if near is not None else float(t), i, s)
              for i, (t, c, s) in enumerate(zip(terms, meaning, sentences, strict=True))]
    # By terms alone, a sentence must share one; by meaning too, every sentence is in the running.
    scored = [t for t in scored if t[0] > 0 or near is not None] or scored[:1]
    top = sorted(scored, key=lambda t: (-t[0], t[1]))[:limit]
    first_line = next((ln for ln in split_lines(evidence.text) if ln.strip()), "")
    goes_on = indent(first_line) >= 2 and not LIST_ITEM.match(first_line)  # begins inside a list item or paragraph
    lead = next(((0, i, s) for i, s in enumerate(sentences)
                 if not s.startswith(CODE) and not (goes_on and i == 0 and s[:1].islower())), None)
    if limit > 1 and lead is not None and all(i != lead[1] for _, i, _ in top):
        # A section's first sentence states what it is about ("Short answer: you can't."), often in other words
        # than the question's: it is kept, in place of the weakest match. Not the rest of a sentence that the
        # chunk before began ("properties at the top level.", indented under its list item): it states nothing.
        top = [*top[:limit - 1], lead]
    chosen = {i for _, i, _ in top}
    # A sentence that introduces an example ("… like this:") brings the example it introduces.
    top += [(0.0, i + 1, sentences[i + 1]) for i in sorted(chosen) if sentences[i].endswith(":")
            and i + 1 < len(sentences) and i + 1 not in chosen and sentences[i + 1].startswith(CODE)]
    top = sorted(top, key=lambda t: t[1])
    return [s if s.startswith(CODE) else plain(s if len(s) <= 400 else s[:397].rstrip() + "…") for _, _, s in top]


def summary(docstring: str | None) -> str:
    """The first sentence of a docstring's prose (its field list left out: a docstring may open with one); "" for
    a docstring that holds data (``is_data``)."""
    if not docstring or is_data(docstring):
        return ""
    return first_sentence(split_fields(docstring)[0])


def doc_lines(docstring: str | None, tokens: Sequence[str], first: str, limit: int = 3) -> list[str]:
    """Docstring sentences beyond the first that share the most question terms, in reading order (whole
    sentences, not the hard-wrapped lines they were written on). Its field list (parameters, return value,
    exceptions) counts as plain sentences ("`key` is the bucket…"), never as the fields as written."""
    if not docstring or is_data(docstring):
        return []
    prose, fields = split_fields(docstring)
    wanted = set(tokens)
    head = first.rstrip(".")[:40]
    scored = []
    # (what is said, the words it is scored by): a field is scored by its kind and name as well ("returns")
    units = [(u, u) if u.startswith(CODE) else (plain(u), plain(u)) for u in split_units(prose, code=True)]
    for f in fields:  # the field's first sentence in words; the rest of its description as it is written
        first_, *rest = SENTENCE_END.split(" ".join(plain(f.text).split())) or [""]
        said = field_sentence(Field(f.kind, f.name, first_))
        if said:
            units.append((said, f"{f.kind} {f.name} {first_}"))
        units.extend((field_rest(f, r), f"{f.name} {r}") for r in rest if len(r) > 15)
    for i, (text, words) in enumerate(units):
        if (head and text.startswith(head)) or CITATION_MARK.search(text):
            continue
        overlap = len(wanted & set(tokenize(words)))
        if overlap:
            scored.append((overlap, i, text if len(text) <= 300 or text.startswith(CODE) else text[:297].rstrip() + "…"))
    top = sorted(sorted(scored, key=lambda t: (-t[0], t[1]))[:limit], key=lambda t: t[1])
    return [t if t.endswith((".", ":", "…", "!", "?", CODE)) else t + "." for _, _, t in top]


def label(e: Evidence) -> str:
    """How a candidate is named: a definition by its name (in backticks when its text spells it; a method with
    its class), a doc section by its heading, a file by its path."""
    if e.module_code:  # code outside every definition: its symbol is the file's name, not owner.name
        return "module-level code"
    path = escaped(e.path)  # a path may hold a newline or an ESC sequence: written out, never raw
    if e.symbol in (e.path, e.path.rsplit("/", 1)[-1]):  # a whole file: "__init__.py" is no owner.name
        return path
    if e.kind in CODE_KINDS:
        owner, _, short = e.symbol.rpartition(".")
        spelled = short and re.search(rf"(?<![A-Za-z0-9_]){re.escape(short)}(?![A-Za-z0-9_])", e.text)
        name = f"`{short}`" if spelled else short or path
        # Methods of two classes share names (``convert``): the class tells them apart.
        return f"{owner.rsplit('.', 1)[-1]}'s {name}" if owner and short else name
    if e.kind == "doc":
        title = section_title(e).replace('"', "'")
        return f'the section "{title}"' if title and title != e.path else path
    return path
