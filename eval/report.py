"""Write an evaluation run as ``DIR/RUN.json`` (everything, for comparison later) and ``DIR/RUN.md`` (for people)."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from sift.eval.metrics import calibration
from sift.eval.runner import ANSWER_METRICS, RETRIEVAL_METRICS, EvalRun, QuestionResult

VERSIONED_PACKAGES = ("sift", "numpy", "faiss-cpu", "sentence-transformers", "langgraph", "langchain-openai")
WORST_COUNT = 5
KIND_COLUMNS_RETRIEVAL = ("file_recall@5", "span_recall@3", "span_mrr", "ndcg@10")
KIND_COLUMNS_ANSWER = ("answer_hit", "citation_precision", "grounded", "not_found_accuracy")


def package_versions(names: tuple[str, ...] = VERSIONED_PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages that shape results (None when one is not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_to_dict(run: EvalRun, name: str) -> dict[str, Any]:
    """The JSON document of a run: config, versions, aggregates, line errors and every question."""
    return {
        "name": name,
        "mode": run.mode,
        "k": run.k,
        "started_at": run.started_at,
        "elapsed_s": run.elapsed_s,
        "partial": run.partial,
        "set_size": run.set_size or len(run.results),
        "config": run.config,
        "versions": package_versions(),
        "aggregate": run.aggregate,
        "by_kind": run.by_kind,
        "by": run.by,
        "by_group": run.by_group,
        "calibration": run_calibration(run),
        "line_errors": [asdict(e) for e in run.line_errors],
        "questions": [asdict(r) for r in run.results],
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _badness(r: QuestionResult, mode: str) -> tuple[float, ...]:
    """Sort key: errors first, then the lowest primary metrics."""
    if r.error is not None:
        return (0.0,)
    get = r.metrics.get
    keys = ("answer_hit", "not_found_accuracy", "citation_precision", "span_mrr") if mode == "answer" else (
        "span_mrr", "span_recall@10", "file_mrr", "ndcg@10")
    values = [get(key) for key in keys]
    return (1.0, *(1.0 if v is None else v for v in values))


def worst_questions(run: EvalRun, count: int = WORST_COUNT) -> list[QuestionResult]:
    """The questions that did worst: errors first, then lowest primary metric (stable by set order)."""
    return sorted(run.results, key=lambda r: _badness(r, run.mode))[:count]


def _metric_names(run: EvalRun) -> list[str]:
    wanted = RETRIEVAL_METRICS + (ANSWER_METRICS if run.mode == "answer" else ())
    return [n for n in wanted if n in run.aggregate]


def render_markdown(run: EvalRun, name: str) -> str:
    """The Markdown report: configuration, aggregate table, per-kind table and the worst questions."""
    agg = run.aggregate
    lines = [f"# Evaluation run `{name}`", ""]
    if run.partial:
        lines += [f"**Partial run**: interrupted after {len(run.results)} of {run.set_size} questions; the figures "
                  "below cover only those.", ""]
    config = ", ".join(f"{k}={v}" for k, v in run.config.items())
    lines += [f"- started {run.started_at}, {run.elapsed_s:.1f} s; {config}",
              f"- questions {agg['questions']}, errors {agg['errors']}, skipped lines {len(run.line_errors)}"
              + (f", degraded answers {agg['degraded_answers']}" if "degraded_answers" in agg else ""),
              f"- latency p50 {_fmt(agg.get('latency_p50_ms'))} ms, p95 {_fmt(agg.get('latency_p95_ms'))} ms", ""]
    lines += ["## Aggregate", "", "| metric | value |", "|---|---|"]
    lines += [f"| {n} | {_fmt(agg[n])} |" for n in _metric_names(run)]
    columns = KIND_COLUMNS_RETRIEVAL + (KIND_COLUMNS_ANSWER if run.mode == "answer" else ())
    groups = run.by_group or run.by_kind
    lines += ["", f"## By {run.by}", "", f"| {_cell(run.by)} | questions | errors | " + " | ".join(columns)
              + " | p95 ms |", "|---" * (len(columns) + 4) + "|"]
    for kind, values in groups.items():
        cells = [_fmt(values.get(c)) for c in columns]
        lines.append(f"| {_cell(kind)} | {values['questions']} | {values['errors']} | " + " | ".join(cells)
                     + f" | {_fmt(values.get('latency_p95_ms'))} |")
    lines += confidence_section(run)
    lines += ["", f"## Worst {min(WORST_COUNT, len(run.results))} questions", ""]
    for r in worst_questions(run):
        lines += _question_section(r, run.k)
    if run.line_errors:
        lines += ["## Skipped lines", ""] + [f"- line {e.line}: {_cell(e.message)}" for e in run.line_errors] + [""]
    return "\n".join(lines)


def run_calibration(run: EvalRun) -> dict[str, dict[str, float | int | None]] | None:
    """The run's calibration table (see ``metrics.calibration``), or None when its answers carry no confidence."""
    rows = [(r.answer.confidence, r.metrics.get("answer_right"), r.metrics.get("not_found_accuracy") is None)
            for r in run.results if r.answer is not None and r.error is None]
    if not any(level for level, _, _ in rows):
        return None
    return calibration(rows)


def confidence_section(run: EvalRun) -> list[str]:
    """For each confidence level: its answers, their share, the answerable questions' share, how often right."""
    table = run_calibration(run)
    if table is None:
        return []
    lines = ["", "## Confidence", "", "| level | answers | share | share of answerable | right |",
             "|---|---|---|---|---|"]
    for level, v in table.items():
        lines.append(f"| {level} | {v['answers']} | {_fmt(v['share'])} | {_fmt(v['share_answerable'])} "
                     f"| {_fmt(v['right'])} |")
    return lines


def _question_section(r: QuestionResult, k: int) -> list[str]:
    out = [f"### `{r.id}` ({r.kind or 'no kind'})", "", f"> {_cell(r.query)}", ""]
    if r.meta:
        out.append("- metadata: " + ", ".join(f"{k}={_cell(json.dumps(v, ensure_ascii=False))}"
                                              for k, v in r.meta.items()))
    if r.error is not None:
        return out + [f"**error:** `{_cell(r.error)}`", ""]
    gold = [f"{s['path']}:{s['start_line']}-{s['end_line']}" for s in r.gold_spans] or r.gold_files
    out.append(f"- gold: {', '.join(gold) if gold else 'none (should be not found)'}")
    shown = {key: r.metrics.get(key) for key in ("span_mrr", "file_mrr", "answer_hit", "citation_precision")}
    out.append("- " + ", ".join(f"{key} {_fmt(v)}" for key, v in shown.items() if v is not None))
    if r.answer is not None:
        flags = "grounded" if r.answer.grounded else "not grounded"
        if r.answer.confidence:
            flags += f", confidence {r.answer.confidence}"
        out.append(f"- answer ({flags}): {_cell(r.answer.text[:300])}")
    out += ["", "| rank | hit | kind | name | score |", "|---|---|---|---|---|"]
    for rank, h in enumerate(r.hits[:k], start=1):
        out.append(f"| {rank} | {h.path}:{h.start_line}-{h.end_line} | {h.kind} | {_cell(h.name)} | {_fmt(h.score)} |")
    if not r.hits:
        out.append("| – | nothing retrieved | | | |")
    return out + [""]


def write_reports(run: EvalRun, out_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Write ``out_dir/name.json`` and ``out_dir/name.md``; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(run_to_dict(run, name), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(render_markdown(run, name), encoding="utf-8")
    return json_path, md_path
