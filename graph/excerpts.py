"""What the writer can quote from one evidence item's prose: plain text, a section's best sentences, list items and
code examples, a docstring's summary and sentences (a definition's code lines: ``code_excerpts.py``).

Pure functions of the evidence text and the question's terms. Every quote is safe to cite: no stray backticks
or ``[n]`` that the checker would read as code identifiers or citation markers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.graph.closeness import Closeness, sentence_score
from sift.graph.docstrings import Field, field_rest, field_sentence, is_data, split_fields
from sift.graph.state import Evidence
from sift.models import CODE_KINDS
from sift.text import shown as escaped
from sift.text import split_lines
from sift.tokenize import tokenize

# A sentence ends at . ! or ? before a capital, a quote or a bracket, but not after "e.g." or "i.e." (a lambda in
# "(e.g. ``lambda x: x``)" is an example, not a sentence).
_SENTENCE = re.compile(r"(?<=[.!?])(?<![(\s][eE]\.g\.)(?<![(\s][iI]\.e\.)(?<![(\s]cf\.)(?<![(\s]vs\.)\s+"
                       r"(?=[A-Z`\"'(])")
# An identifier as text names it: backticked, or bare when dotted, snake_case, camelCase or called. findall gives
# (backticked, bare, called) per match.
API_NAME = re.compile(r"`([^`\n]+)`|\b([A-Za-z_][\w.]*[_.][\w.]*[A-Za-z0-9]|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b"
                      r"|\b([A-Za-z_]\w{2,})(?=\()")
_NAMES_API = re.compile(r"`[^`]+`|\b\w+\(|\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\b")
_ITEM = re.compile(r"^\s*(?:[-*+]|(?:\d+|#)[.)]|\(\d+\)|:[\w .*]+:)\s+")  # a list item ("#." is reST's
# auto-numbered one) or a reST field (":param x:")
BULLET = re.compile(r"^[*+-]\s+")  # a bullet item's marker, in Markdown or reST
_CITATION_LIKE = re.compile(r"\[\d+\]")  # "values[0]" would read as a citation marker
# Markup lines that say nothing themselves: headings, underlines (reST adorns with = - ~ ^ * + " ' _), fences,
# directives, MkDocs admonition openers ("!!! tip", "??? note").
_MARKUP = re.compile(r"^\s*(#+(?:\s|$)|[=\-~^*+\"'_]{3,}\s*$|```|\.\. |:::|\(.*\)=$|!!!\s|\?\?\?\+?\s)")


_ROLE = re.compile(r"(?::[\w:+-]+:|\{[\w:+-]+\})`+([^`<]*?)(?:\s*<[^>`]*>)?`+")


_LINK = re.compile(r"`+([^`<]+?)\s*<[^>`]+>`+_{0,2}")  # reST `text <target>`, a link or a default-role reference
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")  # a Markdown link or image: its text
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a row of a Markdown table
_TABLE_RULE = re.compile(r":?-{3,}:?")  # a cell of the rule under a table's header
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)")  # a reader of the rendered page never sees it


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
    parts = _SENTENCE.split(flat, maxsplit=1)
    return plain(parts[0].strip())


_BREAKS_QUOTE = re.compile(r"`|\[\d+\]|[.!?]\s")


def quotable(code: str) -> bool:
    """A code line can be quoted in backticks: no backtick, no ``[n]`` (read as a citation marker) and no
    sentence end inside (the checker splits sentences there and would check half a quote)."""
    return not _BREAKS_QUOTE.search(code)


# ```python, ```{doctest}; not "~~~", which reST also uses to underline a heading
_FENCE = re.compile(r"^\s*(`{3,})\s*\{?([\w+-]*)")
_CODE_DIRECTIVE = re.compile(  # also a Sphinx extension's own, such as ".. mytool:example::"
    r"^(\s*)\.\. (?:[\w-]+:)?(?:code-block|code|sourcecode|doctest|testcode|ipython|example|run|console|prompt)::"
    r"\s*(\w*)")
_DOCTEST = re.compile(r"^\s*>>>( |$)")
# Sphinx's version notes, read as Sphinx renders them ("New in version 2.5: The spam parameter."), not as a
# dropped directive line followed by its body on its own ("The spam parameter.").
_VERSION_NOTE = re.compile(r"^(\s*)\.\. (versionadded|versionchanged|deprecated|versionremoved)::[ \t]*(\S[^\n]*?)?\s*$")
_VERSION_LABELS = {"versionadded": "New in version", "versionchanged": "Changed in version",
                   "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
MAX_CODE_LINES = 16
CODE = "```"  # a unit that starts with this is a fenced code block, shown as code and not as a sentence


def citation_like(text: str) -> bool:
    """The text holds something the checker would read as a citation marker (``values[0]``)."""
    return bool(_CITATION_LIKE.search(text))


def fenceable(code: str) -> bool:
    """A code line can be shown in a fenced block: no fence of its own and no ``[n]`` (read as a citation marker)."""
    return CODE not in code and not _CITATION_LIKE.search(code)


_CODE_LINE = re.compile(r"[=(){}\[\];]|^\s*(@|#|>>>|\$ |\.\.\. )")
_CODE_START = re.compile(r"^\s*(@|#|>>>|\$ |\.\.\. |//)")
_WORD = re.compile(r"[A-Za-z][a-z]*[,.;:!?)]*")
_CODE_SYNTAX = re.compile(r"\w\(|\s=\s|[;{]\s*$")  # a call, an assignment, a statement's or block's end
_BACKTICKED = re.compile(r"`[^`]*`")
PROSE_WORDS = 6  # a line of at least this many words, two in three of them plain, is a sentence, not code


def prose_line(line: str) -> bool:
    """A line of running text, though it may hold a bracket or a link ("… output context](#escaping) for when the
    default is not the right", "(days, hours, etc)"): at least ``PROSE_WORDS`` words, two in three of them plain
    words, no comment or prompt at its start, and outside backticks no call, assignment or statement end
    (``print("a message to the user")`` is code)."""
    words = line.split()
    return len(words) >= PROSE_WORDS and not _CODE_START.match(line) \
        and not _CODE_SYNTAX.search(_BACKTICKED.sub("``", line)) \
        and sum(1 for w in words if _WORD.fullmatch(w)) * 3 >= 2 * len(words)


def _code_like(lines: Sequence[str]) -> bool:
    """Most lines carry code punctuation (``=``, brackets, a decorator, comment or prompt) and are no running
    text (``prose_line``): not indented prose, such as the rest of a list item."""
    body = [ln for ln in lines if ln.strip()]
    return bool(body) and sum(1 for ln in body if _CODE_LINE.search(ln) and not prose_line(ln)) * 2 >= len(body)


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def fenced_block(lines: Sequence[str], lang: str = "") -> str:
    """Code lines as a Markdown fenced block, dedented and at most ``MAX_CODE_LINES`` long."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    if not lines:
        return ""
    if all(re.match(r"\s*(import|from)\s|\s*$", ln) for ln in lines):
        return ""  # imports alone show nothing
    cut = min(indent(ln) for ln in lines if ln.strip())
    body = [ln[cut:].rstrip() for ln in lines]
    body = [ln for i, ln in enumerate(body) if ln or (i and body[i - 1])]  # one blank line at most
    if len(body) > MAX_CODE_LINES:
        body = [*body[:MAX_CODE_LINES - 1], "…"]
    return f"{CODE}{lang}\n" + "\n".join(body) + f"\n{CODE}"


def open_fence(lines: Sequence[str]) -> str | None:
    """The info string ("js", "" when bare) of the fenced code block still open after these lines, or None when
    every block they open is closed: whether a chunk that starts after them starts inside one."""
    opened: str | None = None
    marker = ""
    for line in lines:
        m = _FENCE.match(line)
        if m is None:
            continue
        if opened is None:
            opened, marker = m.group(2), m.group(1)
        elif m.group(1).startswith(marker) and not line.strip()[len(m.group(1)):].strip():
            opened = None  # a bare fence at least as long as the opening one closes it
    return opened


def _fence_language(info: str) -> str:
    """The fence language to show a block in: a doctest session's is Python."""
    return "python" if info in ("doctest", "pycon", "py", "python3") else info


def _units(text: str, code: bool = False, fence: str | None = None, indented: str = "python") -> list[str]:
    """Sentences of prose paragraphs; each list item is a unit of its own (markup lines dropped).

    Code examples (Markdown fences, reST ``::`` literal blocks and code directives, doctest sessions) are not
    prose: with ``code`` each becomes one unit, a fenced block (see ``CODE``); without, they are left out. With
    ``fence`` (``open_fence`` of the lines above), the text starts inside a block in that language. ``indented``
    is the language a block set off by indentation alone is shown in (a reST literal block is Python's; Markdown's
    indented block has none: ``indented_language``).
    """
    units: list[str] = []
    para: list[str] = []
    lines = split_lines(text)

    def flush() -> None:
        if para:
            joined = " ".join(_HTML_COMMENT.sub(" ", " ".join(para)).split())
            units.extend(s.strip() for s in _SENTENCE.split(joined))
            para.clear()

    def block(body: list[str], lang: str = "") -> None:
        shown = fenced_block(body, lang)
        if code and shown and "```" not in shown[3:-3] and not _CITATION_LIKE.search(shown):
            units.append(shown)

    i = 0
    fences = [m for m in map(_FENCE.match, lines) if m]
    closer = lines.index(fences[0].string) if fences else 0
    if fence is not None:  # the text starts inside a fenced block opened above it: code up to its closing fence
        closer = closer if fences else len(lines)
        block(lines[:closer], _fence_language(fence))
        i = closer + 1
    margin = min((indent(ln) for ln in lines[i:] if ln.strip()), default=0)
    if i == 0 and margin >= 2 and not any(_ITEM.match(ln) for ln in lines) and _code_like(lines):
        # Every line indented and no list: the rest of a code block that an earlier chunk opened.
        block(lines, indented)
        return units
    first = next((ln for ln in lines[i:] if ln.strip()), "")
    if i == 0 and first and indent(first) > margin and not _ITEM.match(first):
        # The chunk starts inside an indented code block that the previous chunk of the section opened.
        while i < len(lines) and (not lines[i].strip() or indent(lines[i]) > margin):
            i += 1
        if _code_like(lines[:i]):
            block(lines[:i], indented)
        else:
            i = 0  # indented prose: the rest of a list item
    while i < len(lines):
        line = lines[i]
        opener, directive = _FENCE.match(line), _CODE_DIRECTIVE.match(line)
        if opener:  # up to the closing fence of the same kind
            flush()
            mark, lang = opener.group(1), opener.group(2)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark)), len(lines))
            if lang == "eval-rst":  # MyST's embedded reStructuredText is text, not code
                units.extend(_units("\n".join(lines[i + 1:end]), code, indented=indented))
            else:
                block(lines[i + 1:end], _fence_language(lang))
            i = end + 1
            continue
        note = _VERSION_NOTE.match(line)
        if note:  # the lines indented under it, blank ones too, say what that version brought
            flush()
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or indent(lines[j]) > len(note.group(1))):
                j += 1
            # Sphinx's arguments: the version, then what changed, on the directive's line or in its body.
            version, _, same_line = (note.group(3) or "").partition(" ")
            changed = " ".join(" ".join([same_line, *lines[i + 1:j]]).split())
            if changed:  # a bare "New in version 2.5." answers nothing a question asks
                units.append(f"{_VERSION_LABELS[note.group(2)]} {version}: {changed}" if version else changed)
            i = j
            continue
        literal = line.rstrip().endswith("::") and not directive and not _MARKUP.match(line)
        if directive or literal:  # the indented lines that follow (blank lines included)
            if literal:
                para.append(line.strip()[:-1])  # "change the code to this::" reads "…to this:"
            flush()
            base = indent(line)
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith(":") and indent(lines[j]) > base:
                j += 1  # the directive's options (":linenos:")
            body: list[str] = []
            while j < len(lines) and (not lines[j].strip() or indent(lines[j]) > base):
                body.append(lines[j])
                j += 1
            block(body, (directive.group(2) if directive else "") or indented)
            i = j
            continue
        if _DOCTEST.match(line):  # a doctest session runs to the next blank line
            flush()
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            block(lines[i:j], "python")
            i = j
            continue
        if _TABLE_ROW.match(line):  # a Markdown table: each row of its body an item, "first cell: the others"
            flush()
            j = i
            while j < len(lines) and _TABLE_ROW.match(lines[j]):
                j += 1
            rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[i:j]]
            if len(rows) > 1 and all(_TABLE_RULE.fullmatch(c) for c in rows[1]):
                rows = rows[2:]  # the header and the rule under it
            for cells in rows:
                said = [c for c in cells if c]
                if said and not all(_TABLE_RULE.fullmatch(c) for c in said):
                    units.append(f"- {said[0]}" + (f": {'; '.join(said[1:])}" if len(said) > 1 else ""))
            i = j
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line.split("<!--", 1)[1]:
            flush()  # a comment over several lines, up to the line that closes it
            i = next((j for j in range(i + 1, len(lines)) if "-->" in lines[j]), len(lines)) + 1
            continue
        if _MARKUP.match(line) or not line.strip():
            flush()
        elif _ITEM.match(line):
            flush()
            para.append(line.strip())
        else:
            para.append(line.strip())
        i += 1
    flush()
    count = 0  # reST's auto-numbered items ("#.") read as the numbers they render as
    for k, unit in enumerate(units):
        count = count + 1 if unit.startswith("#. ") else 0
        units[k] = f"{count}. {unit[3:]}" if count else unit
    return [u for u in units if len(u) > 15 and (u.startswith(CODE) or len(_link_text(u)) > 15)]


