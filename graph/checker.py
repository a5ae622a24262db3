"""The citation checker: every ``[n]`` names real evidence, cited lines exist in the indexed file version, code
identifiers in backticks appear in the text cited for their sentence (``claims``), and at least K citations are
valid.

``check_draft`` is pure: the check node passes in what the database says about each cited file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sift.graph.models import MARKER, Citation, Draft, Evidence, Verdict, cited_ids

_TICKS = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the index knows about a file version: its line count, content hash and lines."""

    line_count: int
    content_hash: str
    lines: tuple[str, ...] = ()


def sentences(text: str) -> list[str]:
    """The answer split into sentences (each ends with its markers)."""
    parts: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if not piece.strip():
            continue
        if parts and MARKER.fullmatch(piece.strip()):
            parts[-1] += " " + piece.strip()
        else:
            parts.append(piece.strip())
    return parts


def identifier_supported(code: str, cited_text: str) -> bool:
    """True when the backticked ``code`` occurs in the cited text verbatim, or all its identifiers do."""
    core = code.strip().removesuffix("()")
    if not core or re.search(rf"(?<![A-Za-z0-9_]){re.escape(core)}(?![A-Za-z0-9_])", cited_text):
        return True
    names = [n for n in _IDENT.findall(core) if len(n) > 1]
    return bool(names) and all(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", cited_text)
                               for n in names)


def _line_problem(c: Citation, facts: FileFacts | None, ev: Evidence) -> str | None:
    if facts is None:
        return f"[{c.evidence_id}] cites {c.path}, which is not in the serving index"
    if ev.content_hash and facts.content_hash != ev.content_hash:
        return f"[{c.evidence_id}] cites {c.path} as of a different version than the index holds"
    if c.start_line < 1 or c.end_line < c.start_line:
        return f"[{c.evidence_id}] has an empty or negative line range {c.start_line}-{c.end_line}"
    if c.end_line > facts.line_count:
        return f"[{c.evidence_id}] cites lines {c.start_line}-{c.end_line} past the end of {c.path} " \
               f"({facts.line_count} lines)"
    return None


def _citation_for(ev: Evidence, draft: Draft) -> Citation:
    for c in draft.citations:
        if c.evidence_id == ev.id:
            return c.model_copy(update={"path": ev.path})
    return Citation(evidence_id=ev.id, path=ev.path, start_line=ev.start_line, end_line=ev.end_line,
                    snippet=ev.text[:400])


def _cited_text(c: Citation, ev: Evidence, facts: FileFacts | None) -> str:
    if facts is not None and facts.lines and (c.start_line, c.end_line) != (ev.start_line, ev.end_line):
        return "\n".join(facts.lines[c.start_line - 1 : c.end_line])
    return ev.text


def check_draft(draft: Draft, evidence: Sequence[Evidence], files: Mapping[str, FileFacts], k: int) -> Verdict:
    """Validate a draft's citations; ``ok`` when nothing is wrong and at least ``k`` citations are valid."""
    by_id = {e.id: e for e in evidence}
    problems: list[str] = []
    ids = list(dict.fromkeys([*cited_ids(draft.text), *(c.evidence_id for c in draft.citations)]))
    checked: dict[int, Citation] = {}
    texts: dict[int, str] = {}
    for n in ids:
        ev = by_id.get(n)
        if ev is None:
            problems.append(f"[{n}] names no evidence (there are {len(evidence)} items)")
            continue
        c = _citation_for(ev, draft)
        problem = _line_problem(c, files.get(ev.path), ev)
        if problem:
            problems.append(problem)
            checked[n] = c.model_copy(update={"valid": False})
            continue
        texts[n] = _cited_text(c, ev, files.get(ev.path))
        checked[n] = c.model_copy(update={"valid": True, "snippet": texts[n][:400]})
    for sentence, covering in claims(draft.text):
        marks = [m for m in covering if m in texts] or list(texts)
        pool = "\n".join(texts[m] for m in marks)
        for code in _TICKS.findall(sentence):
            if not identifier_supported(code, pool):
                problems.append(f"`{code}` does not appear in the text cited by {marks or 'nothing'}")
                for m in covering:
                    if m in checked:
                        checked[m] = checked[m].model_copy(update={"valid": False})
    valid = [n for n, c in checked.items() if c.valid]
    if draft.mode == "llm":  # a model may list citations its text never marks: only a marked one supports the text
        marked = set(cited_ids(draft.text))
        for n in valid:
            if n not in marked:
                checked[n] = checked[n].model_copy(update={"valid": False})
        valid = [n for n in valid if n in marked]
    if len(valid) < k:
        problems.append(f"{len(valid)} valid citation(s) marked in the text; at least {k} required"
                        if draft.mode == "llm" else f"{len(valid)} valid citation(s); at least {k} required")
    return Verdict(ok=not problems, valid=valid, problems=problems, citations=list(checked.values()))


_ITEM_LINE = re.compile(r"^\s*(?:[-*] |\d+[.)]\s)")  # a Markdown list item


def claims(text: str) -> list[tuple[str, list[int]]]:
    """Each sentence with the markers that cite it: its own, or else those of the first cited sentence after it
    on the same line (a run of sentences quoting one source carries the marker once, after the last). In a list
    item, the rest is cited by the item's markers, and an item with none by the line that introduces the list (or
    the item before it). ``[]`` when nothing cites it."""
    out: list[tuple[str, list[int]]] = []
    above: list[int] = []  # what cites the line before, for the list items that follow it
    for line in text.split("\n"):
        said = sentences(line)
        item = bool(_ITEM_LINE.match(line))
        mine = cited_ids(line) if item else []
        for i, s in enumerate(said):
            own = next((m for m in (cited_ids(t) for t in said[i:]) if m), [])
            out.append((s, own or mine or (above if item else [])))
        last = out[-1][1] if said else []
        above = last if (last or not item) else above
    return out


def strip_unsupported(text: str, valid: Sequence[int]) -> str:
    """Keep only sentences whose every covering marker (``claims``) is a valid citation; uncited sentences are
    dropped."""
    ok = set(valid)
    return " ".join(s for s, marks in claims(text) if marks and all(m in ok for m in marks))
