"""The shape of a question: what its wording says it asks, read once.

``question_shape(text)`` is the one reader of a question's wording. The planner takes its form (``locate``,
``explain``, ``list``, ``doc``, ``chit-chat``) and whether it refers back to an earlier turn; fused search's ranker
takes its ``howto`` and ``where`` forms and the identifiers it names; the writer takes what a list question asks
for, whether it asks if the project has or can do something, and the named things it mentions. The graph reads it
at intake and carries it on the plan (``Plan.shape``), so no later step reads the wording again.

The word lists below are general English question forms (openings, auxiliaries, list nouns and predicates), not
phrases of any one question; ``tests/unit/test_word_lists.py`` fails on a phrase that an eval question holds.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sift.tokenize import tokenize

QuestionForm = Literal["locate", "explain", "list", "doc", "chit-chat"]

_CHIT_CHAT = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|thx|good (morning|afternoon|evening)|who are you|what can you do|"
    r"how are you|bye|goodbye|ok|okay|cool|great)\b[\s!.?,]*(there|so much|a lot|again)?[\s!.?]*$",
    re.IGNORECASE,
)
# A pronoun or an opening that leans on an earlier turn ("and what about…", "where is it…").
_REFERS_BACK = re.compile(
    r"^\s*(and|also|what about|how about|then|so)\b|\b(it|its|this|that|they|them|there|those|these)\b",
    re.IGNORECASE,
)
REFERS_BACK_WORDS = 10  # a longer question stands alone even with a pronoun
_OVERVIEW = re.compile(r"what (does|is) (this|the) (project|library|package|repo\w*|code ?base)|overview|(?:purpose|aim|"
                       r"goal) of (this|the) (project|library)|what is this", re.IGNORECASE)
_LOCATE = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(where|which (file|module|function|class|method))|\b(defined|implemented|located|"
                     r"find\s+(?:the|a|an))\b", re.IGNORECASE)
# A list question asks for several things by its own phrasing: "List…", "What kinds of…", "Show me all…", or
# "which/what <things>" whose own verb is a list predicate ("Which stores are available?", "What options can be
# passed…"), "do/does <subject> <verb>" ("Which hooks does it provide?") or a plural's own verb ("Which formats
# get…"). A list word inside another clause is not one: "What does f do when the file does not exist?" asks what
# f does.
_LIST_OPENING = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:list|enumerate)\b|^\s*(?:which|what)\s+(?:kinds?|types?|"
                           r"sorts?)\s+of\b|^\s*(?:show|give|name|tell)(?:\s+me)?\s+(?:all|every)\b",
                           re.IGNORECASE)
_LIST_THINGS = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:which|what)\s+((?:[\w`.'()-]+\s+){0,5}?)(?:(are|exist|"
                          r"available|supported|defined|provided|offered|shipped|can (?:[\w`.'()-]+\s+){0,4}?be "
                          r"(?:set|passed|used|configured|converted))\b|(?:does|do)\s+((?:[\w`.'()-]+\s+){1,4}?)[a-z]+\b)",
                          re.IGNORECASE)
_PLURAL_SUBJECT = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:which|what)\s+([a-z]+)\s+([a-z]+)\b", re.IGNORECASE)
_NOT_THINGS = frozenset(["do", "does", "did", "is", "was", "were", "be", "been", "has", "have", "had", "can", "could",
                         "should", "would", "will", "may", "might", "must", "happen", "happens", "happened", "when",
                         "if", "where", "while", "unless", "after", "before", "because", "until", "since", "whether",
                         "that", "which", "who", "whose", "what", "how", "why"])
_DOC = re.compile(r"^\s*(how (do|can|should) (i|we|you)|can i|should i|why (does|do|is)|when (does|do|should)|"
                  r"what(?:'s|\s+is|\s+are)\s+the\s+(?:differences?|distinctions?)|is\s+there\s+(?:a|any)\s+way)\b", re.IGNORECASE)
_ASKS_TESTS = re.compile(r"\b(tested|tests?)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The forms fused search's ranker weighs (``ranker.FEATURES``: ``doc_howto``, ``code_where``). A newcomer's "how do
# I …" is usually answered by the docs that show it, a "where is … / which function …" by the definition that does
# it. The mined training questions are statements, so these features are fitted on the written questions only.
_HOWTO = re.compile(r"^\s*(how\s+(do|can|should|would|could)\s+(i|we|you)\b|how\s+to\b|can\s+i\b"
                    r"|is\s+there\s+(?:a|any)\s+way|is\s+it\s+possible)", re.IGNORECASE)
_WHERE = re.compile(r"\bwhere\b|\bwhich\s+(functions?|methods?|class(es)?|modules?|files?)\b", re.IGNORECASE)
# Whether the project has or can do a thing ("Is there…", "Can it…", "Does it…"), not what one of its things is like
# ("Is the output safe…", "Should I still use…").
_YES_NO = re.compile(r"^\W*(is there|are there|can|could|does|do)\b", re.I)

# Backticked text, or a word with its dotted parts: ``identifiers_in`` keeps the parts that look like code.
_IDENT = re.compile(r"`([^`]+)`|\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\b")

# What a list question's subject is not: the verbs and prepositions that end it, and the words that open it.
_AUX = frozenset({
    "does", "do", "did", "are", "is", "was", "were", "can", "could", "should", "will", "would", "may", "might", "must",
    "has", "have", "come", "comes", "exist", "exists", "get", "gets", "ship", "ships", "live", "lives", "there", "in",
    "of", "for", "from", "to", "with", "that", "which",
})
_DETERMINERS = frozenset({"the", "all", "a", "an", "kind", "kinds", "sort", "sorts", "of", "my", "its", "their"})
_NAMED = re.compile(r"(?<=[\w,;:)\]'\"]\s)([A-Z][A-Za-z0-9]*)\b")


class QuestionShape(BaseModel):
    """What a question's wording says it asks (``question_shape``), carried on the plan."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The wording that was read."""
    form: QuestionForm = "explain"
    refers_back: bool = False
    """A short question with a pronoun or an opening that leans on an earlier turn: a follow-up, given one."""
    identifiers: tuple[str, ...] = ()
    """The code identifiers it names (``identifiers_in``)."""
    list_subject: tuple[str, ...] = ()
    """The tokens of what a list opening asks for ("Which error types are…" → error, type)."""
    yes_no: bool = False
    """It asks whether the project has or can do something ("Is there…", "Can it…")."""
    howto: bool = False
    """It asks how to do something ("how do I…", "is it possible…")."""
    where: bool = False
    """It asks where something is ("where…", "which function…")."""
    overview: bool = False
    """It asks what the whole project is."""
    asks_tests: bool = False
    """It asks about tests."""
    named: tuple[str, ...] = ()
    """The capitalised words and acronyms inside its sentences (``named_words``)."""

    @property
    def forms(self) -> frozenset[str]:
        """The forms fused search's ranker weighs: ``howto``, ``where``, both or none."""
        return frozenset(name for name, on in (("howto", self.howto), ("where", self.where)) if on)


