"""An answer that is not confident says so and shows where the answer may be instead.

Its first sentence says the answer is uncertain; then the two or three strongest candidate places follow, one
line each: the place (path:lines and name), cited, what it says (a definition's docstring summary, a section's
sentence nearest the question, or for code without a docstring its line nearest the question (a body of one
line: that line), with the line's number; not for the first place, whose answer follows) and why it may be the one (the
API names it holds on its lines nearest the question, also not for the first place; the question words it shares; the
channels that found it). The answer as written for the first candidate comes last, so one confident claim
is replaced by the places worth reading. Every candidate line carries a real ``[n]`` that the checker verifies
like any other citation. An extractive answer then shows each other candidate in more detail too, as the writer
would answer from it alone: when no place clearly answers, the reader gets what each of the strongest places says,
not only the first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sift.graph.models import Citation, Draft, Evidence, Plan, cited_ids
from sift.graph.writer.abstention import NEAR_IN_MEANING
from sift.graph.writer.closeness import Closeness
from sift.graph.writer.code_quotes import body_lines, key_lines
from sift.graph.writer.composition import answer_sentences, compose
from sift.graph.writer.confidence import places
from sift.graph.writer.doc_quotes import API_NAME, BULLET, doc_sentences, label, summary
from sift.graph.writer.doc_units import CODE
from sift.graph.writer.terms import matched_terms, query_tokens
from sift.models import CODE_KINDS
from sift.text import line_span
from sift.text import shown as escaped
from sift.tokenize import tokenize

UNCERTAIN_OPENING = "This answer is uncertain:"
UNCERTAIN = f"{UNCERTAIN_OPENING} no single place in the sources clearly answers the question."
# An answer the sources' words alone would not give (``abstention.near_in_meaning``) says why it is uncertain.
IN_OTHER_WORDS = (f"{UNCERTAIN_OPENING} the sources do not say it in the question's words, so it rests on the "
                  "place closest to the question in meaning.")
MIN_WORD = 3  # shorter question words ("s" of "class's", "do") say nothing about why a place may be the one
MAX_CANDIDATES = 3
ORDINALS = ("first", "second", "third")  # how the answer names its candidates when it shows them in more detail
MAX_WORDS = 3
MAX_GIST = 160  # characters of what a candidate says: one line, not a quote
MIN_LINE_TERMS = 2  # a code line shown for a candidate shares this many question terms: one is a coincidence
_CHANNEL_WORDS = {"bm25": "keywords", "vector": "meaning", "smart": "name", "docql": "a structure query",
                  "file": "a file read", "module": "its module's listing"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def hedged(text: str, opening: str = UNCERTAIN) -> str:
    """``text`` opened by the sentence that says it is uncertain (once)."""
    return text if text.startswith(UNCERTAIN_OPENING) else f"{opening} {text}".strip()


def shared_words(question: str, e: Evidence, tokens: Sequence[str], idf: Mapping[str, float],
                 limit: int = MAX_WORDS) -> list[str]:
    """The question's words (as asked) whose terms the item contains, rarest first, at most ``limit``."""
    found = set(matched_terms(e, tokens))
    words: dict[str, float] = {}
    for word in _WORD.findall(question):
        terms = [t for t in tokenize(word) if t in found] if len(word) >= MIN_WORD else []
        if terms and word.lower() not in {w.lower() for w in words}:
            words[word] = max(idf.get(t, 1.0) for t in terms)
    return [w for w, _ in sorted(words.items(), key=lambda kv: -kv[1])[:limit]]


def found_by(e: Evidence) -> str:
    """The channels that found an item, in words: "keywords, meaning and name"."""
    names = [_CHANNEL_WORDS.get(c, c) for c in dict.fromkeys(e.channels)]
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def reason(question: str, e: Evidence, tokens: Sequence[str], idf: Mapping[str, float],
           names: Sequence[str] = ()) -> str:
    """One short line on why a place may be the answer: the API ``names`` it holds, the question words it shares,
    the channels that found it."""
    words = shared_words(question, e, tokens, idf)
    parts = ["names " + ", ".join(f"`{n}`" for n in names)] if names else []
    if words:
        parts.append("shares " + ", ".join(f'"{w}"' for w in words) + " with the question")
    by = found_by(e)
    if by:
        parts.append(f"found by {by}")
    return "; ".join(parts) or "ranked next by retrieval"


