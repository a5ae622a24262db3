"""Pure text pieces of the train-set generator: first sentences, name masking, test names, the junk filter.

A train query is a sentence the project's own authors wrote about a definition or a section (a docstring's
summary, a section's opening sentence, a test's name). Masking removes the target's own name from it, so the
pair teaches what the target *does*, not that its name appears in the query; words are compared the way the
keyword channel compares them (identifier parts, lowercased, lightly stemmed; ``sift.tokenize``),
so no masked word can still match the target's name there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sift.ingest.parsers.rst import strip_inline
from sift.tokenize import STOPWORDS, stem, word_parts

MIN_WORDS = 4
MIN_CONTENT_WORDS = 3  # words that are not stopwords: "And here are all the" says nothing once masked
MAX_WORDS = 50

_WORD = re.compile(r"\w+")
_ALPHA = re.compile(r"[^\W\d_]")
_LETTERS = re.compile(r"[^\W\d_]+")
_TEST_LEAD = re.compile(
    r"^(?:tests?|testing|ensures?|checks?|asserts?|verif(?:y|ies)|make sure|confirms?)\b"
    r"(?:\s+(?:that|whether|if))?\s*",
    re.IGNORECASE,
)
_DIGIT_WORD = re.compile(r"[a-z]+\d+[a-z0-9]*")
# A sentence ends at . ! or ? followed by whitespace and then something that is not a lower-case letter.
_SENTENCE_END = re.compile(r"[.!?](?=\s+[^\s\w]*[^\W\d_a-z]|\s+[\d\"'`(]|\s*$)")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "ca", "no", "mr", "dr", "st", "incl"})
_JSDOC_TAG = re.compile(r"^\s*@\w+")
_JSDOC_LINK = re.compile(r"\{@(?:link|linkcode|linkplain)\s+([^}|\s]+)(?:[\s|]+([^}]*))?\}")
_JSDOC_INLINE = re.compile(r"\{@\w+\s*([^{}]*)\}?")

# Summaries that say nothing a reader would ask about: Python's inherited boilerplate, section labels of
# structured docstrings, tool pragmas, and licence banners.
_JUNK = re.compile(
    r"^(?:initiali[sz]e self|return (?:str|repr|hash|bool|len)\(self\)|implement(?:s)? (?:self|iter|next)"
    r"|see help\(|(?:todo|fixme|xxx|hack)\b|deprecated\b|(?:alias|shortcut|shorthand) (?:for|of)\b"
    r"|same as\b|(?:overrides?|overridden)\b|(?:see|refer to)\b|docstring\b"
    r"|(?:module|package) (?:dependencies|exports)\b"
    r"|(?:args|arguments|parameters|params|returns?|raises|yields|examples?|notes?|usage|attributes|type)\s*:"
    r"|:(?:param|type|return|rtype|raises)\b|>>>|\.\. |@|!|\$ |=)"
    r"|\b(?:copyright|licen[cs]ed?|all rights reserved|eslint|istanbul|jshint|noqa|pragma|type: ?ignore"
    r"|ts-(?:ignore|expect-error)|prettier-ignore|spdx|definitions by)\b",
    re.IGNORECASE,
)
_SIGNATURE = re.compile(r"^[\w.]+\(.*\)(?:\s*->.*)?$")
# A word of prose, possibly in brackets or quotes and followed by punctuation; tokens that are not (grammar
# rules, code, operators, URLs) may make up at most 40% of a summary.
_PROSE_TOKEN = re.compile(r"^[(\"'`]*[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*[)\"'`.,;:!?]*$")
MIN_PROSE = 0.6
_URL = re.compile(r"\bhttps?://")


def first_paragraph(text: str) -> str:
    """The text up to the first blank line, whitespace collapsed."""
    lines: list[str] = []
    for line in text.strip().split("\n"):
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(" ".join(lines).split())


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (whitespace collapsed): up to the first ``.``, ``!`` or ``?`` that is
    followed by a space and not a lower-case word, and does not end an abbreviation such as ``e.g.``."""
    text = " ".join(text.split())
    for m in _SENTENCE_END.finditer(text):
        before = text[: m.start()].rsplit(" ", 1)[-1].lower().lstrip("(")
        if before in _ABBREVIATIONS or (len(before) == 1 and before.isalpha()):
            continue
        return text[: m.end()].strip()
    return text


