"""Compare two evaluation runs (their ``RUN.json`` files): per-metric deltas and questions whose outcome changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sift.errors import InvalidQuery, NotFound
from sift.eval.metrics import paired_difference
from sift.eval.runner import QuestionResult, aggregate, aggregate_by_kind

OUTCOMES = ("span_hit@3", "answer_hit", "not_found_accuracy")
"""Per-question 0/1 metrics whose flip between runs is reported as a changed outcome."""

PAIRED = ("span_hit@3", "span_mrr", "answer_hit", "answer_right", "citation_precision", "not_found_accuracy")
"""Per-question metrics whose change is also given as a paired difference with its 95% bootstrap interval."""

LOWER_IS_BETTER = frozenset({"duplicate_rate", "errors", "latency_p50_ms", "latency_p95_ms", "tokens", "rounds",
                             "fallback"})


def load_run(path: str | Path) -> dict[str, Any]:
    """Read a run's JSON report."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NotFound(f"run report {path} does not exist; pass the .json file that `sift eval` wrote") from exc
    except json.JSONDecodeError as exc:
        raise InvalidQuery(f"{path} is not valid JSON (line {exc.lineno}); pass a report written by `sift eval`") from exc
    if not isinstance(data, dict) or "aggregate" not in data or "questions" not in data:
        raise InvalidQuery(f"{path} is not a `sift eval` run report (no aggregate/questions)")
    return data


def _delta(a: Any, b: Any) -> float | None:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return b - a
    return None


def _metric_deltas(a: dict[str, Any], b: dict[str, Any]) -> dict[str, dict[str, Any]]:
    names = list(dict.fromkeys([*a, *b]))
    return {n: {"a": a.get(n), "b": b.get(n), "delta": _delta(a.get(n), b.get(n))} for n in names}


def _outcome(q: dict[str, Any], name: str) -> float | str | None:
    if q.get("error") is not None:
        return "error"
    return q.get("metrics", {}).get(name)


