"""Docstrings in plain words: field lists become sentences, a summary becomes what the definition does.

A docstring's field list (reST ``:param x:``/``:returns:``/``:raises E:``, Google ``Args:``/``Returns:``/
``Raises:`` sections, NumPy ``Parameters`` underlined sections, JSDoc ``@param``/``@returns``/``@throws``) is
never quoted as written: each parameter, return value and exception becomes a sentence ("`key` is the bucket to
take the token from.", "It returns the delay in seconds."), type-only fields (``:rtype:``, ``:type x:``,
``@type``) are left out, and a JSDoc ``@example`` stays in the prose as a fenced code block. ``predicate`` turns
a summary sentence into what follows a definition's name ("Return the tuple…" → "returns the tuple…"). Pure
functions of the text."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from sift import fitted

# Verbs that open docstring summaries in the imperative (PEP 257) or third person, with their third person:
# data derived from the train packages' docstrings by lab/fit/docstring_verbs.py (which says how), shipped as
# the fitted file sift.fitted.DOCSTRING_VERBS. Other first words (nouns such as "Helper", "Metaclass") cannot be
# conjugated safely, so the summary is quoted instead.
# Words that start a verb's object or follow it as a particle ("Return *the*…", "Check *if*…", "Iterate *over*…"),
# and rarely follow a noun: the evidence that a summary's first word is a verb.
OBJECT_WORDS = frozenset(["a", "an", "the", "this", "these", "those", "all", "any", "each", "every", "some", "its",
                          "their", "another", "if", "whether", "over", "up", "out", "until"])
_ARTICLES = ("a", "an", "the")
_WORD = re.compile(r"[A-Za-z]+")


def third_person(verb: str) -> str:
    """The regular third person singular of ``verb``: "return" → "returns", "match" → "matches"."""
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _load_verbs() -> dict[str, str]:
    """The docstring verbs of the data file: each verb and its third person."""
    return {verb: data[0] for verb, data in fitted.load(fitted.DOCSTRING_VERBS)["verbs"].items()}


_VERBS = _load_verbs()
_THIRD = {third: verb for verb, third in _VERBS.items()}


def _participle_of(word: str) -> str | None:
    """The verb of a past participle the list knows ("called" → "call", "stopped" → "stop"), else None."""
    for stem in (word[:-1], word[:-2], word[:-3] if word[-3:-2] == word[-4:-3] else ""):
        if stem in _VERBS:
            return stem
    return None


SUBJECT_WORDS = 6  # how far into "A/An/The …" a sentence's own verb is looked for


def predicate(summary: str) -> str | None:
    """What follows a definition's name when ``summary`` is said of it: "Return X." → "returns X", "Keeps X." →
    "keeps X", "Raised by X." → "is raised by X", "A way to X." → "is a way to X"; None when it cannot be."""
    text = summary.strip().rstrip(".").strip()
    m = _WORD.match(text)
    if not m or not text[:1].isupper() or text[1:m.end()] != text[1:m.end()].lower():
        return None
    word, rest = m.group(0).lower(), text[m.end():]
    if rest.split(" ", 2)[1:2] == ["of"]:  # "List of…", "Set of…": a noun, not an imperative
        return None
    if word in _VERBS:
        return _VERBS[word] + rest
    if word in _THIRD:
        return word + rest
    if word.endswith("ed") and _participle_of(word):
        return "is " + word + rest
    if word in _ARTICLES:
        # "A way to…" is said of the name; "The default store keeps…" is a sentence with its own verb ("A
        # store that keeps…" or "The position where it should…" is not: the verb is the clause's). The subject
        # may run to a few words ("A frozen instance or attribute have been…").
        head = re.split(r"\b(?:that|which|who|whose|where|when)\b", rest, maxsplit=1)[0]
        if any(w in _AUXILIARIES or (_WORD.fullmatch(w) and predicate(w.capitalize() + " x") not in (None, "is x")
                                     and w.endswith("s")) for w in head.split()[:SUBJECT_WORDS]):
            return None
        return "is " + word + rest
    return None


# Verbs that no list conjugates, which make "A token is option-like if…" a sentence of its own.
_AUXILIARIES = frozenset({"is", "are", "was", "were", "has", "have", "had", "can", "cannot", "may", "might", "must",
                          "should", "will", "would", "does"})

# Words that open a description without being its verb (prepositions, conjunctions, adverbs, quantifiers):
# "For the…", "Only the…", "All the…" are not imperatives.
_NOT_VERBS = frozenset("""
about above across after against along also although among and around as at because before behind below beside
besides between beyond both but by despite during either even except for from given in inside instead into just
like near neither nor not now of off on once only onto or other otherwise out outside over past per since so such
than that then there these this those though through thus to toward towards under unless unlike until upon via when
where whether which while with within without yet all any each every some no none many most much several
""".split())  # noqa: SIM905 - a word list reads best as words


def _unlisted_verb(text: str) -> str | None:
    """How ``text`` opens when its first word is a verb the list lacks: "third" ("Controls whether…"), "base"
    ("Spread the delay…"), else None. The evidence is the one that makes the list's verbs verbs: an object word
    follows ("the", "whether", "over"…), and the word is no preposition, conjunction or adverb (``_NOT_VERBS``)."""
    words = text.split(None, 2)
    if len(words) < 2 or not words[0].isalpha() or not words[0][:1].isupper() or not words[0][1:].islower():
        return None
    word = words[0].lower()
    if word in _NOT_VERBS or words[1].lower() not in OBJECT_WORDS or len(word) < 3:
        return None
    if word.endswith("ss") or not word.endswith("s"):  # "Pass the…", "Spread the…"
        return "base"
    return "third" if len(word) > 3 and not word.endswith(("us", "is", "ys")) else None  # not "Always the…"


@dataclass(frozen=True)
class Field:
    """One entry of a field list: ``param`` (with ``name``), ``returns``, ``yields`` or ``raises`` (its ``name``
    the exception), and its description on one line."""

    kind: str
    name: str
    text: str


_REST = re.compile(r"^\s*:(\w+)(?:\s+([^:]*?))?:\s*(.*)$")
_REST_KINDS = {"param": "param", "parameter": "param", "arg": "param", "argument": "param", "key": "param",
               "keyword": "param", "return": "returns", "returns": "returns", "yield": "yields", "yields": "yields",
               "raise": "raises", "raises": "raises", "except": "raises", "exception": "raises", "throws": "raises"}
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
                      r"Attributes|Returns|Return|Yields|Yield|Raises|Throws)\s*:?\s*$")
_SECTION_KINDS = {"returns": "returns", "return": "returns", "yields": "yields", "yield": "yields",
                  "raises": "raises", "throws": "raises"}
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_GOOGLE_ITEM = re.compile(r"^\s*\*{0,2}([A-Za-z_][\w.]*)\s*(?:\(([^)]*)\))?\s*:(?:\s+(.*))?$")
_NUMPY_ITEM = re.compile(r"^\s*\*{0,2}([A-Za-z_][\w.]*)\s*:\s*(.*)$")
_JSDOC = re.compile(r"^\s*@(\w+)\s*(?:\{([^}]*)\})?\s*(.*)$")
_JS_KINDS = {"param": "param", "arg": "param", "argument": "param", "property": "param", "prop": "param",
             "returns": "returns", "return": "returns", "yields": "yields", "throws": "raises", "exception": "raises"}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continued(lines: list[str], i: int, base: int) -> tuple[str, int]:
    """The lines after ``i`` indented deeper than ``base`` (a field's wrapped description), joined; next index."""
    out: list[str] = []
    j = i + 1
    while j < len(lines) and lines[j].strip() and _indent(lines[j]) > base:
        out.append(lines[j].strip())
        j += 1
    return " ".join(out), j


_TAG_LINE = re.compile(r"^\s*@[a-z]+\b")  # a JSDoc tag opens the line: the example before it has ended
_CAPTION = re.compile(r"^\s*<caption>.*?</caption>\s*")


def _example(lines: list[str], i: int, first: str) -> tuple[list[str], int]:
    """A JSDoc ``@example`` on line ``i``: its code (the rest of that line without a ``<caption>``, and the lines up
    to the next tag), dedented, without blank lines at either end; and the index after it."""
    j = i + 1
    while j < len(lines) and not _TAG_LINE.match(lines[j]):
        j += 1
    body = [_CAPTION.sub("", first).rstrip(), *(ln.rstrip() for ln in lines[i + 1:j])]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    cut = min((_indent(ln) for ln in body if ln.strip()), default=0)
    return [ln[cut:] for ln in body], j


MAX_DATA_CHARS = 4000  # a longer docstring is not read as a literal (``is_data``)


def is_data(docstring: str) -> bool:
    """A docstring that is a Python literal container, not prose: some libraries keep data there (a rule's schema
    ``{'type': 'boolean'}``), which no answer should quote as what the definition does."""
    text = docstring.strip()
    if not text.startswith(("{", "[", "(")) or len(text) > MAX_DATA_CHARS:
        return False
    try:
        return isinstance(ast.literal_eval(text), (dict, list, tuple, set))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


_CALL = re.compile(r"[A-Za-z_][\w.]*\(.*\)(?:\s*->\s*[^\s.][^.]*)?")


def _without_signature(lines: list[str]) -> list[str]:
    """The docstring's lines without a first paragraph that is only a call signature, ``add(func, name=None,
    \\ run=False) -> Job``: written for Sphinx (``autodoc_docstring_signature``), it says nothing a reader of the
    definition's own header does not see."""
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    head = " ".join(line.strip().rstrip("\\").strip() for line in lines[start:end])
    return lines[end:] if head and _CALL.fullmatch(head) else lines


def split_fields(docstring: str) -> tuple[str, list[Field]]:
    """The docstring's prose (field lists removed) and its fields, in order."""
    lines = _without_signature(docstring.splitlines())
    prose: list[str] = []
    fields: list[Field] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        rest_m, js_m, sec_m = _REST.match(line), _JSDOC.match(line), _SECTION.match(line)
        if rest_m and rest_m.group(1).lower() not in ("ref", "class", "func", "meth", "attr", "data", "mod"):
            more, i = _continued(lines, i, _indent(line))
            kind = _REST_KINDS.get(rest_m.group(1).lower())
            words = (rest_m.group(2) or "").split()
            if kind:  # ":param int x:" names x; ":raises ValueError:" names the exception
                fields.append(Field(kind, words[-1] if words else "", f"{rest_m.group(3)} {more}".strip()))
            continue
        if js_m and line.lstrip().startswith("@") and js_m.group(1).lower() == "example":
            example, i = _example(lines, i, line.lstrip()[len("@example"):])  # all of it: "{ a: 1 }" is no type
            if example:  # usage as code, which the prose around it introduces: a fenced block of the prose
                fenced = any(ln.lstrip().startswith("```") for ln in example)  # written as one already
                prose.extend(["", *example, ""] if fenced else ["", "```", *example, "```", ""])
            continue
        if js_m and line.lstrip().startswith("@") and not line.lstrip().startswith("@@"):
            more, i = _continued(lines, i, _indent(line))
            tag, body = js_m.group(1).lower(), f"{js_m.group(3)} {more}".strip()
            kind = _JS_KINDS.get(tag)
            if kind == "param":  # "[short=false] - Use the short form" or "seconds - The wait time"
                pm = re.match(r"\[?([\w.$]+)(?:=[^\]]*)?\]?\s*(?:-\s*)?(.*)", body)
                if pm:
                    fields.append(Field("param", pm.group(1), pm.group(2)))
            elif kind == "raises":
                fields.append(Field("raises", js_m.group(2) or "", body.lstrip("- ")))
            elif kind:
                fields.append(Field(kind, "", body.lstrip("- ")))
            continue
        if _BORDER.match(line):
            i = _table(lines, i, prose, fields)
            continue
        underlined = i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1])
        if sec_m and (line.rstrip().endswith(":") or underlined):
            i = _section(lines, i + (2 if underlined else 1), _indent(line), sec_m.group(1).lower(),
                         bool(underlined), fields)
            continue
        prose.append(line)
        i += 1
    return "\n".join(prose), fields


