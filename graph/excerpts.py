"""What the writer can quote from one evidence item: plain prose, its best sentences, key lines and code blocks,
a definition's signature and docstring (the lines of one statement and a class's members: ``statements.py``).

Pure functions of the evidence text and the question's terms. Every quote is safe to cite: no stray backticks
or ``[n]`` that the checker would read as code identifiers or citation markers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sift.graph.closeness import Closeness, sentence_score
from sift.graph.docstrings import Field, field_sentence, split_fields
from sift.graph.state import Evidence
from sift.graph.statements import statement
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
# Markup lines that say nothing themselves: headings, underlines, fences, directives, MkDocs admonition
# openers ("!!! tip", "??? note").
_MARKUP = re.compile(r"^\s*(#+(?:\s|$)|[=\-~^*]{3,}\s*$|```|\.\. |:::|\(.*\)=$|!!!\s|\?\?\?\+?\s)")


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
    return " ".join(_ATTR_LIST.sub("", e.symbol.rsplit(" > ", 1)[-1]).split())


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


_DOC_QUOTE = re.compile(r"^[rRbBuUfF]{0,2}(\"\"\"|\'\'\')")


_HASH_COMMENTS = frozenset({"ruby", "bash"})  # languages whose doc comments are "#" runs (not C's "#include")


def definition_start(lines: Sequence[str], lang: str = "") -> int:
    """The index of a definition's first line past the doc comment its chunk may start with (``/** … */``,
    ``///`` or ``//`` runs; ``#`` runs in ``_HASH_COMMENTS``) and blank lines; 0 when nothing follows it."""
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("/*"):
            while i < len(lines) and "*/" not in lines[i]:
                i += 1
        elif s and not s.startswith("//") and not (lang in _HASH_COMMENTS and s.startswith("#")):
            return i
        i += 1
    return 0


