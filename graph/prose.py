"""The extractive answer's text: cited sentences about the chosen evidence, and code blocks on lines of their own.

Every sentence carries the ``[n]`` of the evidence it quotes. For code it gives the definition's location,
signature and the first sentence of its docstring, the body lines that share the question's terms, and known
call sites; for docs it quotes the section's most relevant sentences (and links the definition of an API they
name); for a module's listing, each definition's name and docstring summary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.graph.excerpts import CODE, doc_lines, doc_sentences, first_sentence, key_lines, members, signature
from sift.graph.state import Evidence, Plan
from sift.graph.support import is_listing, last_name, whole_name
from sift.models import CODE_KINDS
from sift.retrievers.paths import is_stub_path, is_test_path


def _code_sentences(e: Evidence, plan: Plan, tokens: Sequence[str]) -> list[str]:
    n, name = e.id, e.symbol
    simple = name.rsplit(".", 1)[-1]
    defined = simple and re.search(rf"(?<![A-Za-z0-9_]){re.escape(simple)}(?![A-Za-z0-9_])", e.text)
    label = f"`{simple}`" if defined else name
    sig = signature(e)
    kind = "class" if re.match(r"(?:export\s+)?(?:abstract\s+)?class\s", sig) else e.kind
    out = [f"{label} ({kind}) is defined in {e.path} at lines {e.start_line}-{e.end_line} [{n}]."]
    if sig:
        out.append(f"Its signature is `{sig}` [{n}].")
    doc = first_sentence(e.docstring)
    if doc:
        out.append(f"{doc.rstrip('.')}. [{n}]")
    for line in doc_lines(e.docstring, tokens, doc):
        out.append(line if line.startswith(CODE) else f"{line} [{n}]")
    names = members(e)
    if len(names) >= 2:
        out.append(f"Its body declares {', '.join(f'`{m}`' for m in names)} [{n}].")
    lines = key_lines(e, tokens, limit=2 if plan.question_type == "locate" else 4)
    if lines:
        shown = "; ".join(f"line {ln}: `{text}`" for ln, text in lines if "`" not in text)
        if shown:
            out.append(f"Relevant lines: {shown} [{n}].")
    def sites(calls: Sequence[dict]) -> str:
        return ", ".join(f"{c['path']}:{c['line']}" + (f" (in {c['caller']})" if c.get("caller") else "")
                         for c in calls[:3])

    code_calls = [c for c in e.callers if not is_test_path(c["path"])]
    test_calls = [c for c in e.callers if is_test_path(c["path"])]
    if code_calls:
        out.append(f"It is called from {sites(code_calls)} [{n}].")
    elif test_calls:
        out.append(f"Tests call it at {sites(test_calls)} [{n}].")
    return out


def _listing_sentences(items: Sequence[Evidence]) -> list[str]:
    """A module's definitions as a list: names with their citations, then each one's docstring summary."""
    classes = all(signature(e).startswith("class ") for e in items)
    noun = "classes" if classes else "definitions"
    names = ", ".join(f"`{last_name(e)}` [{e.id}]" for e in items)
    out = [f"{items[0].path} defines these {noun}: {names}."]
    for e in items:
        doc = first_sentence(e.docstring)
        if doc:
            out.append(f"`{last_name(e)}` (lines {e.start_line}-{e.end_line}): {doc.rstrip('.')} [{e.id}].")
    return out


_IDENTIFIER = re.compile(r"`([^`]+)`|\b([A-Za-z_][\w.]*[_.][\w.]*\w|[A-Z][a-z]+[A-Z]\w*|\w+(?=\())")
MAX_DEFINITIONS = 1


def named_definitions(text: str, chosen: Sequence[Evidence], evidence: Sequence[Evidence]) -> list[Evidence]:
    """Code evidence (not tests or stubs, not already cited) defining an API that ``text`` names: backticked,
    dotted, snake_case, CamelCase or called (``pkg.load_config`` → ``load_config``)."""
    text = re.sub(rf"{CODE}[\w+-]*", " ", text)  # a fence is no quote: the names in a code block count as written
    named = [(quoted or bare).split("(", 1)[0].rsplit(".", 1)[-1] for quoted, bare in _IDENTIFIER.findall(text)]
    cited = {id(e) for e in chosen}
    found: list[Evidence] = []
    for name in dict.fromkeys(n for n in named if len(n) > 3):
        defs = [e for e in evidence if id(e) not in cited and e.kind in CODE_KINDS and last_name(e) == name
                and not is_test_path(e.path) and not is_stub_path(e.path)]
        if defs:  # the first retrieved definition, at its first retrieved part (where its signature is)
            found.append(min((e for e in defs if e.path == defs[0].path), key=lambda e: e.start_line))
    return found[:MAX_DEFINITIONS]


def _doc_sentences(e: Evidence, tokens: Sequence[str], part: bool = False, after: Evidence | None = None) -> list[str]:
    """What a documentation section says, as cited sentences and code blocks; ``[]`` for a ``part`` of an
    answer's section with nothing to quote. A part that goes on from the previous one (``after``) says so."""
    where = f"{e.path} (lines {e.start_line}-{e.end_line})"
    section = e.symbol.split(" > ")[-1] if e.kind == "doc" else ""
    intro = f'The section "{section}" of {where} says' if section and section != e.path else f"{where} says"
    if after is not None and after.path == e.path and whole_name(after) == whole_name(e):
        intro = f"It goes on at lines {e.start_line}-{e.end_line}"
    quoted = doc_sentences(e, tokens)
    if not quoted:
        return [] if part else [f"{intro} nothing quotable [{e.id}]."]
    if quoted[0].startswith(CODE):  # a code example opens the answer: the intro carries its citation
        return [f"{intro} [{e.id}]:", *(s if s.startswith(CODE) else f"{s} [{e.id}]" for s in quoted)]
    return [f"{intro}: {quoted[0]} [{e.id}]", *(s if s.startswith(CODE) else f"{s} [{e.id}]" for s in quoted[1:])]


