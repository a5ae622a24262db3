"""Deterministic planning rules: question type, identifiers, key terms, domain, index level, DocQL, sub-queries.

``plan_question`` is what the planner node uses without an LLM; the LLM planner produces the same ``Plan`` and
falls back to this on failure. Pure functions only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sift.graph.models import IndexType, Intent, Plan, QuestionType
from sift.retrievers.search import identifiers_in
from sift.tokenize import STOPWORDS

_CHIT_CHAT = re.compile(
    r"^\s*(hi|hello|hey|thanks|thank you|thx|good (morning|afternoon|evening)|who are you|what can you do|"
    r"how are you|bye|goodbye|ok|okay|cool|great)\b[\s!.?,]*(there|so much|a lot|again)?[\s!.?]*$",
    re.IGNORECASE,
)
_FOLLOW_UP = re.compile(
    r"^\s*(and|also|what about|how about|then|so)\b|\b(it|its|this|that|they|them|there|those|these)\b",
    re.IGNORECASE,
)
_OVERVIEW = re.compile(r"what (does|is) (this|the) (project|library|package|repo\w*|code ?base)|overview|purpose "
                       r"of (this|the) (project|library)|what is this", re.IGNORECASE)
_LOCATE = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(where|which (file|module|function|class|method))|\b(defined|implemented|located|"
                     r"find the|source code of)\b", re.IGNORECASE)
# A list question asks for several things by its own phrasing: "List…", "What kinds of…", "Show me all…", or
# "which/what <things>" whose own verb is a list predicate ("Which stores are available?", "What options can be
# passed…"), "do/does <subject> <verb>" ("Which hooks does it provide?") or a plural's own verb ("Which formats
# get…"). A list word inside another clause is not one: "What does f do when the file does not exist?" asks what
# f does.
_LIST_OPENING = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:list|enumerate)\b|^\s*(?:which|what)\s+(?:kinds?|types?|"
                           r"sorts?)\s+of\b|^\s*(?:show|give|name|tell)(?:\s+me)?\s+(?:all|every)\b",
                           re.IGNORECASE)
_LIST_THINGS = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:which|what)\s+((?:[\w`.'()-]+\s+){0,5}?)(?:(are|exist|"
                          r"come with|available|supported|defined in|provided|offered|shipped|out of the box|can (?:[\w`.'()-]+\s+){0,4}?be "
                          r"(?:set|passed|used|configured|converted))\b|(?:does|do)\s+((?:[\w`.'()-]+\s+){1,4}?)[a-z]+\b)",
                          re.IGNORECASE)
_PLURAL_SUBJECT = re.compile(r"^\s*(?:(?:and|so|also)\s+)?(?:which|what)\s+([a-z]+)\s+([a-z]+)\b", re.IGNORECASE)
_NOT_THINGS = frozenset(["do", "does", "did", "is", "was", "were", "be", "been", "has", "have", "had", "can", "could",
                         "should", "would", "will", "may", "might", "must", "happen", "happens", "happened", "when",
                         "if", "where", "while", "unless", "after", "before", "because", "until", "since", "whether",
                         "that", "which", "who", "whose", "what", "how", "why"])
_DOC = re.compile(r"^\s*(how (do|can|should) (i|we|you)|can i|should i|why (does|do|is)|when (does|do|should)|"
                  r"what is the difference|is there a way)\b", re.IGNORECASE)
_EXPLAIN = re.compile(r"^\s*(how (does|is|are)|what happens|explain|in what order)\b", re.IGNORECASE)
_SECTION = re.compile(r"(?:section|chapter|heading|page)\s+[\"“']([^\"”']+)[\"”']|[\"“']([^\"”']+)[\"”']\s+"
                      r"(?:section|chapter|heading|page)", re.IGNORECASE)
_SPLIT = re.compile(r"\?\s+(?=\S)|;\s+|,\s+and\s+(?=(?:where|how|what|which|why|when)\b)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUESTION_WORDS = frozenset(["make", "makes", "made", "get", "gets", "use", "uses", "used", "way", "ways", "thing", "things", "need", "want", "like", "work", "works", "working", "happen", "happens", "one", "ones", "instead", "example", "e", "g", "etc"])


def question_type(question: str, has_history: bool) -> QuestionType:
    """locate / explain / list / doc / follow-up / chit-chat, by the question's opening and its verbs."""
    if _CHIT_CHAT.match(question):
        return "chit-chat"
    if has_history and _FOLLOW_UP.search(question) and len(_WORD.findall(question)) <= 10:
        return "follow-up"
    if is_list_question(question):
        return "list"
    if _LOCATE.search(question):
        return "locate"
    if _EXPLAIN.search(question):
        return "explain"
    if _DOC.search(question):
        return "doc"
    return "explain"


