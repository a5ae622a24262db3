"""The extractive answer's text: cited sentences about the chosen evidence, and code blocks on lines of their own.

Every sentence carries the ``[n]`` of the evidence it quotes, or the sentences after it that quote the same
evidence do (``cited_once``). For code it gives the definition's location,
signature and the first sentence of its docstring, the body lines that share the question's terms, and known
call sites; for docs it quotes the section's most relevant sentences (and links the definition of an API they
name); for a module's listing, each definition's name and docstring summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from sift.graph.models import Evidence, Plan, cited_ids
from sift.graph.writer.code_quotes import code_block, key_lines, signature, whole_body
from sift.graph.writer.code_reading import members
from sift.graph.writer.doc_quotes import (
    API_NAME,
    BULLET,
    doc_lines,
    doc_sentences,
    heading_text,
    label,
    section_title,
    summary,
)
from sift.graph.writer.doc_units import CODE
from sift.graph.writer.docstrings import predicate
from sift.graph.writer.selection import is_listing, last_name, whole_name
from sift.models import CODE_KINDS
from sift.retrievers.paths import is_stub_path, is_test_path
from sift.text import lines_phrase
from sift.text import shown as escaped
from sift.tokenize import tokenize, word_parts

# Body lines shown of a longer definition, the ones nearest the question: two where the question asks where it is,
# six where it asks how it works (six against four: 2 more answers hit on the fitting sets, none fewer; eight: 1).
LOCATE_LINES, EXPLAIN_LINES = 2, 6
DOC_SENTENCES = 5  # what a section says: its sentences, list items and examples nearest the question
LIST_SENTENCES = 10  # the same for a list question, whose answer is often a section's whole list


def cite(text: str, n: int) -> str:
    """``text`` as a cited sentence, the marker before its closing punctuation: "Keeps state [1].". A list item
    quoted without its neighbours loses the comma or semicolon that joined it to them."""
    body = text.rstrip().rstrip(",;").rstrip()
    end = re.search(r"[.!?:]*$", body)
    stop = end.group(0) if end else ""
    body = body[:len(body) - len(stop)].rstrip()
    if stop.startswith(":"):
        return f"{body} [{n}]:"
    return f"{body} [{n}]{stop[:1] or '.'}"


def _placed(label: str, where: str, kind: str, doc: str) -> str:
    """The first sentence about a definition: where it is and what it does, in one sentence."""
    said = predicate(doc) if doc else None
    if said:
        return f"{label} in {where} {said}"
    kind = f" ({kind})" if kind else ""
    if doc:
        return f"{label}{kind} in {where}: {doc}"
    return f"{label}{kind} is defined in {where}"


def _kind(e: Evidence, sig: str) -> str:
    """What the definition is: "class" when its header says so (a class's chunk is indexed as code), else its kind."""
    return "class" if re.match(r"(?:export\s+)?(?:abstract\s+)?class\s", sig) else e.kind


def _code_sentences(e: Evidence, plan: Plan, tokens: Sequence[str], idf: Mapping[str, float] | None = None,
                    after: Evidence | None = None) -> list[str]:
    """What a definition is and does, its lines nearest the question, its docstring's sentences and its callers. A
    part that goes on after the previous one of the same definition (``after``) says so and shows its lines only
    (nothing, when it has none to show): the rest was said of that part."""
    n = e.id
    sig = signature(e)
    kind = _kind(e, sig)
    where = f"{escaped(e.path)} ({lines_phrase(e.start_line, e.end_line)})"
    doc = summary(e.docstring)
    name = label(e)
    again = after is not None and after.path == e.path and whole_name(after) == whole_name(e) \
        and after.start_line < e.start_line
    if again:  # its own label: the name in backticks only where this part's text spells it, as the checker reads it
        goes_on = f"{name} goes on ({lines_phrase(e.start_line, e.end_line)})"
        out = [cite(goes_on[:1].upper() + goes_on[1:] if e.module_code else goes_on, n)]
    elif name == escaped(e.path):  # a whole file or module: its path is its name
        out = [cite(f"{where}: {doc}" if doc else f"{where} is the relevant file", n)]
    else:
        first = _placed(name, where, "" if e.module_code else kind, doc)
        # "Module-level code in…" opens a sentence; a name keeps its case ("parseArgs", "app's `listen`").
        out = [cite(first[:1].upper() + first[1:] if e.module_code else first, n)]
    shown = whole_body(e) if kind != "class" and not e.module_code else None
    if shown is None:
        shown = key_lines(e, tokens, limit=LOCATE_LINES if plan.question_type == "locate" else EXPLAIN_LINES,
                          own=tokenize(e.symbol.rsplit(".", 1)[-1]), idf=idf, fenced=True)
    block = code_block(e, shown) if shown or (kind != "class" and "(" in sig) else ""  # a bare class line shows nothing
    if block:
        out.append(block)
    if again:
        return out if block else []  # a part with no lines to show says nothing
    for line in doc_lines(e.docstring, tokens, doc):
        out.append(line if line.startswith(CODE) else cite(line, n))
    names = members(e)
    if len(names) >= 2:
        out.append(cite(f"It declares {_and(f'`{m}`' for m in names)}", n))

    def sites(calls: Sequence[dict]) -> str:
        return ", ".join(f"{c['path']}:{c['line']}" + (f" (in {c['caller']})" if c.get("caller") else "")
                         for c in calls[:3])

    code_calls = [c for c in e.callers if not is_test_path(c["path"])]
    test_calls = list({c.get("caller") or f"{c['path']}:{c['line']}": c for c in e.callers
                       if is_test_path(c["path"])}.values())
    if code_calls:
        out.append(cite(f"It is called from {sites(code_calls)}", n))
    elif test_calls:
        out.append(cite(f"Tests call it at {sites(test_calls)}", n))
    return out


def _and(items: Iterable[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


_FUNCTION_HEAD = re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|function)\b")


def sibling_list(plan: Plan, chosen: Sequence[Evidence]) -> bool:
    """A list question answered by several definitions of one file (siblings): listed like a module's."""
    return plan.question_type == "list" and len({e.symbol for e in chosen}) >= 2 and len({e.path for e in chosen}) == 1 \
        and all(e.kind in CODE_KINDS and not e.module_code for e in chosen)


def _listing_sentences(items: Sequence[Evidence]) -> list[str]:
    """A module's definitions as a list, one item a line: its name, lines and docstring summary, cited."""
    heads = [signature(e) for e in items]
    noun = "classes" if all(h.startswith("class ") for h in heads) else "functions" if all(
        _FUNCTION_HEAD.match(h) for h in heads) else "definitions"
    files = list(dict.fromkeys(e.path for e in items))
    ends = {parts[-1] for e in items if (parts := word_parts(last_name(e)))}
    if len(files) == 1:
        out = [f"{items[0].path} defines {len(items)} {noun}:"]
    elif len(ends) == 1:  # a family of classes named alike ("which exporters": JsonExporter, CsvExporter …)
        out = [f"{len(items)} {noun} named …{ends.pop()} are defined in {len(files)} files:"]
    else:
        out = [f"{len(items)} {noun} are defined in {len(files)} files:"]
    for e in items:
        doc = summary(e.docstring)
        where = f"({lines_phrase(e.start_line, e.end_line)})" if len(files) == 1 \
            else f"{escaped(e.path)} ({lines_phrase(e.start_line, e.end_line)})"
        out.append("- " + cite(_placed(f"`{last_name(e)}`", where, _kind(e, signature(e)), doc)
                               .replace(" in (lines", " (lines"), e.id))
    return out


MAX_DEFINITIONS = 1


def named_definitions(text: str, chosen: Sequence[Evidence], evidence: Sequence[Evidence]) -> list[Evidence]:
    """Code evidence (not tests or stubs, not already cited) defining an API that ``text`` names: backticked,
    dotted, snake_case, CamelCase or called (``pkg.load_config`` → ``load_config``)."""
    text = re.sub(rf"{CODE}[\w+-]*", " ", text)  # a fence is no quote: the names in a code block count as written
    named = [(quoted or bare or called).split("(", 1)[0].rsplit(".", 1)[-1]
             for quoted, bare, called in API_NAME.findall(text)]
    cited = {id(e) for e in chosen}
    found: list[Evidence] = []
    for name in dict.fromkeys(n for n in named if len(n) > 3):
        defs = [e for e in evidence if id(e) not in cited and e.kind in CODE_KINDS and last_name(e) == name
                and not is_test_path(e.path) and not is_stub_path(e.path)]
        if defs:  # the first retrieved definition, at its first retrieved part (where its signature is)
            found.append(min((e for e in defs if e.path == defs[0].path), key=lambda e: e.start_line))
    return found[:MAX_DEFINITIONS]


def _doc_sentences(e: Evidence, tokens: Sequence[str], part: bool = False, after: Evidence | None = None,
                   limit: int = DOC_SENTENCES, last: bool = True) -> list[str]:
    """What a documentation section says, as at most ``limit`` cited sentences, list items and code blocks; ``[]``
    for a ``part`` of an answer's section with nothing to quote. A part that goes on from the previous one
    (``after``) says so; the ``last`` part of a section says where it goes on (its subsections)."""
    where = f"{escaped(e.path)} ({lines_phrase(e.start_line, e.end_line)})"
    section = section_title(e) if e.kind == "doc" else ""
    intro = f'The section "{section}" of {where} says' if section and section != e.path else f"{where} says"
    if after is not None and after.path == e.path and whole_name(after) == whole_name(e):
        intro = f"The section goes on ({lines_phrase(e.start_line, e.end_line)})"
    quoted = [_as_item(s) for s in doc_sentences(e, tokens, limit=limit)]
    # A section that introduces its parts ("Errors" over a section per error) names them: where it goes on.
    parts = [cite(_goes_on(e.subsections), e.id)] if e.subsections and last else []
    if not quoted:
        return [] if part else [cite(f"{intro} nothing quotable", e.id), *parts]
    if _own_line(quoted[0]):  # a code example or a list item opens it: the intro carries its citation
        return [cite(f"{intro}:", e.id), *(s if s.startswith(CODE) else cite(s, e.id) for s in quoted), *parts]
    return [cite(f"{intro}: {quoted[0]}", e.id), *(s if s.startswith(CODE) else cite(s, e.id) for s in quoted[1:]),
            *parts]


NAMED_SUBSECTIONS = 8  # a section's subsections named in its answer; the rest are counted


def _goes_on(titles: Sequence[str]) -> str:
    """"It goes on in the sections "A", "B" and 3 more": the first ``NAMED_SUBSECTIONS`` by name."""
    named = [_quoted(t) for t in titles[:NAMED_SUBSECTIONS]]
    rest = len(titles) - len(named)
    return f"It goes on in the section{'s' if len(titles) > 1 else ''} " + _and([*named, f"{rest} more"] if rest else named)


def _quoted(title: str) -> str:
    """A heading named in a sentence (``heading_text``): in double quotes, its own double quotes made single."""
    return '"' + escaped(heading_text(title)).replace('"', "'") + '"'


_NUMBERED = re.compile(r"^\d+[.)]\s")


def _as_item(unit: str) -> str:
    """A quoted bullet item as the answer's Markdown item (``- ``); a numbered item keeps its number."""
    return "- " + BULLET.sub("", unit) if BULLET.match(unit) else unit


def _own_line(piece: str) -> bool:
    """A fenced code block or a list item stands on a line of its own (``compose``)."""
    return piece.startswith((CODE, "- ")) or bool(_NUMBERED.match(piece))


_LAST_MARKER = re.compile(r" \[(\d+)\](?=[.!?:]?$)")  # the one marker a cited sentence ends with ("… [2].")


def cited_once(pieces: Sequence[str]) -> list[str]:
    """Each claim cited once. Sentences that run on and quote the same evidence carry its marker once, after the
    last of them: "The docs say a. b [1]." rather than "a [1]. b [1].". List items quoted from the evidence that
    the sentence or item before them cites carry no marker of their own: the sentence that introduces a list
    cites its items (``checker.claims`` reads them so). A code block keeps its own."""
    def marker(piece: str) -> re.Match[str] | None:
        return _LAST_MARKER.search(piece) if len(cited_ids(piece)) == 1 else None

    marks = [marker(p) if not p.startswith(CODE) else None for p in pieces]
    out = list(pieces)
    for i in range(len(out) - 1):
        mine, next_ = marks[i], marks[i + 1]
        if mine is None or next_ is None or mine.group(1) != next_.group(1):
            continue
        if _own_line(out[i + 1]):  # an item of a list its introduction (or the item before) cites
            out[i + 1] = out[i + 1][:next_.start()] + out[i + 1][next_.end():]
        elif not _own_line(out[i]):  # a sentence of a run that the next sentence cites
            out[i] = out[i][:mine.start()] + out[i][mine.end():]
    return out


def compose(pieces: Sequence[str]) -> str:
    """The answer text: sentences run on (``cited_once``); a fenced code block (``CODE``) or a list item (``- ``,
    ``1. ``) stands on a line of its own. A sentence that introduces what its chunk does not hold ("… like this
    [1]:") ends with a full stop when other evidence follows it."""
    out = ""
    for piece in cited_once(pieces):
        if _own_line(piece):
            out = f"{out.rstrip()}\n{piece}\n"
        elif not out or out.endswith("\n"):
            out = f"{out}{piece}"
        else:
            out = f"{out[:-1]}." if _INTRODUCES_NOTHING.search(out) else out
            out = f"{out} {piece}"
    return out.strip()


_INTRODUCES_NOTHING = re.compile(r"\[\d+\]:$")  # still cited on its own (``cited_once``): other evidence follows


def _file_sentences(e: Evidence, tokens: Sequence[str], idf: Mapping[str, float] | None = None) -> list[str]:
    head = cite(f"{escaped(e.path)} ({lines_phrase(e.start_line, e.end_line)}) is the relevant file", e.id)
    block = code_block(e, key_lines(e, tokens, limit=3, idf=idf), header=False)
    return [head, block] if block else [head]


def _named_sentence(d: Evidence) -> str:
    """The definition a documentation answer names, said after the docs: where the code does it."""
    doc = summary(d.docstring)
    said = predicate(doc) if doc else None
    name = last_name(d)
    spelled = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", d.text)
    where = f"{f'`{name}`' if spelled else name} ({d.path}, {lines_phrase(d.start_line, d.end_line)})"  # checked if quoted
    if said:
        return cite(f"The code does it in {where}, which {said}", d.id)
    return cite(f"The code does it in {where}" + (f": {doc}" if doc else ""), d.id)


def answer_sentences(plan: Plan, chosen: list[Evidence], evidence: Sequence[Evidence],
                     tokens: Sequence[str], idf: Mapping[str, float] | None = None) -> tuple[list[str], list[Evidence]]:
    """The answer's cited sentences about the chosen evidence, and the evidence they cite, in order of use
    (``idf`` weighs the question's terms when choosing a definition's lines)."""
    listing = is_listing(chosen) or sibling_list(plan, chosen)
    sentences: list[str] = []
    if listing:
        sentences = _listing_sentences(chosen)
    else:
        if len({(e.path, whole_name(e)) for e in chosen}) == 1:
            chosen = sorted(chosen, key=lambda e: e.start_line)  # the parts of one section, read in order
        said: list[Evidence] = []
        for i, e in enumerate(chosen):
            if e.kind in CODE_KINDS:
                told = _code_sentences(e, plan, tokens, idf, after=said[-1] if said else None)
            elif e.kind == "file":
                told = _file_sentences(e, tokens, idf)
            else:
                later = chosen[i + 1:]
                told = _doc_sentences(e, tokens, part=len(chosen) > 1, after=said[-1] if said else None,
                                      limit=LIST_SENTENCES if plan.question_type == "list" else DOC_SENTENCES,
                                      last=not any(d.path == e.path and whole_name(d) == whole_name(e) for d in later))
            if told:
                sentences.extend(told)
                said.append(e)
        if not said:
            sentences, said = _doc_sentences(chosen[0], tokens), chosen[:1]
        chosen = said
        if all(e.kind == "doc" for e in chosen):  # a documentation answer links the definition of the API it names
            for d in named_definitions(" ".join(sentences), chosen, evidence):
                sentences.append(_named_sentence(d))
                chosen = [*chosen, d]
    return sentences, chosen