def _header_end(lines: Sequence[str], lang: str = "") -> int:
    """The index of the line that ends a definition's header (its signature may span lines), or -1."""
    first = definition_start(lines, lang)
    start = next((i for i in range(first, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("@")),
                 None)
    if start is None:
        return -1
    return next((i for i in range(start, min(len(lines), start + 40))
                 if lines[i].rstrip().endswith((":", "{"))), -1)


_WORDY = re.compile(r"[A-Za-z0-9_]")


def body_lines(evidence: Evidence, after_header: bool = True, fenced: bool = False) -> list[tuple[int, str]]:
    """A definition's quotable body lines as (offset, stripped text): not its header (with ``after_header``),
    docstring, comments, decorators, or lines without a word (blank, ``}``, ``});``). With ``fenced`` the lines are
    for a fenced block, where a backtick (a template literal) or a sentence end inside a line is safe."""
    out = []
    in_doc: str | None = None
    lines = split_lines(evidence.text)
    header = _header_end(lines, _lang(evidence.path)) if after_header else -1
    for offset, line in enumerate(lines):
        stripped = line.strip()
        if in_doc is not None:
            if in_doc in stripped:
                in_doc = None
            continue
        quote = _DOC_QUOTE.match(stripped)
        if quote:
            if stripped.count(quote.group(1)) < 2:
                in_doc = quote.group(1)
            continue
        if offset <= header or not stripped or stripped.startswith(("#", "def ", "class ", "async def ", "@")) \
                or stripped.startswith(("/*", "//", "* ")) or stripped in ("*", "*/"):  # JS comments too
            continue
        if len(stripped) <= 160 and (fenceable(stripped) if fenced else quotable(stripped)) and _WORDY.search(stripped):
            out.append((offset, stripped))
    return out


def key_lines(evidence: Evidence, tokens: Sequence[str], limit: int = 3, own: Sequence[str] = (),
              idf: Mapping[str, float] | None = None, fenced: bool = False) -> list[tuple[int, str]]:
    """Body lines sharing the most question terms (not the header, docstring or comments), in file order; with
    ``idf``, the most idf weight of them, so that a rare word of the question ("installed") outweighs a common
    one ("version"). With ``own`` (the definition's own name terms), a line must share some other term: a line
    that only repeats the name shows nothing the location does not already say."""
    wanted = set(tokens)
    other = wanted - set(own)
    scored = []
    for offset, stripped in body_lines(evidence, after_header=bool(own), fenced=fenced):
        words = set(tokenize(stripped))
        shared = wanted & words
        overlap = sum(idf.get(t, 1.0) for t in shared) if idf else len(shared)
        if overlap and (not own or other & words):
            scored.append((overlap, offset, stripped))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return sorted(((evidence.start_line + off, text) for _, off, text in scored[:limit]), key=lambda t: t[0])


# ```python, ```{doctest}; not "~~~", which reST also uses to underline a heading
_FENCE = re.compile(r"^\s*(`{3,})\s*\{?([\w+-]*)")
_CODE_DIRECTIVE = re.compile(  # also a Sphinx extension's own, such as ".. mytool:example::"
    r"^(\s*)\.\. (?:[\w-]+:)?(?:code-block|code|sourcecode|doctest|testcode|ipython|example|run|console|prompt)::"
    r"\s*(\w*)")
_DOCTEST = re.compile(r"^\s*>>>( |$)")
MAX_CODE_LINES = 16
CODE = "```"  # a unit that starts with this is a fenced code block, shown as code and not as a sentence


def fenceable(code: str) -> bool:
    """A code line can be shown in a fenced block: no fence of its own and no ``[n]`` (read as a citation marker)."""
    return CODE not in code and not _CITATION_LIKE.search(code)


_CODE_LINE = re.compile(r"[=(){}\[\];]|^\s*(@|#|>>>|\$ |\.\.\. )")


def _code_like(lines: Sequence[str]) -> bool:
    """Most lines carry code punctuation (``=``, brackets, a decorator, comment or prompt): not indented prose."""
    body = [ln for ln in lines if ln.strip()]
    return bool(body) and sum(1 for ln in body if _CODE_LINE.search(ln)) * 2 >= len(body)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _fenced(lines: Sequence[str], lang: str = "") -> str:
    """Code lines as a Markdown fenced block, dedented and at most ``MAX_CODE_LINES`` long."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    if not lines:
        return ""
    if all(re.match(r"\s*(import|from)\s|\s*$", ln) for ln in lines):
        return ""  # imports alone show nothing
    cut = min(_indent(ln) for ln in lines if ln.strip())
    body = [ln[cut:].rstrip() for ln in lines]
    body = [ln for i, ln in enumerate(body) if ln or (i and body[i - 1])]  # one blank line at most
    if len(body) > MAX_CODE_LINES:
        body = [*body[:MAX_CODE_LINES - 1], "…"]
    return f"{CODE}{lang}\n" + "\n".join(body) + f"\n{CODE}"


def _units(text: str, code: bool = False) -> list[str]:
    """Sentences of prose paragraphs; each list item is a unit of its own (markup lines dropped).

    Code examples (Markdown fences, reST ``::`` literal blocks and code directives, doctest sessions) are not
    prose: with ``code`` each becomes one unit, a fenced block (see ``CODE``); without, they are left out.
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
        fenced = _fenced(body, lang)
        if code and fenced and "```" not in fenced[3:-3] and not _CITATION_LIKE.search(fenced):
            units.append(fenced)

    i = 0
    fences = [m for m in map(_FENCE.match, lines) if m]
    closer = lines.index(fences[0].string) if fences else 0
    if len(fences) % 2 and not fences[0].group(2) and any(ln.strip() for ln in lines[:closer]):
        # An odd number of fence lines, the first bare: it closes a block that an earlier chunk of the section opened.
        block(lines[:closer], "python" if any(_DOCTEST.match(ln) for ln in lines[:closer]) else "")
        i = closer + 1
    margin = min((_indent(ln) for ln in lines[i:] if ln.strip()), default=0)
    if i == 0 and margin >= 2 and not any(_ITEM.match(ln) for ln in lines) and _code_like(lines):
        # Every line indented and no list: the rest of a code block that an earlier chunk opened.
        block(lines, "python")
        return units
    first = next((ln for ln in lines[i:] if ln.strip()), "")
    if i == 0 and first and _indent(first) > margin and not _ITEM.match(first):
        # The chunk starts inside an indented code block that the previous chunk of the section opened.
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > margin):
            i += 1
        if _code_like(lines[:i]):
            block(lines[:i], "python")
        else:
            i = 0  # indented prose: the rest of a list item
    while i < len(lines):
        line = lines[i]
        fence, directive = _FENCE.match(line), _CODE_DIRECTIVE.match(line)
        if fence:  # up to the closing fence of the same kind
            flush()
            mark, lang = fence.group(1), fence.group(2)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(mark)), len(lines))
            if lang == "eval-rst":  # MyST's embedded reStructuredText is text, not code
                units.extend(_units("\n".join(lines[i + 1:end]), code))
            else:
                block(lines[i + 1:end], "python" if lang in ("doctest", "pycon", "py", "python3") else lang)
            i = end + 1
            continue
        literal = line.rstrip().endswith("::") and not directive and not _MARKUP.match(line)
        if directive or literal:  # the indented lines that follow (blank lines included)
            if literal:
                para.append(line.strip()[:-1])  # "change the code to this::" reads "…to this:"
            flush()
            base = _indent(line)
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith(":") and _indent(lines[j]) > base:
                j += 1  # the directive's options (":linenos:")
            body: list[str] = []
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
                body.append(lines[j])
                j += 1
            block(body, (directive.group(2) if directive else "") or "python")
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


