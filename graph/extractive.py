"""The extractive answerer: a deterministic, LLM-free writer that builds answers only from evidence text.

Every sentence it writes carries the ``[n]`` of the evidence it quotes. For code it gives the definition's
location, signature and the first sentence of its docstring, the body lines that share the question's terms,
and known call sites; for docs it quotes the section's most relevant sentences. When no evidence covers the
question's distinctive terms it says "not found in the indexed sources" instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from graph.state import NOT_FOUND, Citation, Draft, Evidence, Plan
from retrievers.tokenize import tokenize

CODE_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait"})
MIN_COVERAGE = 0.3  # below this share of the question's (idf-weighted) terms, evidence does not answer it
CONFIDENT_COVERAGE = 0.45
RARE_DF_IDF = 1.7  # idf within this of an absent term's: the term is in at most ~2 chunks
CEILING_KEY = "\x00absent"  # term_idf stores the idf of a term no chunk contains under this key
PRIMARY_SHARE = 0.4
LIST_SHARE = 0.8
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_NAMES_API = re.compile(r"`[^`]+`|\b\w+\(|\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\b")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_MARKUP = re.compile(r"^\s*(#+\s*|[=\-~^*]{3,}\s*$|```|\.\. |:::|\(.*\)=$)")


def query_tokens(plan: Plan) -> list[str]:
    """The stemmed, stopword-free terms of the (standalone) question plus its identifiers, unique."""
    toks = tokenize(plan.standalone or " ".join(plan.key_terms))
    for ident in plan.identifiers:
        toks.extend(tokenize(ident))
    return list(dict.fromkeys(toks))


def coverage(evidence: Evidence, tokens: Sequence[str], idf: Mapping[str, float]) -> float:
    """idf-weighted share of the question's terms found in the evidence's path, name and text (0..1)."""
    if not tokens:
        return 0.0
    present = set(tokenize(f"{evidence.path} {evidence.name} {evidence.signature or ''} {evidence.text}"))
    weights = {t: idf.get(t, 1.0) for t in tokens}
    total = sum(weights.values()) or 1.0
    return sum(w for t, w in weights.items() if t in present) / total


def absent_terms(tokens: Sequence[str], idf: Mapping[str, float], evidence: Sequence[Evidence]) -> list[str]:
    """Rare question terms (in almost no chunk of the corpus) that no evidence mentions either."""
    if not idf:
        return []
    ceiling = idf.get(CEILING_KEY, max(idf.values()))
    seen: set[str] = set()
    for e in evidence:
        seen.update(tokenize(f"{e.path} {e.name} {e.text}"))
    return [t for t in tokens if idf.get(t, 0.0) >= ceiling - RARE_DF_IDF and t not in seen and len(t) > 2]


def select_evidence(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[Evidence]:
    """The evidence worth citing: the best-covered top item and near-equals, at most 2 (4 for lists)."""
    tokens = query_tokens(plan)
    if not evidence:
        return []
    covs = [coverage(e, tokens, idf) for e in evidence]
    best = max(covs)
    if best < MIN_COVERAGE:
        return []
    # The fused ranking decides; coverage only vetoes items that share too little of the question.
    primary = next(i for i, c in enumerate(covs) if c >= max(MIN_COVERAGE, PRIMARY_SHARE * best))
    chosen = [evidence[primary]]
    if plan.question_type == "list":
        for i in range(primary + 1, min(len(evidence), primary + 6)):
            if covs[i] >= LIST_SHARE * covs[primary] and len(chosen) < 4:
                chosen.append(evidence[i])
    else:
        for i in range(primary + 1, min(len(evidence), primary + 2)):
            if covs[i] >= covs[primary] and evidence[i].kind != evidence[primary].kind \
                    and evidence[i].score >= 0.7 * evidence[primary].score:
                chosen.append(evidence[i])  # a doc section beside the code it explains, or vice versa
                break
    return chosen


_ROLE = re.compile(r"(?::[\w:+-]+:|\{[\w:+-]+\})`+([^`<]*?)(?:\s*<[^>`]*>)?`+")


def plain(text: str) -> str:
    """Prose without reST/MyST roles and backticks: quoted text must not pose as checked code identifiers."""
    return _ROLE.sub(r"\1", text).replace("`", "")


def first_sentence(text: str | None) -> str:
    """The first sentence of a docstring or paragraph, on one line."""
    if not text:
        return ""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    flat = " ".join(para.split())
    parts = _SENTENCE.split(flat, maxsplit=1)
    return plain(parts[0].strip())


def key_lines(evidence: Evidence, tokens: Sequence[str], limit: int = 3) -> list[tuple[int, str]]:
    """Body lines sharing the most question terms (not the def line or docstring), in file order."""
    wanted = set(tokens)
    scored = []
    in_doc = False
    for offset, line in enumerate(evidence.text.splitlines()):
        stripped = line.strip()
        if stripped.startswith(('"""', "'''")):
            in_doc = not (stripped.count('"""') + stripped.count("'''") >= 2) and not in_doc
            continue
        if in_doc or not stripped or stripped.startswith(("#", "def ", "class ", "async def ", "@")):
            continue
        if len(stripped) > 160:
            continue
        overlap = len(wanted & set(tokenize(stripped)))
        if overlap:
            scored.append((overlap, offset, stripped))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return sorted(((evidence.start_line + off, text) for _, off, text in scored[:limit]), key=lambda t: t[0])


