"""The extractive answerer: a deterministic, LLM-free writer that builds answers only from evidence text.

It cites the evidence that best supports the question, not simply the first fused hit: ``support`` adds to
the retrieval score how much of the question an item's text and name share, whether it is the symbol the
question names, and whether its kind suits the question (how-to → docs and public API, "where" → definitions);
a list question enumerates the module named after what it asks for (``parsers.py`` for "which parsers"),
or cites several sibling definitions (or the subclasses of the base class it found).

Every sentence it writes carries the ``[n]`` of the evidence it quotes. For code it gives the definition's
location, signature and the first sentence of its docstring, the body lines that share the question's terms,
and known call sites; for docs it quotes the section's most relevant sentences. When the evidence covers too
little of the question, lacks its rare words, or never mentions a named thing it asks about (JSON Schema, ORM),
it says "not found in the indexed sources" instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sift.graph.excerpts import CODE, doc_lines, doc_sentences, first_sentence, key_lines, members, signature
from sift.graph.state import NOT_FOUND, Citation, Draft, Evidence, Plan
from sift.graph.terms import (
    ASKS_NOTES,
    ASKS_TESTS,
    CEILING_KEY,
    HOW_TO,
    QUALIFIED,
    WHERE,
    coverage,
    has_term,
    joined_compounds,
    list_subject,
    named_identifiers,
    named_words,
    query_tokens,
    stems_match,
    weighted_share,
)
from sift.models import CODE_KINDS
from sift.retrievers.paths import is_notes_path, is_stub_path, is_test_path
from sift.tokenize import tokenize, word_parts

MIN_COVERAGE = 0.3  # below this share of the question's (idf-weighted) terms, evidence does not answer it
CONFIDENT_COVERAGE = 0.45
CITED_COVERAGE = 0.4  # below this, cited evidence missing two rare question words does not answer it
RARE_DF_IDF = 1.7  # idf within this of an absent term's: the term is in at most ~2 chunks
ABSENT_FROM_CORPUS = "absent-from-corpus"  # the not-found note that ends the search
PRIMARY_SHARE = 0.4
W_PRIOR, W_COVER, W_NAME, W_KIND, W_PRIVATE, W_TWIN = 2.0, 1.0, 0.5, 0.15, 0.25, 0.75
LIST_SHARE = 0.7
MAX_LIST_ITEMS = 5
MAX_PARTS = 2  # further retrieved chunks of the cited section or definition
MODULE_CHANNEL = "module"  # marks the evidence the fuse node listed for a list question (from the anchor's module)
MAX_MODULE_ITEMS = 15


def absent_terms(tokens: Sequence[str], idf: Mapping[str, float], evidence: Sequence[Evidence]) -> list[str]:
    """Rare question terms (in almost no chunk of the corpus) that no evidence mentions either."""
    if not idf:
        return []
    ceiling = idf.get(CEILING_KEY, max(idf.values()))
    seen: set[str] = set()
    for e in evidence:
        seen.update(tokenize(f"{e.path} {e.name} {e.text}"))
    return [t for t in tokens if idf.get(t, 0.0) >= ceiling - RARE_DF_IDF and not has_term(seen, t) and len(t) > 2]


def _last_name(e: Evidence) -> str:
    """The last component of the symbol or heading an evidence item is about: ``Schema.Meta`` → ``Meta``."""
    short = e.symbol
    return short.rsplit(" > ", 1)[-1].rsplit(".", 1)[-1]


def support(plan: Plan, e: Evidence, tokens: Sequence[str], idf: Mapping[str, float], top_score: float) -> float:
    """How well one evidence item answers the question, for choosing what to cite (higher is better).

    The fused retrieval score is the prior; on top of it count how much of the question (idf-weighted) the
    item's text and its own name or heading share, whether it *is* a symbol the question names (``Meta`` for
    `class Meta`, ``Token`` in ``auth.py`` for `auth.Token`), and whether its kind suits the question:
    a how-to question wants a documentation section or public API, a "where" question a definition. Tests,
    release notes and type stubs repeat or mention things rather than explain them.
    """
    question = plan.standalone
    score = W_PRIOR * ((e.score / top_score) if top_score > 0 else 0.0)
    score += W_COVER * coverage(e, tokens, idf)
    name_terms = set(tokenize(f"{e.symbol} {_file_stem(e.path)}"))
    for joined, parts in joined_compounds(question).items():
        if joined in name_terms:  # `parse_utc_offset` is named after the question's "utc-offset"
            name_terms.update(parts)
    score += W_NAME * weighted_share(name_terms, tokens, idf)
    last = _last_name(e)
    names = named_identifiers(plan)
    if last and last.lower() in names and len(last) > 2:
        score += 0.5
        stem = _file_stem(e.path).lower()
        owner = e.symbol.rsplit(".", 2)[-2].lower() if "." in e.symbol else ""
        for qual, name in QUALIFIED.findall(question):
            if name.lower() == last.lower() and qual.lower() in (stem, owner):
                score += 0.5  # `auth.Token` is the Token in auth.py, not models.Token
    module = e.path.rsplit(".", 1)[0].removesuffix("/__init__").replace("/", ".").lower()
    for qual, name in QUALIFIED.findall(question):
        if module.endswith(f"{qual}.{name}".lower()):
            score += 0.5  # defined in the module the question names (`pkg.errors`)
            break
    code = e.kind in CODE_KINDS
    if HOW_TO.search(question):
        if e.kind == "doc":
            score += W_KIND
        elif code and re.search(r"(^|\.)_[a-z]", e.symbol):
            score -= W_PRIVATE  # how-to questions are answered by public API, not private helpers
    elif WHERE.search(question) and code:
        score += W_KIND
    if is_test_path(e.path) and not ASKS_TESTS.search(question):
        score -= 0.5
    if is_notes_path(e.path) and not ASKS_NOTES.search(question):
        score -= 0.3
    module_level = e.module_code or (code and e.symbol == e.path.rsplit("/", 1)[-1])
    if is_stub_path(e.path) or module_level:
        score -= 0.3  # a stub repeats a definition; module-level code is imports and settings
    return score


def _twin(e: Evidence, functions: set[str], named: set[str]) -> bool:
    short = e.symbol
    owner, _, leaf = short.rpartition(".")
    return bool(owner) and e.kind in CODE_KINDS and leaf in functions and owner.rsplit(".", 1)[-1].lower() not in named


def rank_evidence(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[tuple[float, Evidence]]:
    """Evidence ordered by ``support`` (ties keep the fused order), with its support score."""
    tokens = query_tokens(plan, idf)
    top = max((e.score for e in evidence), default=0.0)
    scored = [(support(plan, e, tokens, idf, top), i, e) for i, e in enumerate(evidence)]
    # A method named like a module-level function in the evidence (``Config.merge`` beside ``merge``) is
    # usually a thin wrapper or an internal twin; unless the question names its class, the function is the API.
    functions = {e.symbol for e in evidence if e.kind in CODE_KINDS and "." not in e.symbol}
    named = named_identifiers(plan)
    scored = [(s - W_TWIN if _twin(e, functions, named) else s, i, e) for s, i, e in scored]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(s, e) for s, _, e in scored]


def _file_stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _plain_code(e: Evidence) -> bool:
    return e.kind in CODE_KINDS and not is_test_path(e.path) and not is_stub_path(e.path)


def list_anchor(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> Evidence | None:
    """For a list question, the best-supported definition in a module named after what the question asks for
    ("which parsers…" → ``parse.py``, "which error types" → ``errors.py``, but not
    ``output.py`` for "which formats get output"): that module's definitions are the list. None when
    the question names a class (its members are the answer) or no module fits."""
    if plan.question_type != "list" or not evidence:
        return None
    tokens = list_subject(plan.standalone)
    if not tokens:
        return None
    names = named_identifiers(plan)
    code = [e for e in evidence if _plain_code(e)]
    if any(_last_name(e).lower() in names for e in code):
        return None
    ids = {e.id for e in code}
    for _, e in rank_evidence(plan, evidence, idf):
        if e.id in ids and any(stems_match(s, t) for s in tokenize(_file_stem(e.path)) for t in tokens):
            return e
    return None


def module_listing(plan: Plan, anchor: Evidence, evidence: Sequence[Evidence],
                   idf: Mapping[str, float]) -> list[Evidence]:
    """The public top-level definitions of the anchor's module (retrieved or listed by the fuse node), in file
    order. In a long module only those sharing a distinctive question term (found in at most half the
    definitions, and about as rare in the corpus as the rarest such term) are kept: the date fields among all
    fields. At most ``MAX_MODULE_ITEMS`` of the best supported."""
    cands: dict[str, Evidence] = {}
    for e in evidence:
        short = e.symbol
        if e.path != anchor.path or not _plain_code(e) or e.module_code or short.startswith("_"):
            continue
        if MODULE_CHANNEL in e.channels or "." not in short:
            cands.setdefault(short, e)
    items = list(cands.values())
    if len(items) > MAX_MODULE_ITEMS:
        stem = tokenize(_file_stem(anchor.path))
        terms = [t for t in query_tokens(plan, idf) if not any(stems_match(t, s) for s in stem)]
        words = {e.id: set(tokenize(f"{e.name} {e.signature or ''} {first_sentence(e.docstring)}")) for e in items}
        distinctive = {t for t in terms if 0 < sum(t in w for w in words.values()) <= len(items) / 2}
        top = max((idf.get(t, 1.0) for t in distinctive), default=0.0)
        strong = {t for t in distinctive if idf.get(t, 1.0) >= 0.6 * top}  # not a generic word like "type"
        kept = [e for e in items if words[e.id] & strong]
        if len(kept) >= 2:
            items = kept
    if len(items) > MAX_MODULE_ITEMS:
        best = {id(e) for _, e in rank_evidence(plan, items, idf)[:MAX_MODULE_ITEMS]}
        items = [e for e in items if id(e) in best]
    # An abstract base the others derive from is not one of the things listed ("which parsers…").
    items = [e for e in items if not (_abstract(e) and sum(_derives_from(o, e) for o in items) >= 2)]
    return sorted(items, key=lambda e: e.start_line)


_ABSTRACT = re.compile(r"class\s+\w+\s*\([^)]*\b(ABC|ABCMeta|Protocol|Generic)\b|\babstract\b|\bbase class\b", re.I)


def _abstract(e: Evidence) -> bool:
    """A class declared abstract (an ABC or Protocol base) or documented as a base class."""
    return bool(_ABSTRACT.search(f"{signature(e) or e.signature or ''} {first_sentence(e.docstring)}"))


def select_evidence(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float]) -> list[Evidence]:
    """The evidence worth citing: the best-supported item and, for lists, its close siblings (at most 4)."""
    tokens = query_tokens(plan, idf)
    if not evidence:
        return []
    covs = {e.id: coverage(e, tokens, idf) for e in evidence}
    best = max(covs.values())
    if best < MIN_COVERAGE:
        return []
    ranked = [(s, e) for s, e in rank_evidence(plan, evidence, idf)
              if covs[e.id] >= PRIMARY_SHARE * best]
    if not ranked:
        return []
    top_score, primary = ranked[0]
    if plan.question_type != "list":
        # A section or definition split into several chunks is one answer: cite its retrieved parts together.
        parts = [e for _, e in ranked[1:] if e.path == primary.path and _whole_name(e) == _whole_name(primary)]
        return [primary, *parts[:MAX_PARTS]]
    listed = sorted((e for e in evidence if MODULE_CHANNEL in e.channels), key=lambda e: (e.path, e.start_line))
    if not listed:  # not listed by the fuse node: list from what was retrieved
        anchor = list_anchor(plan, evidence, idf)
        listed = module_listing(plan, anchor, evidence, idf) if anchor is not None else []
    if len(listed) >= 2:
        return listed
    derived = [(sc, e) for sc, e in ranked if e is not primary and _derives_from(e, primary)]
    if derived:  # "which parsers are there": the subclasses of the base class are the answer
        return [e for _, e in derived[:MAX_LIST_ITEMS]]
    chosen, names = [primary], {_last_name(primary)}
    for sc, e in ranked[1:]:
        if len(chosen) >= MAX_LIST_ITEMS:
            break
        if sc >= LIST_SHARE * top_score and _siblings(primary, e) and _last_name(e) not in names:
            chosen.append(e)
            names.add(_last_name(e))
    return chosen


def _whole_name(e: Evidence) -> tuple[str, bool]:
    """What the parts of one long section or definition share: their symbol (and whether it is module code)."""
    return e.symbol, e.module_code


def _derives_from(e: Evidence, base: Evidence) -> bool:
    """``e`` is a class whose header names ``base``'s class among its bases (``class JsonParser(Parser)``)."""
    header = signature(e) or (e.signature or "")
    name = _last_name(base)
    return bool(name) and bool(re.match(rf"class\s+\w+\s*\([^)]*\b{re.escape(name)}\b", header))