def compose(pieces: Sequence[str]) -> str:
    """The answer text: sentences run on, a fenced code block (``CODE``) stands on lines of its own."""
    out = ""
    for piece in pieces:
        if piece.startswith(CODE):
            out = f"{out.rstrip()}\n{piece}\n"
        else:
            out = f"{out}{piece}" if not out or out.endswith("\n") else f"{out} {piece}"
    return out.strip()


def _file_sentences(e: Evidence, tokens: Sequence[str]) -> list[str]:
    lines = key_lines(e, tokens, limit=3)
    head = f"{e.path} (lines {e.start_line}-{e.end_line}) is the relevant file [{e.id}]."
    if not lines:
        return [head]
    shown = "; ".join(f"line {ln}: `{text}`" for ln, text in lines if "`" not in text)
    return [head, f"Relevant lines: {shown} [{e.id}]."] if shown else [head]


def answer_sentences(plan: Plan, chosen: list[Evidence], evidence: Sequence[Evidence],
                     tokens: Sequence[str]) -> tuple[list[str], list[Evidence]]:
    """The answer's cited sentences about the chosen evidence, and the evidence they cite, in order of use."""
    listing = is_listing(chosen)
    sentences: list[str] = []
    if listing:
        sentences = _listing_sentences(chosen)
    else:
        if len({(e.path, whole_name(e)) for e in chosen}) == 1:
            chosen = sorted(chosen, key=lambda e: e.start_line)  # the parts of one section, read in order
        said: list[Evidence] = []
        for e in chosen:
            if e.kind in CODE_KINDS:
                told = _code_sentences(e, plan, tokens)
            elif e.kind == "file":
                told = _file_sentences(e, tokens)
            else:
                told = _doc_sentences(e, tokens, part=len(chosen) > 1, after=said[-1] if said else None)
            if told:
                sentences.extend(told)
                said.append(e)
        if not said:
            sentences, said = _doc_sentences(chosen[0], tokens), chosen[:1]
        chosen = said
        if all(e.kind == "doc" for e in chosen):  # a documentation answer links the definition of the API it names
            for d in named_definitions(" ".join(sentences), chosen, evidence):
                doc = first_sentence(d.docstring)
                summary = f": {doc.rstrip('.')}" if doc else ""
                sentences.append(f"`{last_name(d)}` is defined in {d.path} at lines {d.start_line}-{d.end_line}"
                                 f"{summary} [{d.id}].")
                chosen = [*chosen, d]
    return sentences, chosen