def _changed(a_questions: list[dict[str, Any]], b_questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    b_by_id = {q["id"]: q for q in b_questions}
    changes: list[dict[str, Any]] = []
    for qa in a_questions:
        qb = b_by_id.get(qa["id"])
        if qb is None:
            continue
        if (qa.get("error") is None) != (qb.get("error") is None):
            change = "now errors" if qb.get("error") is not None else "error fixed"
            changes.append({"id": qa["id"], "kind": qa.get("kind"), "outcome": "error", "a": qa.get("error"),
                            "b": qb.get("error"), "change": change})
            continue
        for name in OUTCOMES:
            va, vb = _outcome(qa, name), _outcome(qb, name)
            if not isinstance(va, float | int) or not isinstance(vb, float | int) or va == vb:
                continue  # missing, unchanged, or an error on either side
            changes.append({"id": qa["id"], "kind": qa.get("kind"), "outcome": name, "a": va, "b": vb,
                            "change": "won" if vb > va else "lost"})
    return changes


def _paired(a_questions: list[dict[str, Any]], b_questions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each ``PAIRED`` metric that both runs scored on some question: its mean change (b - a) over those
    questions and the 95% paired bootstrap interval of that mean (``metrics.paired_difference``), so a change
    can be told from what resampling the same questions would give."""
    b_by_id = {q["id"]: q for q in b_questions}
    out: dict[str, dict[str, Any]] = {}
    for name in PAIRED:
        pairs = [(va, vb) for qa in a_questions if (qb := b_by_id.get(qa["id"])) is not None
                 for va, vb in [(_outcome(qa, name), _outcome(qb, name))]
                 if isinstance(va, float | int) and isinstance(vb, float | int)]
        if pairs:
            delta, low, high = paired_difference([vb for _, vb in pairs], [va for va, _ in pairs])
            out[name] = {"questions": len(pairs), "delta": delta, "low": low, "high": high}
    return out


class RunsDiffer(InvalidQuery):
    """Two runs are not over the same questions in the same mode, so their aggregates do not compare."""


QUESTION_KEYS = ("query", "gold_files", "gold_spans", "answer_contains")
"""What makes two runs' questions of one id the same question."""


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Why two runs do not compare as they are: different modes, questions only in one, or changed questions."""
    out = []
    if a.get("mode") != b.get("mode"):
        out.append(f"modes differ ({a.get('mode')} vs {b.get('mode')})")
    a_qs, b_qs = ({q["id"]: q for q in run["questions"]} for run in (a, b))
    only_a, only_b = len(a_qs.keys() - b_qs.keys()), len(b_qs.keys() - a_qs.keys())
    changed = sum(1 for i in a_qs.keys() & b_qs.keys()
                  if any(a_qs[i].get(k) != b_qs[i].get(k) for k in QUESTION_KEYS))
    if only_a or only_b or changed:
        out.append(f"question sets differ ({only_a} only in A, {only_b} only in B, {changed} changed)")
    return out


def _shared(run: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """The run narrowed to the questions ``ids``, its aggregates recomputed over them."""
    names = set(QuestionResult.__dataclass_fields__)
    questions = [q for q in run["questions"] if q["id"] in ids]
    results = [QuestionResult(**{k: v for k, v in q.items() if k in names}) for q in questions]
    return {**run, "questions": questions, "aggregate": aggregate(results), "by_kind": aggregate_by_kind(results)}


def compare(a_json: str | Path | dict[str, Any], b_json: str | Path | dict[str, Any], *,
            force: bool = False) -> dict[str, Any]:
    """Deltas (b - a) of every aggregate and per-kind metric, the paired change of the per-question metrics in
    ``PAIRED`` with its bootstrap interval, and the questions whose outcome changed.

    Runs over different question sets or in different modes raise ``RunsDiffer`` unless ``force``; then only the
    questions both runs share (same id, same query and gold) are compared, with aggregates recomputed over them.
    """
    a = a_json if isinstance(a_json, dict) else load_run(a_json)
    b = b_json if isinstance(b_json, dict) else load_run(b_json)
    a_ids = {q["id"] for q in a["questions"]}
    b_ids = {q["id"] for q in b["questions"]}
    a_qs = {q["id"]: q for q in a["questions"]}
    shared = {q["id"] for q in b["questions"]
              if q["id"] in a_qs and all(a_qs[q["id"]].get(k) == q.get(k) for k in QUESTION_KEYS)}
    why = differences(a, b)
    if why and not force:
        raise RunsDiffer(f"the runs do not compare: {'; '.join(why)}. Pass --force to compare the {len(shared)} "
                         "question(s) both runs share")
    if why:
        a, b = _shared(a, shared), _shared(b, shared)
    kinds = list(dict.fromkeys([*a.get("by_kind", {}), *b.get("by_kind", {})]))
    return {
        "a": {"name": a.get("name"), "mode": a.get("mode"), "started_at": a.get("started_at")},
        "b": {"name": b.get("name"), "mode": b.get("mode"), "started_at": b.get("started_at")},
        "differences": why,
        "compared": len(shared),
        "aggregate": _metric_deltas(a["aggregate"], b["aggregate"]),
        "by_kind": {k: _metric_deltas(a.get("by_kind", {}).get(k, {}), b.get("by_kind", {}).get(k, {}))
                    for k in kinds},
        "changed": _changed(a["questions"], b["questions"]),
        "paired": _paired(a["questions"], b["questions"]),
        "only_in_a": sorted(a_ids - b_ids),
        "only_in_b": sorted(b_ids - a_ids),
    }


def _num(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def _signed(name: str, delta: float | None) -> str:
    if delta is None:
        return ""
    if delta == 0:
        return "  ="
    better = (delta < 0) if name in LOWER_IS_BETTER else (delta > 0)
    return f"{delta:+.3f}" + ("  better" if better else "  worse")


def render_comparison(result: dict[str, Any]) -> str:
    """A plain-text rendering of ``compare``: a metric table, then the changed questions."""
    a_name, b_name = result["a"]["name"] or "A", result["b"]["name"] or "B"
    rows = [("metric", a_name, b_name, "delta")]
    rows += [(n, _num(v["a"]), _num(v["b"]), _signed(n, v["delta"])) for n, v in result["aggregate"].items()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if result.get("differences"):
        lines[:0] = [f"forced: {'; '.join(result['differences'])}",
                     f"compared the {result['compared']} question(s) both runs share", ""]
    paired = result.get("paired") or {}
    if paired:
        lines += ["", "paired over the questions both runs scored (delta, 95% bootstrap interval):"]
        width = max(len(n) for n in paired)
        lines += [f"  {n.ljust(width)}  {p['delta']:+.3f} [{p['low']:+.3f}, {p['high']:+.3f}]  {p['questions']} questions"
                  for n, p in paired.items()]
    changed = result["changed"]
    lines += ["", f"questions that changed outcome: {len(changed)}"]
    for c in changed:
        lines.append(f"  {c['change']:<11} {c['outcome']:<18} {c['id']}  ({_num(c['a'])} -> {_num(c['b'])})")
    for side in ("only_in_a", "only_in_b"):
        if result[side]:
            lines.append(f"{side.replace('_', ' ')}: {', '.join(result[side])}")
    return "\n".join(lines) + "\n"