def gist(e: Evidence, tokens: Sequence[str], near: Closeness | None = None) -> str:
    """What a place says in one sentence: a definition's docstring summary, a section's sentence with the most
    question terms; "" when it has neither (code without a docstring, a section of code examples only)."""
    if e.kind == "doc":
        said = next(iter(doc_sentences(e, tokens, limit=1, near=near, code=False)), "")
    else:
        said = summary(e.docstring)
    said = BULLET.sub("", " ".join(said.split())).strip('"')  # a list item said in quotes, without its bullet
    if len(said) > MAX_GIST:
        said = said[:MAX_GIST - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    elif said.endswith(":"):  # it introduces what the line does not show: "… like this:" reads "… like this…"
        said = said[:-1].rstrip() + "…"
    return said


def key_line(e: Evidence, tokens: Sequence[str], idf: Mapping[str, float] | None = None) -> tuple[int, str] | None:
    """For code, the body line with the most question terms besides the definition's own name (a body of one
    line is the whole behaviour: that line), or None."""
    if e.kind not in CODE_KINDS or e.module_code:
        return None
    body = body_lines(e)
    if len(body) == 1 and len(body[0][1]) <= MAX_GIST:
        return e.start_line + body[0][0], body[0][1]
    found = key_lines(e, tokens, limit=1, own=tokenize(e.symbol.rsplit(".", 1)[-1]), idf=idf)
    if not found or len(found[0][1]) > MAX_GIST or len(set(tokenize(found[0][1])) & set(tokens)) < MIN_LINE_TERMS:
        return None
    return found[0]


MAX_NAMES = 3
_LINK = re.compile(r"\w+://\S+|\S+@\S+")  # a URL or an address: its dots are no API names
_PLAIN = re.compile(r"[a-z]+")
_NAME = re.compile(r"[A-Za-z_][\w.]*[A-Za-z0-9_]")
_LITERALS = frozenset({"True", "False", "None", "true", "false", "null", "undefined", "NaN"})
_ABBREVIATION = re.compile(r"[A-Za-z](?:\.[A-Za-z])+")  # "e.g", "i.e" of a comment: dotted letters, no name


def api_name(name: str) -> bool:
    """``name`` can be an API a reader looks up: a name of three characters or more, not a literal (``None``),
    not an attribute of ``self`` or ``this``, not a dotted abbreviation (``e.g``, ``i.e``)."""
    return bool(_NAME.fullmatch(name)) and len(name) >= 3 and name not in _LITERALS \
        and not name.startswith(("self.", "this.")) and not _ABBREVIATION.fullmatch(name)


def api_names(e: Evidence, tokens: Sequence[str], limit: int = MAX_NAMES) -> list[str]:
    """The identifiers the item's text names (backticked, dotted, snake_case, camelCase or called; in code, not a
    plain lower-case word) on the lines sharing the most question terms (the first seen among equals), that
    neither the question nor the item's own name already says: the API a reader would look up there, at most
    ``limit``."""
    wanted = set(tokens)
    own = set(tokenize(e.symbol.rsplit(".", 1)[-1])[:1])
    code = e.kind in CODE_KINDS  # a plain word in backticks there is a parameter (`key`), not an API to look up
    found: dict[str, tuple[int, int]] = {}  # name → (-most question terms on one of its lines, first line)
    for n, line in enumerate(e.text.splitlines()):
        shared = len(wanted & set(tokenize(line)))
        if not shared:
            continue
        for quoted, bare, called in API_NAME.findall(_LINK.sub(" ", line)):
            name = quoted or bare or called
            whole = tokenize(name.rsplit(".", 1)[-1])[:1]  # a dotted name by its last part: `adapter.send` is send
            if not api_name(name) or not whole or whole[0] in wanted or whole[0] in own \
                    or (code and _PLAIN.fullmatch(name)):
                continue
            found[name] = min(found.get(name, (0, n)), (-shared, n))
    return sorted(found, key=lambda name: found[name])[:limit]


def candidate_line(question: str, e: Evidence, tokens: Sequence[str], idf: Mapping[str, float],
                   what: bool = True, near: Closeness | None = None, apis: bool | None = None) -> str:
    """``- name in path:start-end [n]: "What it says." Names `api`; shares … with the question; found by ….``; code
    without a docstring shows its line nearest the question instead (``[n]: `line` (line 12). Shares …``). With
    ``what`` false, or nothing to say: ``- name in path:start-end [n]: shares …; found by ….`` (``apis``, by
    default ``what``: whether it names the API the place holds)."""
    name, path = label(e), escaped(e.path)
    span = line_span(e.start_line, e.end_line)
    place = f"{path}:{span}" if name == path else f"{name} in {path}:{span}"
    said = gist(e, tokens, near) if what else ""
    line = key_line(e, tokens, idf) if what and not said else None
    shown = said or (line[1] if line else "")
    apis = what if apis is None else apis
    names = [n for n in api_names(e, tokens) if n not in shown] if apis else []  # not what the line already says
    why = reason(question, e, tokens, idf, names)
    if said:
        ends = "" if said.endswith((".", "!", "?", "…")) else "."
        return f'- {place} [{e.id}]: "{said}{ends}" {why[0].upper()}{why[1:]}.'
    if line is not None:
        return f"- {place} [{e.id}]: `{line[1]}` (line {line[0]}). {why[0].upper()}{why[1:]}."
    return f"- {place} [{e.id}]: {why}."


def pick(first: Evidence | None, ranked: Sequence[tuple[float, Evidence]],
         limit: int = MAX_CANDIDATES) -> list[Evidence]:
    """The candidates: the item the answer cites first, then the strongest other places, ``limit`` in all."""
    chosen = [first] if first is not None else []
    for _, e in ranked:
        if len(chosen) >= limit:
            break
        if all((e.path, e.symbol, e.module_code) != (c.path, c.symbol, c.module_code) for c in chosen):
            chosen.append(e)
    return chosen


def with_candidates(draft: Draft, plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float],
                    near: Closeness | None = None) -> Draft:
    """The draft rewritten for an uncertain answer: the uncertain sentence, the candidate places, then the draft
    (a list answer that already cites several places: the uncertain sentence only)."""
    by_id = {e.id: e for e in evidence}
    cited = [i for i in dict.fromkeys([*cited_ids(draft.text), *(c.evidence_id for c in draft.citations)])
             if i in by_id]
    opening = IN_OTHER_WORDS if draft.note == NEAR_IN_MEANING else UNCERTAIN
    if plan.question_type == "list" and len(cited) >= 2:
        # The answer already enumerates several places; other candidates would read as items of the list.
        return draft.model_copy(update={"text": hedged(draft.text, opening)})
    chosen = pick(by_id[cited[0]] if cited else None, places(plan, evidence, idf))
    if not chosen:
        return draft.model_copy(update={"text": hedged(draft.text, opening)})
    tokens = query_tokens(plan, idf)
    more, shown, detailed = details(plan, chosen, evidence, idf, tokens) if draft.mode == "extractive" \
        else ("", [], set())
    # A candidate whose answer follows in more detail (the first, and in an extractive answer most others) gets
    # a line on why it may be the one; the others say in it what they hold too.
    lines = [candidate_line(plan.standalone, e, tokens, idf, what=n > 0 and e.id not in detailed, near=near,
                            apis=n > 0) for n, e in enumerate(chosen)]
    intro = "The strongest candidates:" if len(chosen) > 1 else "The strongest candidate:"
    first = draft.text.rstrip() if more else draft.text  # a paragraph that ends in a code block: one blank line
    text = f"{opening} {intro}\n" + "\n".join(lines) + f"\n\nThe first in more detail: {first}{more}"
    cited_now = [*chosen, *shown]
    have = {c.evidence_id for c in draft.citations}
    extra = [Citation(evidence_id=e.id, path=e.path, start_line=e.start_line, end_line=e.end_line,
                      snippet=e.text[:400]) for e in {e.id: e for e in cited_now}.values() if e.id not in have]
    return draft.model_copy(update={"text": text, "citations": [*draft.citations, *extra]})


