"""Compare two evaluation runs (their ``RUN.json`` files): per-metric deltas and questions whose outcome changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sift.errors import InvalidQuery, NotFound

OUTCOMES = ("span_hit@3", "answer_hit", "not_found_accuracy")
"""Per-question 0/1 metrics whose flip between runs is reported as a changed outcome."""

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
            if va is None or vb is None or va == vb or "error" in (va, vb):
                continue
            changes.append({"id": qa["id"], "kind": qa.get("kind"), "outcome": name, "a": va, "b": vb,
                            "change": "won" if vb > va else "lost"})
    return changes


def compare(a_json: str | Path | dict[str, Any], b_json: str | Path | dict[str, Any]) -> dict[str, Any]:
    """Deltas (b - a) of every aggregate and per-kind metric, and the questions whose outcome changed."""
    a = a_json if isinstance(a_json, dict) else load_run(a_json)
    b = b_json if isinstance(b_json, dict) else load_run(b_json)
    kinds = list(dict.fromkeys([*a.get("by_kind", {}), *b.get("by_kind", {})]))
    a_ids = {q["id"] for q in a["questions"]}
    b_ids = {q["id"] for q in b["questions"]}
    return {
        "a": {"name": a.get("name"), "mode": a.get("mode"), "started_at": a.get("started_at")},
        "b": {"name": b.get("name"), "mode": b.get("mode"), "started_at": b.get("started_at")},
        "aggregate": _metric_deltas(a["aggregate"], b["aggregate"]),
        "by_kind": {k: _metric_deltas(a.get("by_kind", {}).get(k, {}), b.get("by_kind", {}).get(k, {}))
                    for k in kinds},
        "changed": _changed(a["questions"], b["questions"]),
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
    changed = result["changed"]
    lines += ["", f"questions that changed outcome: {len(changed)}"]
    for c in changed:
        lines.append(f"  {c['change']:<11} {c['outcome']:<18} {c['id']}  ({_num(c['a'])} -> {_num(c['b'])})")
    for side in ("only_in_a", "only_in_b"):
        if result[side]:
            lines.append(f"{side.replace('_', ' ')}: {', '.join(result[side])}")
    return "\n".join(lines) + "\n"