def _units(text: str) -> list[str]:
    """Sentences of prose paragraphs; each list item is a unit of its own (markup lines dropped)."""
    units: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            units.extend(s.strip() for s in _SENTENCE.split(" ".join(" ".join(para).split())))
            para.clear()

    for line in text.splitlines():
        if _MARKUP.match(line) or not line.strip():
            flush()
        elif _ITEM.match(line):
            flush()
            para.append(line.strip())
        else:
            para.append(line.strip())
    flush()
    return [u for u in units if len(u) > 15]


def doc_sentences(evidence: Evidence, tokens: Sequence[str], limit: int = 5) -> list[str]:
    """The section's sentences (and list items) with the most question terms, in reading order."""
    sentences = _units(evidence.text)
    wanted = set(tokens)
    # A sentence that names an API (backticks, a call, a dotted or snake_case name) usually holds the answer.
    scored = [(len(wanted & set(tokenize(s))) + (1 if _NAMES_API.search(s) else 0), i, s)
              for i, s in enumerate(sentences)]
    scored = [t for t in scored if t[0] > 0] or scored[:1]
    top = sorted(sorted(scored, key=lambda t: (-t[0], t[1]))[:limit], key=lambda t: t[1])
    return [plain(s if len(s) <= 400 else s[:397].rstrip() + "…") for _, _, s in top]


def _short_name(e: Evidence) -> str:
    return e.name.split(" (", 1)[0]


def _signature(e: Evidence) -> str:
    """The definition's header as written (joined when it spans lines), at most 300 characters."""
    lines = e.text.splitlines()
    head: list[str] = []
    for line in lines[:12]:
        stripped = line.strip()
        if not head and (stripped.startswith("@") or not stripped):
            continue
        head.append(stripped)
        if stripped.endswith((":", "{")) or len(head) > 10:
            break
    sig = " ".join(head).rstrip(":{ ")
    return sig if sig and "`" not in sig and len(sig) <= 300 else ""


def _doc_lines(docstring: str | None, tokens: Sequence[str], first: str, limit: int = 3) -> list[str]:
    """Docstring lines (beyond the first sentence) that mention the question's terms."""
    if not docstring:
        return []
    wanted = set(tokens)
    out = []
    for line in docstring.splitlines():
        text = plain(line.strip())
        if len(text) < 12 or text in first or not (wanted & set(tokenize(text))):
            continue
        out.append(text if text.endswith((".", ":")) else text + ".")
        if len(out) >= limit:
            break
    return out


