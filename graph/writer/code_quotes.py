"""What the writer can quote from a definition: its body lines nearest the question, a code block of its header
and those lines (each with its whole statement, the first line it opens and the condition it sits in), and its
signature. Pure functions of the evidence text and the question's terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sift.graph.models import Evidence
from sift.graph.writer.code_reading import statement
from sift.graph.writer.doc_quotes import quotable
from sift.graph.writer.doc_units import CODE, MAX_CODE_LINES, citation_like, fenceable, fenced_block, indent
from sift.text import split_lines
from sift.tokenize import tokenize

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


_QUOTES = ('"""', "'''")
_EITHER = "either"  # a docstring opened in an earlier part, closed by whichever quote comes first


def _open_docstring(evidence: Evidence, lines: Sequence[str]) -> str | None:
    """``_EITHER`` when a later part of a long definition starts inside its docstring (its first line is a whole
    line of the docstring, whose opening quotes an earlier part holds; a doctest's ``>>> x = f()`` is no ``x = f()``),
    else None."""
    if not evidence.part or evidence.part < 2 or not evidence.docstring:
        return None
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    said = {ln.strip() for ln in evidence.docstring.splitlines()}
    return _EITHER if first and not first.startswith(_QUOTES) and first in said else None


def body_lines(evidence: Evidence, after_header: bool = True, fenced: bool = False,
               safe: bool = True) -> list[tuple[int, str]]:
    """A definition's quotable body lines as (offset, stripped text): not its header (with ``after_header``),
    docstring, comments, decorators, or lines without a word (blank, ``}``, ``});``). With ``fenced`` the lines are
    for a fenced block, where a backtick (a template literal) or a sentence end inside a line is safe. Without
    ``safe``, also the lines that cannot be quoted (too long, or read as a citation marker)."""
    out = []
    lines = split_lines(evidence.text)
    in_doc: str | None = _open_docstring(evidence, lines)
    header = _header_end(lines, fence_language(evidence.path)) if after_header else -1
    for offset, line in enumerate(lines):
        stripped = line.strip()
        if in_doc is not None:
            if any(q in stripped for q in _QUOTES) if in_doc == _EITHER else in_doc in stripped:
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
        if (not safe or len(stripped) <= 160 and (fenceable(stripped) if fenced else quotable(stripped))) \
                and _WORDY.search(stripped):
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


def signature(e: Evidence) -> str:
    """The definition's header as written (joined when it spans lines), at most 300 characters."""
    if e.part is not None and e.part > 1:
        return ""  # a later part of a long definition starts mid-body: its first line is no signature
    lines = split_lines(e.text)
    first = definition_start(lines, fence_language(e.path))
    head: list[str] = []
    for line in lines[first:first + 12]:
        stripped = line.strip()
        if not head and (stripped.startswith("@") or not stripped):
            continue
        head.append(stripped)
        if stripped.endswith((":", "{", ";")) or len(head) > 10:  # ";": a declaration without a body ends
            break
    sig = " ".join(head).rstrip(":{; ")
    return sig if sig and quotable(sig) and len(sig) <= 300 else ""


_LANGS = {".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
          ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".go": "go",
          ".rs": "rust", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".c": "c", ".h": "c", ".cpp": "cpp",
          ".sh": "bash"}


def fence_language(path: str) -> str:
    """The fence language of a file, by its extension ("" when unknown)."""
    return _LANGS.get("." + path.rsplit(".", 1)[-1], "") if "." in path else ""


_CONDITION = re.compile(r"^(?:\}\s*)?(?:if|elif|else\s+if|unless|when|case|except|catch)\b")


def _guard(lines: Sequence[str], off: int) -> int | None:
    """The offset of the condition a line sits directly under (``if``, ``elif``, ``except``, ``catch`` …: the
    nearest line above it that is indented less), or None when that line is not a condition."""
    if not 0 <= off < len(lines) or not lines[off].strip() or lines[off].strip()[0] in ")]}":
        return None  # a line that closes a bracket goes on a statement begun above, not under a condition
    depth = indent(lines[off])
    above = next((j for j in range(off - 1, -1, -1) if lines[j].strip() and indent(lines[j]) < depth), None)
    if above is None or not _CONDITION.match(lines[above].strip()) or not fenceable(lines[above].strip()):
        return None
    return above


_ASSIGNED = re.compile(r"^(?:(?:const|let|var|final|auto)\s+)?([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=(?!=)")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
ASSIGNMENT_REACH = 2  # how many lines above a shown line its names' assignments are looked for