def is_list_question(question: str) -> bool:
    """Whether ``question`` asks for a list by its phrasing (see ``_LIST_OPENING`` and ``_LIST_THINGS``)."""
    if _LIST_OPENING.search(question):
        return True
    subject = _PLURAL_SUBJECT.match(question)
    if subject and _plural(subject.group(1).lower()) and subject.group(1).lower() not in _NOT_THINGS \
            and not subject.group(2).lower().endswith("s"):  # "Which formats get…": a plural and its verb
        return True
    m = _LIST_THINGS.search(question)
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


def key_terms(question: str) -> list[str]:
    """Content words of the question in order (stopwords and question filler removed), lower-cased."""
    out: list[str] = []
    for w in _WORD.findall(question):
        low = w.lower()
        if low in STOPWORDS or low in _QUESTION_WORDS or len(low) < 2:
            continue
        if low not in out:
            out.append(low)
    return out


def split_question(question: str) -> list[str]:
    """Parts of a multi-part question (at least two words each); a single question gives itself."""
    parts = [p.strip(" ?") for p in _SPLIT.split(question) if p and p.strip(" ?")]
    parts = [p for p in parts if len(_WORD.findall(p)) >= 3]
    return parts if len(parts) > 1 else [question.strip()]


def rewrite_follow_up(question: str, history: Sequence[dict[str, Any]]) -> str:
    """Resolve a follow-up against the previous turn: its subject replaces the pronoun (or is appended)."""
    if not history:
        return question
    last = history[-1]
    subject = last.get("subject") or ""
    if not subject:
        ids = identifiers_in(last.get("question", ""))
        subject = ids[0] if ids else " ".join(key_terms(last.get("question", ""))[:4])
    if not subject:
        return question
    body = re.sub(r"^\s*(and|also|so|then)\b[\s,]*", "", question, flags=re.IGNORECASE)
    body = re.sub(r"^\s*(what|how) about\b", "what about", body, flags=re.IGNORECASE)
    replaced, n = re.subn(r"\b(it|this|that|them|they)\b", subject, body, count=1, flags=re.IGNORECASE)
    return replaced if n else f"{body.rstrip(' ?')} {subject}?"


def docql_queries(identifiers: Sequence[str], question: str) -> list[str]:
    """DocQL for named symbols and quoted sections: class/function lookups and heading lookups."""
    out: list[str] = []
    for ident in identifiers[:3]:
        name = ident.strip("`()@")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        out.append(f'$.code.query("{name}")')
    for m in _SECTION.finditer(question):
        title = (m.group(1) or m.group(2) or "").strip()
        if title and '"' not in title:
            out.append(f'$.content.heading("{title}")')
    return out


def plan_question(
    question: str, kb: str, history: Sequence[dict[str, Any]] = (), *, llm: bool = False
) -> Plan:
    """The rule-based plan for ``question`` against knowledge base ``kb``."""
    qtype = question_type(question, bool(history))
    if qtype == "chit-chat":
        return Plan(question_type="chit-chat", need_retrieval=False, standalone=question, channels=[],
                    k_citations=0, budget_ms=200)
    standalone = rewrite_follow_up(question, history) if qtype == "follow-up" else question
    base_type = question_type(standalone, False) if qtype == "follow-up" else qtype
    idents = identifiers_in(standalone)
    intent: Intent = "both"
    if base_type == "doc":
        intent = "doc"
    elif base_type == "locate" and idents:
        intent = "code"
    if re.search(r"\b(tested|tests?|test suite)\b", standalone, re.IGNORECASE):
        intent = "code"
    index_type: IndexType = "all"
    if _OVERVIEW.search(standalone):
        index_type = "file"
    elif base_type in ("locate", "explain") and idents:
        index_type = "function"
    subqueries = split_question(standalone)
    if len(subqueries) > 1:
        subqueries = [standalone, *subqueries]
    return Plan(
        question_type=qtype,
        standalone=standalone, identifiers=idents, key_terms=key_terms(standalone), intent=intent,
        channels=["bm25", "vector", "smart"], index_type=index_type,
        docql=docql_queries(idents, standalone), subqueries=subqueries,
        budget_ms=20000 if llm else 1500,
        k_citations=1, top_k=8,
    )