def doc_sentences(evidence: Evidence, tokens: Sequence[str], limit: int = 5,
                  near: Closeness | None = None, code: bool = True) -> list[str]:
    """The section's sentences, list items and (with ``code``) code examples with the most question terms (and,
    with ``near``, closest in meaning to it: ``closeness.sentence_score``), in reading order."""
    title = heading(evidence).casefold()
    sentences = [u for u in _units(evidence.text, code=code) if u.casefold() != title]  # not its own title
    wanted = set(tokens)
    # A sentence that names an API (backticks, a call, a dotted or snake_case name) usually holds the answer.
    terms = [len(wanted & set(tokenize(s))) + (1 if _NAMES_API.search(s) else 0) for s in sentences]
    meaning = near(sentences) if near is not None and sentences else [0.0] * len(sentences)
    scored = [(sentence_score(t, c) if near is not None else float(t), i, s)
              for i, (t, c, s) in enumerate(zip(terms, meaning, sentences, strict=True))]
    # By terms alone, a sentence must share one; by meaning too, every sentence is in the running.
    scored = [t for t in scored if t[0] > 0 or near is not None] or scored[:1]
    top = sorted(scored, key=lambda t: (-t[0], t[1]))[:limit]
    lead = next(((0, i, s) for i, s in enumerate(sentences) if not s.startswith(CODE)), None)
    if limit > 1 and lead is not None and all(i != lead[1] for _, i, _ in top):
        # A section's first sentence states what it is about ("Short answer: you can't."), often in other words
        # than the question's: it is kept, in place of the weakest match.
        top = [*top[:limit - 1], lead]
    chosen = {i for _, i, _ in top}
    # A sentence that introduces an example ("… like this:") brings the example it introduces.
    top += [(0.0, i + 1, sentences[i + 1]) for i in sorted(chosen) if sentences[i].endswith(":")
            and i + 1 < len(sentences) and i + 1 not in chosen and sentences[i + 1].startswith(CODE)]
    top = sorted(top, key=lambda t: t[1])
    return [s if s.startswith(CODE) else plain(s if len(s) <= 400 else s[:397].rstrip() + "…") for _, _, s in top]


def signature(e: Evidence) -> str:
    """The definition's header as written (joined when it spans lines), at most 300 characters."""
    if e.part is not None and e.part > 1:
        return ""  # a later part of a long definition starts mid-body: its first line is no signature
    lines = split_lines(e.text)
    first = definition_start(lines, _lang(e.path))
    head: list[str] = []
    for line in lines[first:first + 12]:
        stripped = line.strip()
        if not head and (stripped.startswith("@") or not stripped):
            continue
        head.append(stripped)
        if stripped.endswith((":", "{")) or len(head) > 10:
            break
    sig = " ".join(head).rstrip(":{ ")
    return sig if sig and quotable(sig) and len(sig) <= 300 else ""


def summary(docstring: str | None) -> str:
    """The first sentence of a docstring's prose (its field list left out: a docstring may open with one)."""
    return first_sentence(split_fields(docstring)[0]) if docstring else ""


