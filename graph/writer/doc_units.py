"""How documentation text divides into quotable units: sentences of its paragraphs, list items, table rows, and
code examples as fenced blocks (Markdown fences, reST literal blocks and code directives, doctest sessions).

Pure functions of the text. ``doc_quotes.py`` chooses among the units what an answer quotes; ``code_quotes.py``
shows a definition's lines with ``fenced_block``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sift.languages import classify
from sift.text import split_lines

# A sentence ends at . ! or ? before a capital, a quote or a bracket, but not after "e.g." or "i.e." (a lambda in
# "(e.g. ``lambda x: x``)" is an example, not a sentence).
SENTENCE_END = re.compile(r"(?<=[.!?])(?<![(\s][eE]\.g\.)(?<![(\s][iI]\.e\.)(?<![(\s]cf\.)(?<![(\s]vs\.)\s+"
                          r"(?=[A-Z`\"'(])")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|(?:\d+|#)[.)]|\(\d+\)|:[\w .*]+:)\s+")  # a list item ("#." is reST's
# auto-numbered one) or a reST field (":param x:")
CITATION_MARK = re.compile(r"\[\d+\]")  # "values[0]" would read as a citation marker
# Markup lines that say nothing themselves: headings, underlines (reST adorns with = - ~ ^ * + " ' _), fences,
# directives, MkDocs admonition openers ("!!! tip", "??? note").
_MARKUP = re.compile(r"^\s*(#+(?:\s|$)|[=\-~^*+\"'_]{3,}\s*$|```|\.\. |:::|\(.*\)=$|!!!\s|\?\?\?\+?\s)")
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")  # a Markdown link or image: its text
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a row of a Markdown table
_TABLE_RULE = re.compile(r":?-{3,}:?")  # a cell of the rule under a table's header
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)")  # a reader of the rendered page never sees it


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
    return bool(CITATION_MARK.search(text))


def fenceable(code: str) -> bool:
    """A code line can be shown in a fenced block: no fence of its own and no ``[n]`` (read as a citation marker)."""
    return CODE not in code and not CITATION_MARK.search(code)


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


def split_units(text: str, code: bool = False, fence: str | None = None, indented: str = "python") -> list[str]:
    """Sentences of prose paragraphs; each list item is a unit of its own (markup lines dropped).

    Code examples (Markdown fences, reST ``::`` literal blocks and code directives, doctest sessions) are not
    prose: with ``code`` each becomes one unit, a fenced block (see ``CODE``); without, they are left out. With
    ``fence`` (``open_fence`` of the lines above), the text starts inside a block in that language. ``indented``
    is the language a block set off by indentation alone is shown in (a reST literal block is Python's; Markdown's
    indented block has none: ``indented_language``).
    """
    reader = _UnitReader(split_lines(text), code, indented)
    start = reader.start(fence)
    if start is None:  # the whole text is the rest of a code block an earlier chunk opened
        return reader.units
    reader.read(start)
    return _kept(_numbered(reader.units))


class _UnitReader:
    """One text read line by line into units: prose lines gather into a paragraph until a blank or markup line
    or a block ends it; each kind of block (``_fenced``, ``_version_note``, ``_indented_block``, ``_doctest``,
    ``_table``, ``_comment``) reads the lines it spans and says where reading goes on."""

    def __init__(self, lines: list[str], code: bool, indented: str) -> None:
        self.lines, self.code, self.indented = lines, code, indented
        self.units: list[str] = []
        self.para: list[str] = []

    def flush(self) -> None:
        """The paragraph gathered so far, as its sentences."""
        if self.para:
            joined = " ".join(_HTML_COMMENT.sub(" ", " ".join(self.para)).split())
            self.units.extend(s.strip() for s in SENTENCE_END.split(joined))
            self.para.clear()

    def block(self, body: list[str], lang: str = "") -> None:
        """A code example, kept as one fenced unit when code is asked for and it can be shown."""
        shown = fenced_block(body, lang)
        if self.code and shown and "```" not in shown[3:-3] and not CITATION_MARK.search(shown):
            self.units.append(shown)

    def start(self, fence: str | None) -> int | None:
        """Where prose reading starts, after the code block the text may start inside (opened by an earlier
        chunk); None when the whole text is such a block."""
        lines = self.lines
        i = 0
        fences = [m for m in map(_FENCE.match, lines) if m]
        closer = lines.index(fences[0].string) if fences else 0
        if fence is not None:  # the text starts inside a fenced block opened above it: code up to its closing fence
            closer = closer if fences else len(lines)
            self.block(lines[:closer], _fence_language(fence))
            i = closer + 1
        margin = min((indent(ln) for ln in lines[i:] if ln.strip()), default=0)
        if i == 0 and margin >= 2 and not any(LIST_ITEM.match(ln) for ln in lines) and _code_like(lines):
            # Every line indented and no list: the rest of a code block that an earlier chunk opened.
            self.block(lines, self.indented)
            return None
        first = next((ln for ln in lines[i:] if ln.strip()), "")
        if i == 0 and first and indent(first) > margin and not LIST_ITEM.match(first):
            # The chunk starts inside an indented code block that the previous chunk of the section opened.
            i = self.span(i, lambda ln: not ln.strip() or indent(ln) > margin)
            if _code_like(lines[:i]):
                self.block(lines[:i], self.indented)
            else:
                i = 0  # indented prose: the rest of a list item
        return i

    def span(self, i: int, keep: Callable[[str], object]) -> int:
        """Where the run of lines from ``i`` that ``keep`` accepts ends: the first line it rejects, or the end."""
        while i < len(self.lines) and keep(self.lines[i]):
            i += 1
        return i

    def read(self, i: int) -> None:
        """The lines from ``i`` on: each block where one starts, else a line of prose."""
        steps = (self._fenced, self._version_note, self._indented_block, self._doctest, self._table, self._comment)
        while i < len(self.lines):
            for step in steps:
                after = step(i)
                if after is not None:
                    i = after
                    break
            else:
                self._prose(self.lines[i])
                i += 1
        self.flush()

    def _prose(self, line: str) -> None:
        if _MARKUP.match(line) or not line.strip():
            self.flush()
        elif LIST_ITEM.match(line):
            self.flush()
            self.para.append(line.strip())
        else:
            self.para.append(line.strip())

    def _fenced(self, i: int) -> int | None:
        """A fenced block, up to the closing fence of the same kind."""
        lines = self.lines
        opener = _FENCE.match(lines[i])
        if not opener:
            return None
        self.flush()
        mark, lang = opener.group(1), opener.group(2)
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark)), len(lines))
        if lang == "eval-rst":  # MyST's embedded reStructuredText is text, not code
            self.units.extend(split_units("\n".join(lines[i + 1:end]), self.code, indented=self.indented))
        else:
            self.block(lines[i + 1:end], _fence_language(lang))
        return end + 1

    def _version_note(self, i: int) -> int | None:
        """A version note: the lines indented under it, blank ones too, say what that version brought."""
        lines = self.lines
        note = _VERSION_NOTE.match(lines[i])
        if not note:
            return None
        self.flush()
        depth = len(note.group(1))
        j = self.span(i + 1, lambda ln: not ln.strip() or indent(ln) > depth)
        # Sphinx's arguments: the version, then what changed, on the directive's line or in its body.
        version, _, same_line = (note.group(3) or "").partition(" ")
        changed = " ".join(" ".join([same_line, *lines[i + 1:j]]).split())
        if changed:  # a bare "New in version 2.5." answers nothing a question asks
            self.units.append(f"{_VERSION_LABELS[note.group(2)]} {version}: {changed}" if version else changed)
        return j

    def _indented_block(self, i: int) -> int | None:
        """A code directive or a reST literal block (``::``): the indented lines that follow, blank ones too."""
        lines = self.lines
        line = lines[i]
        directive = _CODE_DIRECTIVE.match(line)
        literal = line.rstrip().endswith("::") and not directive and not _MARKUP.match(line)
        if not (directive or literal):
            return None
        if literal:
            self.para.append(line.strip()[:-1])  # "change the code to this::" reads "…to this:"
        self.flush()
        base = indent(line)
        j = self.span(i + 1, lambda ln: ln.strip().startswith(":") and indent(ln) > base)  # options (":linenos:")
        end = self.span(j, lambda ln: not ln.strip() or indent(ln) > base)
        self.block(lines[j:end], (directive.group(2) if directive else "") or self.indented)
        return end

    def _doctest(self, i: int) -> int | None:
        """A doctest session, up to the next blank line."""
        lines = self.lines
        if not _DOCTEST.match(lines[i]):
            return None
        self.flush()
        j = self.span(i, str.strip)
        self.block(lines[i:j], "python")
        return j

    def _table(self, i: int) -> int | None:
        """A Markdown table: each row of its body an item, "first cell: the others"."""
        lines = self.lines
        if not _TABLE_ROW.match(lines[i]):
            return None
        self.flush()
        j = self.span(i, _TABLE_ROW.match)
        rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[i:j]]
        if len(rows) > 1 and all(_TABLE_RULE.fullmatch(c) for c in rows[1]):
            rows = rows[2:]  # the header and the rule under it
        for cells in rows:
            said = [c for c in cells if c]
            if said and not all(_TABLE_RULE.fullmatch(c) for c in said):
                self.units.append(f"- {said[0]}" + (f": {'; '.join(said[1:])}" if len(said) > 1 else ""))
        return j

    def _comment(self, i: int) -> int | None:
        """An HTML comment over several lines, up to the line that closes it."""
        line = self.lines[i]
        if not (line.lstrip().startswith("<!--") and "-->" not in line.split("<!--", 1)[1]):
            return None
        self.flush()
        return next((j for j in range(i + 1, len(self.lines)) if "-->" in self.lines[j]), len(self.lines)) + 1


def _numbered(units: list[str]) -> list[str]:
    """reST's auto-numbered items ("#.") read as the numbers they render as."""
    count = 0
    for k, unit in enumerate(units):
        count = count + 1 if unit.startswith("#. ") else 0
        units[k] = f"{count}. {unit[3:]}" if count else unit
    return units


def _kept(units: list[str]) -> list[str]:
    """The units long enough to quote: a code block, or text whose links read as more than a few words."""
    return [u for u in units if len(u) > 15 and (u.startswith(CODE) or len(_link_text(u)) > 15)]


def _link_text(unit: str) -> str:
    """What a reader sees of a unit's Markdown links and images (a badge's image inside its link too): an anchor
    ``[](#name)`` or a row of badges says nothing to quote."""
    return _MD_LINK.sub(r"\1", _MD_LINK.sub(r"\1", unit)).strip()


def indented_language(path: str) -> str:
    """The language of a documentation file's code block set off by indentation alone: none for Markdown (its
    indented blocks say no language), Python for the rest (reST's literal blocks, docstrings)."""
    return "" if classify(path)[0] == "markdown" else "python"