def _siblings(a: Evidence, b: Evidence) -> bool:
    """Items of one enumeration: doc sections, or code definitions with the same parent (both top level, or
    members of one class)."""
    if a.kind == "doc" or b.kind == "doc":
        return a.kind == b.kind
    if (a.kind in CODE_KINDS) != (b.kind in CODE_KINDS):
        return False
    pa, pb = (x.symbol.rpartition(".")[0] for x in (a, b))
    return pa == pb


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
    names = ", ".join(f"`{_last_name(e)}` [{e.id}]" for e in items)
    out = [f"{items[0].path} defines these {noun}: {names}."]
    for e in items:
        doc = first_sentence(e.docstring)
        if doc:
            out.append(f"`{_last_name(e)}` (lines {e.start_line}-{e.end_line}): {doc.rstrip('.')} [{e.id}].")
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
        defs = [e for e in evidence if id(e) not in cited and e.kind in CODE_KINDS and _last_name(e) == name
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
    if after is not None and after.path == e.path and _whole_name(after) == _whole_name(e):
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


def _spelled_apart(word: str, texts: Sequence[str]) -> bool:
    """A compound word written apart in one of the texts: "GitHub" as "Git Hub", "DataClass" as "data class"."""
    parts = word_parts(word)
    if len(parts) < 2:
        return False
    pattern = re.compile(r"(?<![A-Za-z0-9])" + r"[\s._-]*".join(re.escape(p) for p in parts) + r"(?![A-Za-z0-9])",
                         re.I)
    return any(pattern.search(t) for t in texts)


def _absent(tokens: Sequence[str], idf: Mapping[str, float], evidence: Sequence[Evidence], question: str) -> list[str]:
    """``absent_terms``, less the question's compound words that the evidence writes apart."""
    missing = absent_terms(tokens, idf, evidence)
    if not missing:
        return missing
    texts = [f"{e.name} {e.text}" for e in evidence]
    apart = {tokenize(w)[0] for w in re.findall(r"\w+", question) if tokenize(w) and _spelled_apart(w, texts)}
    return [t for t in missing if t not in apart]


def _unnamed(plan: Plan, chosen: Sequence[Evidence], idf: Mapping[str, float]) -> bool:
    """A rare named thing of the question (in at most ~2 chunks of the corpus) that no chosen item mentions,
    neither as one word nor spelled apart ("GitHub" is mentioned by "Git Hub")."""
    ceiling = idf.get(CEILING_KEY)
    if ceiling is None:
        return False
    rare = [w for w in named_words(plan.standalone)
            if tokenize(w) and idf.get(tokenize(w)[0], 0.0) >= ceiling - RARE_DF_IDF]
    if not rare:
        return False
    texts = [f"{e.path} {e.name} {e.text}" for e in chosen]
    said: set[str] = set()
    for text in texts:
        said.update(tokenize(text))
    return any(not has_term(said, tokenize(w)[0]) and not _spelled_apart(w, texts) for w in rare)


def write_extractive(plan: Plan, evidence: Sequence[Evidence], idf: Mapping[str, float], kb: str = "") -> Draft:
    """Compose a cited answer from the evidence, or an explicit not-found."""
    if not plan.need_retrieval:
        return chit_chat(plan.standalone, kb)
    if not evidence:
        return not_found("no-evidence")
    tokens = query_tokens(plan, idf)
    # Absent words are judged on every question word: an unseen compound ("gRPC") counts as missing unless
    # the evidence writes it apart ("Git Hub" for "GitHub").
    words = query_tokens(plan)
    missing = _absent(words, idf, evidence, plan.standalone)
    chosen = select_evidence(plan, evidence, idf)
    best = max((coverage(e, tokens, idf) for e in evidence), default=0.0)
    if len(missing) >= 2 and best < CONFIDENT_COVERAGE:
        return not_found("absent-terms", evidence)
    if not chosen:
        ceiling = idf.get(CEILING_KEY)
        if ceiling is not None and any(idf.get(t, 0.0) >= ceiling for t in missing):
            # Weak evidence, and a question word that no chunk of the corpus contains: no other retrieval
            # round can supply it.
            return not_found(ABSENT_FROM_CORPUS, evidence)
        return not_found("weak-evidence", evidence)
    listing = len(chosen) > 2 and any(MODULE_CHANNEL in e.channels for e in chosen)
    if not listing and len(_absent(words, idf, chosen, plan.standalone)) >= 2 \
            and max(coverage(e, tokens, idf) for e in chosen) < CITED_COVERAGE:
        # What would be cited lacks two of the question's rare words and covers little of it (the words may
        # occur elsewhere in the evidence, in passing). A module's listing is chosen by its subject instead.
        return not_found("absent-terms", evidence)
    if _unnamed(plan, chosen, idf):
        # The question is about a named thing (a tool, format or product) that the corpus mentions at most in
        # passing and the evidence worth citing not at all: the project does not cover it.
        return not_found("absent-terms", evidence)
    sentences: list[str] = []
    if listing:
        sentences = _listing_sentences(chosen)
    else:
        if len({(e.path, _whole_name(e)) for e in chosen}) == 1:
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
                sentences.append(f"`{_last_name(d)}` is defined in {d.path} at lines {d.start_line}-{d.end_line}"
                                 f"{summary} [{d.id}].")
                chosen = [*chosen, d]
    citations = [Citation(evidence_id=e.id, path=e.path, start_line=e.start_line, end_line=e.end_line,
                          snippet=e.text[:400]) for e in chosen]
    return Draft(text=compose(sentences), citations=citations, mode="extractive")