_BORDER = re.compile(r"^\s*=+(?:[ \t]+=+)+\s*$")  # an reStructuredText simple table's border: "====  ====="


def _closed_below(lines: list[str], j: int, border: str) -> bool:
    """A border like ``border`` closes rows from line ``j`` on before a blank line: the border above ``j`` was a
    header's."""
    for line in lines[j:]:
        if not line.strip():
            return False
        if _BORDER.match(line) and _indent(line) == _indent(border):
            return True
    return False


def _table(lines: list[str], i: int, prose: list[str], fields: list[Field]) -> int:
    """Read the reStructuredText simple table whose border is line ``i``: each row of two or more columns as a
    field (a name, then its description: "``daemon``  Set the daemon option…", how docstrings list extra options),
    other rows as prose; a header row (above a second border) is left out. The index after the table."""
    border = lines[i]
    starts = [m.start() for m in re.finditer(r"=+", border)]
    groups: list[list[str]] = [[]]
    j = i + 1
    while j < len(lines):
        if _BORDER.match(lines[j]) and _indent(lines[j]) == _indent(border):
            j += 1
            if len(groups) > 1 or not _closed_below(lines, j, border):
                break  # the closing border (text may follow it without a blank line)
            groups.append([])  # the border under a header row: another closes the rows below it
            continue
        if not lines[j].strip():
            break  # a simple table has no blank rows: it was never closed
        groups[-1].append(lines[j])
        j += 1
    rows: list[list[str]] = []  # [first column, the rest]
    for line in groups[-1]:
        first, rest = line[starts[0]:starts[1]].strip(), line[starts[1]:].strip()
        if first or not rows:
            rows.append([first, rest])
        else:  # a continuation: the first column is blank
            rows[-1][1] = f"{rows[-1][1]} {rest}".strip()
    named = [(first.strip("`*"), rest) for first, rest in rows]
    if named and all(rest and _NAME.fullmatch(name) for name, rest in named):
        fields.extend(Field("param", name, rest) for name, rest in named)
        while prose and not prose[-1].strip():
            prose.pop()
        if prose and prose[-1].rstrip().endswith(":"):
            prose.pop()  # "Extra options:": the fields say them, no sentence is left to introduce
    else:
        for first, rest in rows:
            prose.extend(["", f"{first}: {rest}" if first and rest else first or rest, ""])
    return j


