"""Fallback strategies: each round changes the plan in one named way; pure functions over Plan and evidence."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.graph.models import Evidence, Plan

STRATEGIES = ("widen", "switch_level", "docql_by_name", "read_files", "narrow_domain", "other_domain")


def _widen(plan: Plan, evidence: Sequence[Evidence]) -> Plan | None:
    words = [t for t in plan.key_terms if len(t) > 2]
    if not words:
        return None
    parts: list[str] = []
    for w in words:
        parts.extend(p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", w) or [w])
    query = " ".join(dict.fromkeys([*words, *parts]))
    return plan.model_copy(update={"subqueries": [query], "channels": ["bm25", "smart", "vector"],
                                   "index_type": "all", "docql": [], "read_files": []})


def _switch_level(plan: Plan, evidence: Sequence[Evidence]) -> Plan | None:
    target = {"function": "doc", "file": "function", "doc": "function"}.get(plan.index_type)
    if target is None:
        target = "doc" if plan.intent == "doc" else "function"
    return plan.model_copy(update={"index_type": target, "channels": ["vector", "bm25"],
                                   "subqueries": [plan.standalone], "docql": [], "read_files": []})


def _docql_by_name(plan: Plan, evidence: Sequence[Evidence]) -> Plan | None:
    names = [i for i in plan.identifiers if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", i)]
    names += [t for t in plan.key_terms if len(t) > 3 and re.fullmatch(r"[a-z_]+", t)][:3]
    queries = []
    for name in dict.fromkeys(names):
        queries.append(f'$.code.query("{name}")')
        queries.append(f'$.content.heading("{name}")')
    if not queries:
        return None
    return plan.model_copy(update={"docql": queries[:8], "channels": [], "subqueries": [], "read_files": []})


def _read_files(plan: Plan, evidence: Sequence[Evidence]) -> Plan | None:
    paths = list(dict.fromkeys(e.path for e in evidence))[:2]
    if not paths:
        return None
    return plan.model_copy(update={"read_files": paths, "channels": [], "subqueries": [], "docql": []})


def _narrow(plan: Plan, evidence: Sequence[Evidence], other: bool = False) -> Plan | None:
    code = plan.intent != "doc"
    if other:
        code = not code
    return plan.model_copy(update={"source_type": "code" if code else "doc", "channels": ["bm25", "vector", "smart"],
                                   "subqueries": [plan.standalone], "docql": [], "read_files": [],
                                   "index_type": "all"})


_BUILDERS = {
    "widen": _widen,
    "switch_level": _switch_level,
    "docql_by_name": _docql_by_name,
    "read_files": _read_files,
    "narrow_domain": _narrow,
    "other_domain": lambda p, e: _narrow(p, e, other=True),
}
KEEPS_EVIDENCE = frozenset({"widen", "switch_level", "docql_by_name", "read_files"})


def next_plan(plan: Plan, evidence: Sequence[Evidence], tried: Sequence[str]) -> Plan | None:
    """The plan for the next round: the first untried strategy that applies (None when all are used up)."""
    for name in STRATEGIES:
        if name in tried:
            continue
        changed = _BUILDERS[name](plan, evidence)
        if changed is not None:
            return changed.model_copy(update={"strategy": name})
    return None