def doc_lines(docstring: str | None, tokens: Sequence[str], first: str, limit: int = 3) -> list[str]:
    """Docstring sentences beyond the first that share the most question terms, in reading order (whole
    sentences, not the hard-wrapped lines they were written on). Its field list (parameters, return value,
    exceptions) counts as plain sentences ("`key` is the bucket…"), never as the fields as written."""
    if not docstring:
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
        units.extend((r, r) for r in rest if len(r) > 15)
    for i, (text, words) in enumerate(units):
        if (head and text.startswith(head)) or _CITATION_LIKE.search(text):
            continue
        overlap = len(wanted & set(tokenize(words)))
        if overlap:
            scored.append((overlap, i, text if len(text) <= 300 or text.startswith(CODE) else text[:297].rstrip() + "…"))
    top = sorted(sorted(scored, key=lambda t: (-t[0], t[1]))[:limit], key=lambda t: t[1])
    return [t if t.endswith((".", ":", "…", "!", "?", CODE)) else t + "." for _, _, t in top]


_LANGS = {".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
          ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".go": "go", ".rs": "rust", ".java": "java",
          ".rb": "ruby", ".c": "c", ".h": "c", ".cpp": "cpp", ".sh": "bash"}


def _lang(path: str) -> str:
    """The fence language of a file, by its extension ("" when unknown)."""
    return _LANGS.get("." + path.rsplit(".", 1)[-1], "") if "." in path else ""


_CONDITION = re.compile(r"^(?:\}\s*)?(?:if|elif|else\s+if|unless|when|case|except|catch)\b")


def _guard(lines: Sequence[str], off: int) -> int | None:
    """The offset of the condition a line sits directly under (``if``, ``elif``, ``except``, ``catch`` …: the
    nearest line above it that is indented less), or None when that line is not a condition."""
    if not 0 <= off < len(lines) or not lines[off].strip() or lines[off].strip()[0] in ")]}":
        return None  # a line that closes a bracket goes on a statement begun above, not under a condition
    depth = _indent(lines[off])
    above = next((j for j in range(off - 1, -1, -1) if lines[j].strip() and _indent(lines[j]) < depth), None)
    if above is None or not _CONDITION.match(lines[above].strip()) or not fenceable(lines[above].strip()):
        return None
    return above


def _assembled(lines: Sequence[str], start: int, end: int, wanted: Sequence[int]) -> list[str]:
    """The header's lines ``start..end`` and the ``wanted`` body lines after it, ``...`` where lines are left out."""
    out = [lines[i] for i in range(start, end + 1)] if end >= 0 else []
    prev = end
    for off in sorted(set(wanted)):
        if 0 <= off < len(lines) and off > prev:
            if out and off > prev + 1:  # lines left out before this one
                out.append(" " * _indent(lines[off]) + "...")
            out.append(lines[off])
            prev = off
    return out


def code_block(e: Evidence, shown: Sequence[tuple[int, str]], header: bool = True) -> str:
    """A fenced block of the definition's header (as written, across lines) and the body lines ``shown`` (file
    line numbers), with ``...`` where lines are left out; "" when there is nothing safe to show.

    A definition whose chunk opens with its doc comment (JSDoc ``/** … */``, ``///``) is shown from the
    definition itself: the answer states the docstring in words, and the citation still covers the comment."""
    lines = split_lines(e.text)
    lang = _lang(e.path)
    first = definition_start(lines, lang) if header and e.docstring and (e.part is None or e.part <= 1) else 0
    end = _header_end(lines, lang) if header and (e.part is None or e.part <= 1) else -1
    start = next((i for i in range(first, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("@")),
                 0)
    wanted = [ln - e.start_line for ln, _ in shown]
    guards: list[list[int]] = []
    for off in list(wanted):  # a line that opens a block ("if verbose:") is shown with the first line it guards
        nxt = next((j for j in range(off + 1, len(lines)) if lines[j].strip()), None)
        if lines[off].rstrip().endswith((":", "{")) and nxt is not None and _indent(lines[nxt]) > _indent(lines[off]) \
                and quotable(lines[nxt].strip()):
            wanted.append(nxt)
        whole = statement(lines, off)
        wanted.extend(whole)
        guard = _guard(lines, min([off, *whole]))
        if guard is not None:  # a line is read under the condition it sits in ("if (!options.x) {" above "throw …")
            guards.append([guard, *statement(lines, guard)])
    out = _assembled(lines, start, end, wanted)
    for lines_of in guards:  # the conditions, first to last, while the block still fits
        more = _assembled(lines, start, end, wanted + lines_of)
        if len(more) <= MAX_CODE_LINES:
            wanted, out = wanted + lines_of, more
    if not out or any(CODE in ln or _CITATION_LIKE.search(ln) for ln in out):
        return ""
    return _fenced(out, lang)