def _section(lines: list[str], i: int, base: int, title: str, numpy: bool, fields: list[Field]) -> int:
    """Read one Google or NumPy section's entries into ``fields``; the index after the section."""
    kind = _SECTION_KINDS.get(title, "param")

    def heading(j: int) -> bool:  # a NumPy heading of any name ("Notes", "Examples") ends the section
        return numpy and j + 1 < len(lines) and bool(lines[j].strip()) and bool(_UNDERLINE.match(lines[j + 1]))

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if i + 1 < len(lines) and lines[i + 1].strip() and (_indent(lines[i + 1]) > base or numpy) \
                    and not _SECTION.match(lines[i + 1]) and not heading(i + 1):
                i += 1
                continue
            return i
        if (not numpy and _indent(line) <= base) or _SECTION.match(line) or heading(i):
            return i
        item = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).match(line)
        more, nxt = _continued(lines, i, _indent(line))
        said = "" if numpy or not item else item.group(3) or ""  # Google: the text after "name (type):"
        if kind == "param" and item:
            fields.append(Field("param", item.group(1), f"{said} {more}".strip()))
        elif kind == "raises":
            name = item.group(1) if item else line.strip()
            if _NAME.fullmatch(name):  # an exception's name, not a line of text the section runs into
                fields.append(Field("raises", name, f"{said} {more}".strip()))
        else:  # returns/yields: "bool: True when…" → the description; NumPy: the indented text under the type
            text = (more or line.strip()) if numpy else f"{said} {more}" if item else f"{line.strip()} {more}"
            fields.append(Field(kind, "", text.strip()))
        i = nxt
    return i


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first.lower() in (*_ARTICLES, "if", "when", "whether", "how", "which", "what"):
        return text[:1].lower() + text[1:]
    return text