def question_shape(text: str) -> QuestionShape:
    """Read ``text`` once: its form, identifiers, list subject, yes/no-ness and the rest of ``QuestionShape``."""
    return QuestionShape(
        text=text, form=question_form(text),
        refers_back=bool(_REFERS_BACK.search(text)) and len(_WORD.findall(text)) <= REFERS_BACK_WORDS,
        identifiers=tuple(identifiers_in(text)), list_subject=tuple(list_subject(text)),
        yes_no=_YES_NO.search(text) is not None, howto=_HOWTO.search(text) is not None,
        where=_WHERE.search(text) is not None, overview=_OVERVIEW.search(text) is not None,
        asks_tests=_ASKS_TESTS.search(text) is not None, named=tuple(named_words(text)),
    )


def question_form(text: str) -> QuestionForm:
    """chit-chat / list / locate / doc by the question's opening and its verbs; any other question ("How does…",
    "What happens…", "Explain…") asks how something works: explain."""
    if _CHIT_CHAT.match(text):
        return "chit-chat"
    if is_list_question(text):
        return "list"
    if _LOCATE.search(text):
        return "locate"
    if _DOC.search(text):
        return "doc"
    return "explain"


def is_list_question(text: str) -> bool:
    """Whether ``text`` asks for a list by its phrasing (see ``_LIST_OPENING`` and ``_LIST_THINGS``)."""
    if _LIST_OPENING.search(text):
        return True
    subject = _PLURAL_SUBJECT.match(text)
    if subject and _plural(subject.group(1).lower()) and subject.group(1).lower() not in _NOT_THINGS \
            and not subject.group(2).lower().endswith("s"):  # "Which formats get…": a plural and its verb
        return True
    m = _LIST_THINGS.search(text)
    if not m:
        return False
    things = m.group(1).lower().split()
    if any(w in _NOT_THINGS for w in things):
        return False
    if m.group(2):  # "which <things> are…"; "what are the…" names its things after the verb
        return True
    # "Which hooks does it provide?" asks for several; "Which exception does it raise…?" for one
    doer = (m.group(3) or "").lower().split()
    return bool(things) and _plural(things[-1]) and not any(w in _NOT_THINGS for w in doer)


def _plural(word: str) -> bool:
    """A plural noun's ending ("formats", "classes"), not "ss", "us" or "is"."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is"))


def identifiers_in(text: str) -> list[str]:
    """Code identifiers a query names: backticked text, dotted names, snake_case and camelCase words."""
    out: list[str] = []
    for m in _IDENT.finditer(text):
        found = m.group(1) or m.group(2)
        for part in re.split(r"[.\s()]+", found):
            if not part:
                continue
            looks_code = m.group(1) or "_" in part or re.search(r"[a-z][A-Z]", part) or re.match(r"[A-Z][a-z]+[A-Z]", part)
            if looks_code and part not in out:
                out.append(part)
    return out


def list_subject(text: str) -> list[str]:
    """The tokens of what a list question asks for: "What parsers does…" → parser, "Which error types
    are…" → error, type; "List the hooks…" → hook. Empty when the question has no such opening."""
    words = re.findall(r"[\w-]+", text.lower())
    if not words or words[0] not in ("which", "what", "list"):
        return []
    subject: list[str] = []
    for w in words[1:]:
        if not subject and w in _DETERMINERS:
            continue
        if w in _AUX or w in _DETERMINERS or len(subject) >= 4:
            break
        subject.append(w)
    return [t for w in subject for t in tokenize(w)]


def named_words(text: str) -> list[str]:
    """The named things a question mentions: capitalised words and acronyms inside a sentence (a protocol, a file
    format, a vendor's product), not code in backticks and not a sentence's first word."""
    prose = re.sub(r"`[^`]*`", " x ", text)
    return [w for w in _NAMED.findall(prose) if w != "I"]