def _code_sentences(e: Evidence, plan: Plan, tokens: Sequence[str]) -> list[str]:
    n, name = e.id, _short_name(e)
    simple = name.rsplit(".", 1)[-1]
    label = f"`{simple}`" if simple and simple in e.text else name
    out = [f"{label} ({e.kind}) is defined in {e.path} at lines {e.start_line}-{e.end_line} [{n}]."]
    sig = _signature(e)
    if sig:
        out.append(f"Its signature is `{sig}` [{n}].")
    doc = first_sentence(e.docstring)
    if doc:
        out.append(f"{doc.rstrip('.')}. [{n}]")
    for line in _doc_lines(e.docstring, tokens, doc):
        out.append(f"{line} [{n}]")
    lines = key_lines(e, tokens, limit=2 if plan.question_type == "locate" else 4)
    if lines:
        shown = "; ".join(f"line {ln}: `{text}`" for ln, text in lines if "`" not in text)
        if shown:
            out.append(f"Relevant lines: {shown} [{n}].")
    if e.callers:
        sites = ", ".join(f"{c['path']}:{c['line']}" + (f" (in {c['caller']})" if c.get("caller") else "")
                          for c in e.callers[:3])
        out.append(f"It is called from {sites} [{n}].")
    return out


def _doc_sentences(e: Evidence, tokens: Sequence[str]) -> list[str]:
    where = f"{e.path} (lines {e.start_line}-{e.end_line})"
    section = _short_name(e).split(" > ")[-1] if e.kind == "doc" else ""
    intro = f'The section "{section}" of {where} says' if section and section != e.path else f"{where} says"
    quoted = doc_sentences(e, tokens)
    if not quoted:
        return [f"{intro} nothing quotable [{e.id}]."]
    return [f"{intro}: {quoted[0]} [{e.id}]", *(f"{s} [{e.id}]" for s in quoted[1:])]


def _file_sentences(e: Evidence, tokens: Sequence[str]) -> list[str]:
    lines = key_lines(e, tokens, limit=3)
    head = f"{e.path} (lines {e.start_line}-{e.end_line}) is the relevant file [{e.id}]."
    if not lines:
        return [head]
    shown = "; ".join(f"line {ln}: `{text}`" for ln, text in lines if "`" not in text)
    return [head, f"Relevant lines: {shown} [{e.id}]."] if shown else [head]


def chit_chat(question: str, kb: str) -> Draft:
    """The reply to a greeting or thanks: no retrieval, no citations."""
    return Draft(text=f"Hello! Ask me about the code or documentation in knowledge base {kb!r}; every answer "
                      "cites the exact files and lines it comes from.", mode="extractive")


def not_found(reason: str, evidence: Sequence[Evidence] = ()) -> Draft:
    """The honest answer when the evidence does not support one."""
    text = NOT_FOUND
    if evidence:
        near = ", ".join(f"{e.path}:{e.start_line}" for e in evidence[:3])
        text += f" The closest matches ({near}) do not cover the question."
    return Draft(text=text, mode="extractive", not_found=True, note=reason)


def write_extractive(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float], kb: str = "") -> Draft:
    """Compose a cited answer from the evidence, or an explicit not-found."""
    if not plan.need_retrieval:
        return chit_chat(plan.standalone, kb)
    if not evidence:
        return not_found("no-evidence")
    tokens = query_tokens(plan)
    missing = absent_terms(tokens, idf, evidence)
    chosen = select_evidence(plan, evidence, idf)
    best = max((coverage(e, tokens, idf) for e in evidence), default=0.0)
    if len(missing) >= 2 and best < CONFIDENT_COVERAGE:
        return not_found("absent-terms", evidence)
    if not chosen:
        return not_found("weak-evidence", evidence)
    sentences: list[str] = []
    for e in chosen:
        if e.kind in CODE_KINDS:
            sentences.extend(_code_sentences(e, plan, tokens))
        elif e.kind == "file":
            sentences.extend(_file_sentences(e, tokens))
        else:
            sentences.extend(_doc_sentences(e, tokens))
    citations = [Citation(evidence_id=e.id, path=e.path, start_line=e.start_line, end_line=e.end_line,
                          snippet=e.text[:400]) for e in chosen]
    return Draft(text=" ".join(sentences), citations=citations, mode="extractive")