def field_sentence(f: Field) -> str:
    """A field as a plain sentence: "`key` is the bucket…", "Set `verbose` to print…", "It returns…"."""
    text = " ".join(f.text.split()).rstrip(".")
    if not text:
        return ""
    if f.kind in ("returns", "yields"):
        return f"It {'returns' if f.kind == 'returns' else 'yields'} {_lower_first(text)}."
    if f.kind == "raises":
        if not f.name:
            return f"It raises an error {_lower_first(text)}."
        return f"It raises `{f.name}` {_lower_first(text)}." if text.split(" ", 1)[0].lower() in ("if", "when") \
            else f"It raises `{f.name}`: {text}."
    if not f.name:
        return ""
    first = text.split(" ", 1)[0]
    if first.lower() in ("if", "when", "whether"):
        return f"For `{f.name}`, {_lower_first(text)}."
    if first.lower() == "set":  # "Set the daemon option…": not "Set `daemon` to set the daemon option…"
        return f"For `{f.name}`, {_lower_word(text)}."
    if first.lower() in _VERBS and first[:1].isupper():  # "Spread the delay…": what setting it does
        return f"Set `{f.name}` to {first.lower()}{text[len(first):]}."
    said = predicate(text)
    if said is not None:
        return f"`{f.name}` {said}."
    verb = _unlisted_verb(text)  # "`x` controls whether…", "Set `x` to spread…"; never "`x` is controls…"
    if verb == "third":
        return f"`{f.name}` {_lower_word(text)}."
    if verb == "base":
        return f"Set `{f.name}` to {_lower_word(text)}."
    clause = text.split(",", 1)[0].split(". ", 1)[0].split()
    if any(w in _FINITE for w in clause[1:]):  # "the default behavior is to…": a sentence of its own
        return f"For `{f.name}`, {_lower_word(text)}."
    return f"`{f.name}` is {_lower_word(text)}."


_FINITE = frozenset(["is", "are", "was", "were", "will", "can", "may", "must", "should", "has", "have", "does"])


def _lower_word(text: str) -> str:
    """``text`` with its first word lower-cased when it is an ordinary capitalised word ("Tokens added…"), not a
    name, a constant or an acronym ("True", "JSON")."""
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and first.isalpha() and first not in ("True", "False", "None"):
        return text[:1].lower() + text[1:]
    return text


def field_rest(f: Field, sentence: str) -> str:
    """A later sentence of a field's description, said of the field: "For `align`, possible values are…" (without
    the field's name, "Possible values are…" of several fields could not be told apart). A field without a name
    (what it returns) keeps the sentence as it is."""
    return f"For `{f.name}`, {_lower_word(sentence)}" if f.name else sentence