def details(plan: Plan, chosen: Sequence[Evidence], evidence: Sequence[Evidence], idf: Mapping[str, float],
            tokens: Sequence[str]) -> tuple[str, list[Evidence], set[int]]:
    """The candidates after the first in more detail, each as the writer answers from it alone (one that an
    answer before only names, "The code does it in `X`", is shown too): the paragraphs to append, the evidence
    they cite, and the ids of the candidates they detail."""
    out: list[str] = []
    shown: list[Evidence] = []
    detailed: set[int] = set()
    ids = {c.id for c in chosen}
    for n, e in enumerate(chosen[1:], start=1):
        sentences, used = answer_sentences(plan, [e], evidence, tokens, idf)
        # A sentence that only points to another candidate ("The code does it in `X`") would say again what that
        # candidate's own paragraph says.
        others = ids - {e.id}
        sentences = [s for s in sentences if s.startswith(CODE) or not _cites_only(s, others)]
        used = [u for u in used if u.id not in others]
        if not sentences or (e.kind == "file" and len(sentences) == 1):
            continue  # a file without lines near the question: its candidate line says all there is
        which = ORDINALS[n] if n < len(ORDINALS) else f"candidate {n + 1}"
        out.append(f"\n\nThe {which} in more detail: {compose(sentences).rstrip()}")
        shown += used
        detailed.add(e.id)
    return "".join(out), shown, detailed


def _cites_only(sentence: str, ids: set[int]) -> bool:
    """The sentence carries markers, all of them among ``ids``."""
    cited = set(cited_ids(sentence))
    return bool(cited) and cited <= ids