def docstring_summary(doc: str) -> str:
    """The first sentence of a docstring or doc comment, with rST/Markdown inline markup and JSDoc tags and
    ``{@link}`` braces removed."""
    lines = []
    for line in doc.strip().split("\n"):
        if _JSDOC_TAG.match(line):
            break
        lines.append(line)
    text = _JSDOC_LINK.sub(lambda m: m.group(2) or m.group(1), "\n".join(lines))
    text = _JSDOC_INLINE.sub(lambda m: m.group(1), text)
    return first_sentence(strip_inline(first_paragraph(text)))


def name_words(name: str) -> list[str]:
    """An identifier's words, lowercased: ``HookCaller.call_historic`` → ``hook caller call historic``."""
    return [part.lower() for word in _WORD.findall(name) for part in word_parts(word)]


def _key(word: str) -> str:
    """A word as the keyword channel compares it: lowercased and, when alphabetic, stemmed."""
    low = word.lower()
    return stem(low) if low.isalpha() else low


def mask_keys(names: Iterable[str]) -> frozenset[str]:
    """The comparison keys of every non-stopword word of ``names`` (identifiers or heading text)."""
    return frozenset(_key(w) for name in names for w in name_words(name) if w not in STOPWORDS)


def mask(query: str, keys: frozenset[str]) -> str:
    """``query`` without every whitespace-separated token that has a word part in ``keys`` (so ``parse_args()``
    goes with ``parse``), and without punctuation left dangling at either end."""
    kept = []
    for token in query.split():
        parts = [p for word in _WORD.findall(token) for p in word_parts(word)]
        if not any(_key(p) in keys for p in parts):
            kept.append(token)
    return " ".join(kept).strip(" ,;:-–—")


def words_from_test_name(name: str) -> str | None:
    """A test function's name as words without the ``test`` prefix: ``test_parse_empty`` → ``parse empty``;
    None when the name is not a test's (no leading ``test`` word). Numbering (``test_02_…``) is dropped, while
    lower-case words with digits inside (``i18n``, ``utf8``, ``http2``) stay whole."""
    words: list[str] = []
    for piece in name.split("_"):
        if _DIGIT_WORD.fullmatch(piece):
            words.append(piece)
        else:
            words.extend(p.lower() for p in word_parts(piece) if not p.isdigit())
    if not words or words[0] != "test":
        return None
    return " ".join(words[1:])


def word_count(text: str) -> int:
    """Tokens that hold at least one letter."""
    return sum(1 for token in text.split() if _ALPHA.search(token))


def content_word_count(text: str) -> int:
    """Words (runs of letters) that are not English stopwords."""
    return sum(1 for word in _LETTERS.findall(text) if word.lower() not in STOPWORDS)


def strip_test_lead(text: str) -> str:
    """A test docstring without its lead-in: ``Test that parsing fails`` → ``parsing fails``."""
    return _TEST_LEAD.sub("", text, count=1)


def is_junk(text: str) -> bool:
    """Whether a summary is boilerplate, a structured-docstring label, a pragma, a licence line, a signature,
    a link list or mostly code rather than a sentence about what the code or section does."""
    tokens = text.split()
    if not tokens or _JUNK.search(text) or _SIGNATURE.match(text.strip()) or len(_URL.findall(text)) > 1:
        return True
    return sum(1 for t in tokens if _PROSE_TOKEN.match(t)) < MIN_PROSE * len(tokens)


def query_from(summary: str, keys: frozenset[str]) -> str | None:
    """The train query for ``summary`` with ``keys`` masked, or None when it is junk, shorter than
    ``MIN_WORDS`` words (or ``MIN_CONTENT_WORDS`` non-stopwords) after masking, or longer than ``MAX_WORDS``."""
    if is_junk(summary):
        return None
    query = mask(summary.rstrip(":"), keys).rstrip(":").strip()
    n = word_count(query)
    return query if MIN_WORDS <= n <= MAX_WORDS and content_word_count(query) >= MIN_CONTENT_WORDS else None
