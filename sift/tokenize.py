"""Code-aware tokenizer for BM25: identifiers kept whole and split into their parts, prose lightly stemmed.

``AuthService.validateToken`` → ``authservice auth service validatetoken validate token``. A word (a run of
letters, digits and underscores) yields its whole lowercased form with underscores removed — so
``auth_service`` and ``AuthService`` meet on ``authservice`` — followed, when it has more than one part, by
its parts split on underscores, camelCase/PascalCase boundaries and digit runs. Dots, hyphens and other
punctuation separate words, so a dotted name yields each identifier whole plus its parts. Parts and single
words are lowercased, lightly stemmed (plural ``-s``/``-es``/``-ies``, ``-ed``, ``-ing``; see ``stem``) and
English stopwords among them are dropped; whole compound identifiers are never stemmed or dropped. Output is
in order of appearance with duplicates kept, because BM25 counts term frequency.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"\w+")
# ACRONYM before a Capitalised word (HTTPServer → HTTP, Server), Capitalised/lower runs, ACRONYM, digit runs.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# English function words only: code words (self, none, true, return, class, def…) are kept, idf handles them.
_STOPWORD_TEXT = """a an the and or but nor not no of to in on at by for from with without into onto about as is are was
were be been being am it its this that these those there here than then so such very just also too can
could should would will shall may might must do does did done has have had having i me my we our you your
he she his her they them their what which who whom whose when where why how if else all any each some
more most other own same only both either neither until while over under again further once up down out
off"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_VOWELS = frozenset("aeiou")
# Irregular forms the suffix rules get wrong and that are common in software text.
_EXCEPTIONS = {
    "caches": "cache",
    "cached": "cache",
    "caching": "cache",
    "used": "use",
    "using": "use",
    "embed": "embed",
    "focused": "focus",
    "focusing": "focus",
    "series": "series",
}


def word_parts(word: str) -> list[str]:
    """A word's identifier parts as written: ``GitHub`` → ``Git``, ``Hub``; ``HTTPServer`` → ``HTTP``, ``Server``."""
    return [p for piece in word.split("_") if piece for p in (_PART.findall(piece) or [piece])]


def tokenize(text: str) -> list[str]:
    """Split ``text`` into BM25 terms: whole identifiers, their parts, and stemmed prose words."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_expand(word))
    return out


@lru_cache(maxsize=200_000)
def _expand(word: str) -> tuple[str, ...]:
    """Terms for one word; memoised because vocabularies are small compared with token streams."""
    pieces = [p for p in word.split("_") if p]
    if not pieces:
        return ()
    parts: list[str] = []
    for piece in pieces:
        if piece.isascii():
            parts.extend(_PART.findall(piece) or [piece])
        else:
            parts.append(piece)
    if len(parts) == 1:
        term = _normalise(parts[0])
        return (term,) if term else ()
    whole = "".join(pieces).lower()
    terms = [whole]
    for part in parts:
        term = _normalise(part)
        if term:
            terms.append(term)
    return tuple(terms)


def _normalise(part: str) -> str:
    """Lowercase, drop stopwords, stem alphabetic parts; digits pass through."""
    low = part.lower()
    if low in STOPWORDS:
        return ""
    return stem(low) if low.isalpha() else low


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS or (c == "y" and i > 0) for i, c in enumerate(s))


def _measure(s: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``s``."""
    m, prev_vowel = 0, False
    for i, c in enumerate(s):
        vowel = c in _VOWELS or (c == "y" and i > 0 and s[i - 1] not in _VOWELS)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _cvc(s: str) -> bool:
    """Porter's *o: ends consonant-vowel-consonant, the last not w, x or y (hop → hope)."""
    if len(s) < 3:
        return False
    a, b, c = s[-3], s[-2], s[-1]
    return a not in _VOWELS and b in _VOWELS and c not in _VOWELS and c not in "wxy"


def stem(word: str) -> str:
    """Light English stemmer: Porter (1980) step 1a/1b, conservative on words like ``status`` and ``class``.

    Base forms stay as they are (``parse``, ``service``, ``token``), so identifier parts and prose meet:
    ``tokens``→``token``, ``queries``→``query``, ``classes``→``class``, ``matches``→``match``,
    ``parsed``/``parsing``→``parse``, ``embedding``→``embed``. ``-ly`` is not stripped (``apply``,
    ``only``, ``family`` would break). Input must be lowercase.
    """
    if len(word) <= 3:
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    # step 1a: plurals
    if word.endswith("sses") or word.endswith(("ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-3] + ("y" if len(word) > 4 else "ie")
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    # step 1b: -eed, -ed, -ing
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if not _has_vowel(base):
                return word
            return _repair(base)
    return word


def _repair(base: str) -> str:
    """Porter's step 1b clean-up after removing -ed/-ing, extended so common verbs regain their final e.

    validat → validate, embedd → embed, add stays add, pars → parse, resolv → resolve, configur → configure,
    produc → produce, provid → provide; open, return, filter stay as they are.
    """
    m = _measure(base)
    last = base[-1]
    if base.endswith(("at", "bl", "iz")):
        return base + "e"
    if len(base) > 1 and last == base[-2] and last not in _VOWELS and last not in "lsz":
        return base if (m == 1 and last == "d") else base[:-1]
    if last in "vu" or (last == "s" and not base.endswith("ss")):
        return base + "e"
    if base.endswith(("rg", "dg", "uir")) or (base.endswith("ur") and len(base) > 2 and base[-3] not in _VOWELS):
        return base + "e"
    if (last == "c" and m > 1) or (_cvc(base) and (m == 1 or last in "kd")):
        return base + "e"
    return base


_PREFIXES = ("re", "un", "pre", "non", "in", "de", "dis", "over", "sub")


def prefix_variants(token: str) -> tuple[str, ...]:
    """The token without a derivational prefix (``recomput`` → ``comput``, ``unexpect`` → ``expect``), for a
    query word the corpus only has in its plain form. The rest must stay a word of at least four letters."""
    rests = [token[len(p):] for p in _PREFIXES if token.startswith(p) and len(token) - len(p) >= 4]
    # "recomputed" stems to "recomput", "compute" to itself: try the rest with the "e" the suffix took away
    return tuple(v for rest in rests for v in (rest, rest + "e"))