def assignments_above(lines: Sequence[str], off: int, shown: Sequence[int]) -> list[int]:
    """The offsets of the lines just above ``off`` (within ``ASSIGNMENT_REACH``, at most as deep) that assign a
    name the line at ``off`` reads (``path = join(root, name)`` above ``open(path)``) and are not shown yet."""
    if not 0 <= off < len(lines):
        return []
    m = _ASSIGNED.match(lines[off].strip())
    used = set(_NAME.findall(lines[off][m.end():] if m else lines[off]))
    depth = indent(lines[off])
    out = []
    for j in range(off - 1, max(-1, off - 1 - ASSIGNMENT_REACH), -1):
        text = lines[j].strip()
        if text and indent(lines[j]) > depth:
            continue
        if text and indent(lines[j]) < depth:
            break  # the block the line sits in starts here
        a = _ASSIGNED.match(text)
        if a and a.group(1) in used and j not in shown and fenceable(text):
            out.append(j)
            used.discard(a.group(1))
    return out


def _assembled(lines: Sequence[str], start: int, end: int, wanted: Sequence[int]) -> list[str]:
    """The header's lines ``start..end`` and the ``wanted`` body lines after it, ``...`` where lines are left out."""
    out = [lines[i] for i in range(start, end + 1)] if end >= 0 else []
    prev = end
    for off in sorted(set(wanted)):
        if 0 <= off < len(lines) and off > prev:
            if out and off > prev + 1:  # lines left out before this one
                out.append(" " * indent(lines[off]) + "...")
            out.append(lines[off])
            prev = off
    return out


def _frame(e: Evidence, header: bool = True) -> tuple[list[str], int, int]:
    """The definition's lines, and where its shown header starts and ends (-1: no header): past a doc comment
    its chunk opens with (JSDoc ``/** … */``, ``///``) and its decorators."""
    lines = split_lines(e.text)
    lang = fence_language(e.path)
    first = definition_start(lines, lang) if header and e.docstring and (e.part is None or e.part <= 1) else 0
    end = _header_end(lines, lang) if header and (e.part is None or e.part <= 1) else -1
    start = next((i for i in range(first, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("@")),
                 0)
    return lines, start, end


def whole_body(e: Evidence) -> list[tuple[int, str]] | None:
    """Every line of a definition's body (file line numbers) from its first line of code to its last, closing
    brackets and comments too, when each can be fenced and the block with the header fits ``MAX_CODE_LINES``;
    else None. A definition this short is its own best excerpt."""
    code = body_lines(e, fenced=True, safe=False)
    if not code:
        return None
    lines, start, end = _frame(e)
    offsets = [off for off in range(code[0][0], code[-1][0] + 1) if lines[off].strip()]
    if any(not fenceable(lines[off].strip()) or len(lines[off].strip()) > 160 for off in offsets):
        return None
    if len(_assembled(lines, start, end, offsets)) > MAX_CODE_LINES:
        return None
    return [(e.start_line + off, lines[off].strip()) for off in offsets]


def code_block(e: Evidence, shown: Sequence[tuple[int, str]], header: bool = True) -> str:
    """A fenced block of the definition's header (as written, across lines) and the body lines ``shown`` (file
    line numbers), with ``...`` where lines are left out; "" when there is nothing safe to show.

    A definition whose chunk opens with its doc comment (JSDoc ``/** … */``, ``///``) is shown from the
    definition itself: the answer states the docstring in words, and the citation still covers the comment."""
    lines, start, end = _frame(e, header)
    wanted = [ln - e.start_line for ln, _ in shown]
    guards: list[list[int]] = []
    for off in list(wanted):  # a line that opens a block ("if verbose:") is shown with the first line it guards
        nxt = next((j for j in range(off + 1, len(lines)) if lines[j].strip()), None)
        if lines[off].rstrip().endswith((":", "{")) and nxt is not None and indent(lines[nxt]) > indent(lines[off]) \
                and quotable(lines[nxt].strip()):
            wanted.append(nxt)
        whole = statement(lines, off)
        wanted.extend(whole)
        guard = _guard(lines, min([off, *whole]))
        if guard is not None:  # a line is read under the condition it sits in ("if (!options.x) {" above "throw …")
            guards.append([guard, *statement(lines, guard)])
    for off in list(wanted):  # a value is shown where it is made ("path = join(root, name)" above "open(path)")
        guards.extend([j, *statement(lines, j)] for j in assignments_above(lines, off, wanted))
    out = _assembled(lines, start, end, wanted)
    for lines_of in guards:  # the conditions, first to last, while the block still fits
        more = _assembled(lines, start, end, wanted + lines_of)
        if len(more) <= MAX_CODE_LINES:
            wanted, out = wanted + lines_of, more
    if not out or any(CODE in ln or citation_like(ln) for ln in out):
        return ""
    return fenced_block(out, fence_language(e.path))
