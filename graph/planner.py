"""Deterministic planning rules: question type, identifiers, key terms, domain, index level, DocQL, sub-queries.

What the wording asks (form, identifiers, whether it refers back, asks about tests or the whole project) is the
question's shape (``sift.retrievers.question``), read once; the rules here turn it into a plan.

``plan_question`` is what the planner node uses without an LLM; the LLM planner produces the same ``Plan`` and
falls back to this on failure. Pure functions only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sift.graph.models import IndexType, Intent, Plan, QuestionType
from sift.retrievers.question import QuestionShape, identifiers_in, question_shape
from sift.tokenize import STOPWORDS

_SECTION = re.compile(r"(?:section|chapter|heading|page)\s+[\"“']([^\"”']+)[\"”']|[\"“']([^\"”']+)[\"”']\s+"
                      r"(?:section|chapter|heading|page)", re.IGNORECASE)
_SPLIT = re.compile(r"\?\s+(?=\S)|;\s+|,\s+and\s+(?=(?:where|how|what|which|why|when)\b)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUESTION_WORDS = frozenset(["make", "makes", "made", "get", "gets", "use", "uses", "used", "way", "ways", "thing", "things", "need", "want", "like", "work", "works", "working", "happen", "happens", "one", "ones", "instead", "example", "e", "g", "etc"])


def question_type(question: str | QuestionShape, has_history: bool) -> QuestionType:
    """The form of the question (``QuestionShape.form``), or ``follow-up`` for one that refers back to a turn."""
    shape = question if isinstance(question, QuestionShape) else question_shape(question)
    if shape.form == "chit-chat":
        return "chit-chat"
    if has_history and shape.refers_back:
        return "follow-up"
    return shape.form


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
    question: str, kb: str, history: Sequence[dict[str, Any]] = (), *, llm: bool = False,
    shape: QuestionShape | None = None,
) -> Plan:
    """The rule-based plan for ``question`` against knowledge base ``kb``; ``shape`` is the question's, read at
    intake (read here when not given)."""
    asked = shape if shape is not None and shape.text == question else question_shape(question)
    qtype = question_type(asked, bool(history))
    if qtype == "chit-chat":
        return Plan(question_type="chit-chat", need_retrieval=False, standalone=question, channels=[],
                    k_citations=0, budget_ms=200, question_shape=asked)
    standalone = rewrite_follow_up(question, history) if qtype == "follow-up" else question
    read = asked if standalone == question else question_shape(standalone)
    base_type = question_type(read, False) if qtype == "follow-up" else qtype
    idents = list(read.identifiers)
    intent: Intent = "both"
    if base_type == "doc":
        intent = "doc"
    elif base_type == "locate" and idents:
        intent = "code"
    if read.asks_tests:
        intent = "code"
    index_type: IndexType = "all"
    if read.overview:
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
        k_citations=1, top_k=8, question_shape=read,
    )