def _link_text(unit: str) -> str:
    """What a reader sees of a unit's Markdown links and images (a badge's image inside its link too): an anchor
    ``[](#name)`` or a row of badges says nothing to quote."""
    return _MD_LINK.sub(r"\1", _MD_LINK.sub(r"\1", unit)).strip()


_MARKDOWN = (".md", ".markdown", ".mdx")


def indented_language(path: str) -> str:
    """The language of a documentation file's code block set off by indentation alone: none for Markdown (its
    indented blocks say no language), Python for the rest (reST's literal blocks, docstrings)."""
    return "" if path.lower().endswith(_MARKDOWN) else "python"


def doc_sentences(evidence: Evidence, tokens: Sequence[str], limit: int = 5,
                  near: Closeness | None = None, code: bool = True) -> list[str]:
    """The section's sentences, list items and (with ``code``) code examples with the most question terms (and,
    with ``near``, closest in meaning to it: ``closeness.sentence_score``), in reading order."""
    title = heading(evidence).casefold()
    units = _units(evidence.text, code=code, fence=evidence.fence, indented=indented_language(evidence.path))
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
    goes_on = indent(first_line) >= 2 and not _ITEM.match(first_line)  # begins inside a list item or paragraph
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
    units = [(u, u) if u.startswith(CODE) else (plain(u), plain(u)) for u in _units(prose, code=True)]
    for f in fields:  # the field's first sentence in words; the rest of its description as it is written
        first_, *rest = _SENTENCE.split(" ".join(plain(f.text).split())) or [""]
        said = field_sentence(Field(f.kind, f.name, first_))
        if said:
            units.append((said, f"{f.kind} {f.name} {first_}"))
        units.extend((field_rest(f, r), f"{f.name} {r}") for r in rest if len(r) > 15)
    for i, (text, words) in enumerate(units):
        if (head and text.startswith(head)) or _CITATION_LIKE.search(text):
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
