"""Run a question set through a retrieve or answer function, concurrently, and score every question.

The runner knows nothing about indexes or the graph: it takes callables. ``retrieve(question, k)`` returns
ranked hits (anything shaped like ``HitLike``); ``answer(question)`` returns something shaped like
``AnswerLike``. A question whose call raises is recorded with its error message and the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from sift.eval import metrics as m
from sift.eval.format import EvalQuestion, LineError

log = logging.getLogger(__name__)

Mode = Literal["retrieval", "answer"]


class HitLike(Protocol):
    """A ranked piece of evidence: located, scored and named."""

    path: str
    start_line: int
    end_line: int
    score: float
    kind: str
    name: str


class AnswerLike(Protocol):
    """A finished answer. Citations are objects or ``(path, start_line, end_line, evidence_id)`` tuples."""

    text: str
    citations: Sequence[Any]
    grounded: bool
    rounds: int
    fallbacks: int
    tokens: int


@dataclass(frozen=True)
class SpanRecord:
    """Lines of one file (1-based, inclusive) as a run keeps them."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class HitRecord(SpanRecord):
    """A hit as kept in a run."""

    score: float | None = None
    kind: str = ""
    name: str = ""


@dataclass(frozen=True)
class CitationRecord(SpanRecord):
    """A citation as kept in a run; ``valid`` is the citation checker's verdict when the answer carries it."""

    evidence_id: str | None = None
    valid: bool | None = None


@dataclass(frozen=True)
class AnswerRecord:
    """The parts of an answer that the metrics and reports use."""

    text: str
    citations: list[CitationRecord]
    grounded: bool
    rounds: int = 0
    fallbacks: int = 0
    tokens: int = 0
    confidence: str | None = None
    confidence_score: float | None = None
    degraded_reasons: list[str] = field(default_factory=list)
    """What the answer had to do without (a branch out of time, a failed LLM): it may differ from a full run."""


@dataclass
class QuestionResult:
    """One question's outcome: what was retrieved or answered, its metrics, its latency or its error."""

    id: str
    query: str
    kind: str | None
    gold_files: list[str]
    gold_spans: list[dict[str, Any]]
    answer_contains: list[str]
    meta: dict[str, Any] = field(default_factory=dict)
    latency_ms: float | None = None
    hits: list[HitRecord] = field(default_factory=list)
    answer: AnswerRecord | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)
    error: str | None = None


@dataclass
class EvalRun:
    """A finished run: per-question results (in question-set order), aggregates and the run's configuration."""

    mode: Mode
    k: int
    results: list[QuestionResult]
    aggregate: dict[str, float | int | None]
    by_kind: dict[str, dict[str, float | int | None]]
    config: dict[str, Any] = field(default_factory=dict)
    by: str = "kind"
    """The grouping key of ``by_group``: ``kind``, ``kb`` or a metadata key of the questions."""
    by_group: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    line_errors: list[LineError] = field(default_factory=list)
    started_at: str = ""
    elapsed_s: float = 0.0
    partial: bool = False
    """The run was interrupted (Ctrl-C): ``results`` holds the questions answered by then, not the whole set."""
    set_size: int = 0
    """How many questions the set had (``len(results)`` unless ``partial``)."""


RETRIEVAL_METRICS = (
    "file_recall@1", "file_recall@5", "file_recall@10", "span_recall@1", "span_recall@3", "span_recall@10",
    "span_hit@3", "file_mrr", "span_mrr", "ndcg@10", "duplicate_rate",
)
ANSWER_METRICS = (
    "answer_hit", "answer_right", "citation_count", "citation_precision", "citation_validity", "grounded", "not_found_accuracy",
    "fallback", "rounds", "tokens", "degraded",
)
NO_KIND = "(none)"


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def to_hit(hit: Any) -> HitRecord:
    """Copy a hit-like object (or mapping) into a ``HitRecord``."""
    score = _field(hit, "score")
    return HitRecord(
        path=str(_field(hit, "path")), start_line=int(_field(hit, "start_line")),
        end_line=int(_field(hit, "end_line")), score=None if score is None else float(score),
        kind=str(_field(hit, "kind", "") or ""), name=str(_field(hit, "name", "") or ""),
    )


def to_citation(citation: Any) -> CitationRecord:
    """Copy a citation object, mapping or ``(path, start, end, evidence_id)`` tuple into a ``CitationRecord``."""
    if isinstance(citation, tuple | list):
        path, start, end, *rest = citation
        evidence = rest[0] if rest else None
        valid = None
    else:
        path, start, end = _field(citation, "path"), _field(citation, "start_line"), _field(citation, "end_line")
        evidence, valid = _field(citation, "evidence_id"), _field(citation, "valid")
    return CitationRecord(
        str(path), int(start), int(end), None if evidence is None else str(evidence),
        None if valid is None else bool(valid),
    )


def to_answer(answer: Any) -> tuple[AnswerRecord, list[HitRecord]]:
    """Copy an answer-like object into an ``AnswerRecord`` plus the ranked hits/evidence it was built from."""
    evidence = _field(answer, "hits") or _field(answer, "evidence") or []
    record = AnswerRecord(
        text=str(_field(answer, "text", "") or ""),
        citations=[to_citation(c) for c in _field(answer, "citations", None) or []],
        grounded=bool(_field(answer, "grounded", False)),
        rounds=int(_field(answer, "rounds", 0) or 0),
        fallbacks=int(_field(answer, "fallbacks", 0) or 0),
        tokens=int(_field(answer, "tokens", 0) or 0),
        confidence=_field(answer, "confidence"),
        confidence_score=_field(answer, "confidence_score"),
        degraded_reasons=[str(r) for r in _field(answer, "degraded_reasons", None) or []],
    )
    return record, [to_hit(h) for h in evidence]


def _gold_files(q: EvalQuestion) -> list[str]:
    """Gold files are the listed ones plus the files of the gold spans."""
    return list(dict.fromkeys([*q.gold_files, *(s.path for s in q.gold_spans)]))


def retrieval_metrics(q: EvalQuestion, hits: Sequence[HitRecord], k: int) -> dict[str, float | None]:
    """Retrieval metrics of one question over its ranked hits (cut at ``k``)."""
    hits = list(hits[:k])
    files, spans = _gold_files(q), list(q.gold_spans)
    return {
        "file_recall@1": m.file_recall_at_k(hits, files, 1),
        "file_recall@5": m.file_recall_at_k(hits, files, 5),
        "file_recall@10": m.file_recall_at_k(hits, files, 10),
        "span_recall@1": m.span_recall_at_k(hits, spans, 1),
        "span_recall@3": m.span_recall_at_k(hits, spans, 3),
        "span_recall@10": m.span_recall_at_k(hits, spans, 10),
        "span_hit@3": m.span_hit_at_k(hits, spans, 3),
        "file_mrr": m.file_mrr(hits, files),
        "span_mrr": m.span_mrr(hits, spans),
        "ndcg@10": m.ndcg_at_k(hits, spans, files, 10),
        "duplicate_rate": m.duplicate_rate(hits),
    }


def answer_metrics(q: EvalQuestion, answer: AnswerRecord) -> dict[str, float | None]:
    """Answer metrics of one question: phrase hit, citation count/precision/validity, grounding, cost."""
    no_gold = not (q.gold_files or q.gold_spans or q.answer_contains)
    checked = [c.valid for c in answer.citations if c.valid is not None]
    hit = m.answer_hit(answer.text, q.answer_contains, answer.citations, q.gold_spans)
    not_found = m.says_not_found(answer.text, answer.grounded) if no_gold else None
    return {
        "answer_hit": hit,
        "answer_right": m.answer_right(hit, answer.citations, q.gold_spans, _gold_files(q), not_found),
        "citation_count": float(len(answer.citations)),
        "citation_precision": m.citation_precision(answer.citations, q.gold_spans, _gold_files(q)),
        "citation_validity": m.mean(1.0 if v else 0.0 for v in checked),
        "grounded": 1.0 if answer.grounded else 0.0,
        "not_found_accuracy": (1.0 if m.says_not_found(answer.text, answer.grounded) else 0.0) if no_gold else None,
        "fallback": 1.0 if answer.fallbacks > 0 else 0.0,
        "rounds": float(answer.rounds),
        "tokens": float(answer.tokens),
        "degraded": 1.0 if answer.degraded_reasons else 0.0,
    }


def _run_one(
    q: EvalQuestion, mode: Mode, retrieve: Callable[..., Any] | None, answer: Callable[..., Any] | None, k: int
) -> QuestionResult:
    result = QuestionResult(
        id=q.id, query=q.query, kind=q.kind, gold_files=list(q.gold_files),
        gold_spans=[s.model_dump() for s in q.gold_spans], answer_contains=list(q.answer_contains),
        meta=dict(q.meta),
    )
    start = time.perf_counter()
    try:
        if mode == "retrieval" and retrieve is not None:
            result.hits = [to_hit(h) for h in retrieve(q, k)]
        elif answer is not None:
            result.answer, result.hits = to_answer(answer(q))
    except Exception as exc:  # noqa: BLE001 - one failing question must not end the run
        result.latency_ms = (time.perf_counter() - start) * 1000
        result.error = f"{type(exc).__name__}: {exc}"
        log.warning("question %s failed after %.0f ms: %s", q.id, result.latency_ms, type(exc).__name__)
        return result
    result.latency_ms = (time.perf_counter() - start) * 1000
    result.metrics = retrieval_metrics(q, result.hits, k)
    if result.answer is not None:
        result.metrics.update(answer_metrics(q, result.answer))
    return result


def aggregate(results: Iterable[QuestionResult]) -> dict[str, float | int | None]:
    """Means of every metric over the questions where it is defined, plus counts and p50/p95 latency."""
    results = list(results)
    ok = [r for r in results if r.error is None]
    names = list(dict.fromkeys(name for r in ok for name in r.metrics))
    out: dict[str, float | int | None] = {"questions": len(results), "errors": len(results) - len(ok)}
    for name in names:
        out[name] = m.mean(r.metrics.get(name) for r in ok)
    if any("degraded" in r.metrics for r in ok):  # answer runs (a report from before it has no such metric)
        out["degraded_answers"] = sum(r.metrics.get("degraded") == 1.0 for r in ok)
    latencies = [r.latency_ms for r in ok if r.latency_ms is not None]
    out["latency_p50_ms"] = m.percentile(latencies, 50)
    out["latency_p95_ms"] = m.percentile(latencies, 95)
    return out


def group_value(r: QuestionResult, key: str) -> str:
    """The group of a question under ``key``: its kind, or a metadata value (JSON text unless a string);
    ``(none)`` when the question has no such value."""
    value = r.kind if key == "kind" else r.meta.get(key)
    if value is None or value == "":
        return NO_KIND
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def aggregate_by(results: Iterable[QuestionResult], key: str) -> dict[str, dict[str, float | int | None]]:
    """``aggregate`` for each value of ``key`` (see ``group_value``), sorted by value."""
    groups: dict[str, list[QuestionResult]] = {}
    for r in results:
        groups.setdefault(group_value(r, key), []).append(r)
    return {value: aggregate(groups[value]) for value in sorted(groups)}


def aggregate_by_kind(results: Iterable[QuestionResult]) -> dict[str, dict[str, float | int | None]]:
    """``aggregate`` for each question kind, sorted by kind; questions without a kind go under ``(none)``."""
    return aggregate_by(results, "kind")


def run_eval(
    questions: Sequence[EvalQuestion],
    *,
    mode: Mode,
    retrieve: Callable[[EvalQuestion, int], Sequence[HitLike]] | None = None,
    answer: Callable[[EvalQuestion], AnswerLike] | None = None,
    k: int = 10,
    concurrency: int = 4,
    progress: Callable[[QuestionResult], None] | None = None,
    config: Mapping[str, Any] | None = None,
    line_errors: Sequence[LineError] = (),
    by: str = "kind",
) -> EvalRun:
    """Run every question concurrently, score it, and aggregate overall, per kind and per ``by`` value.

    A ``KeyboardInterrupt`` (Ctrl-C) while it runs cancels the questions not started, lets the running ones
    finish, and returns the answered ones as a ``partial`` run instead of raising.
    """
    _check_arguments(mode, retrieve, answer, k, concurrency)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.perf_counter()
    log.info("eval: %d questions, %d at a time", len(questions), concurrency)
    done, partial = _run_all(questions, mode, retrieve, answer, k, concurrency, progress)
    elapsed = time.perf_counter() - start
    log.info("eval: %d questions in %.1f s, %d errors%s", len(done), elapsed,
             sum(r.error is not None for r in done), f" (interrupted, {len(questions)} in the set)" if partial else "")
    return EvalRun(
        mode=mode, k=k, results=done, aggregate=aggregate(done), by_kind=aggregate_by_kind(done),
        by=by, by_group=aggregate_by(done, by),
        config={"mode": mode, "k": k, "concurrency": concurrency, **(config or {})},
        line_errors=list(line_errors), started_at=started_at, elapsed_s=round(elapsed, 3),
        partial=partial, set_size=len(questions),
    )


def _check_arguments(mode: Mode, retrieve: Callable[[EvalQuestion, int], Sequence[HitLike]] | None,
                     answer: Callable[[EvalQuestion], AnswerLike] | None, k: int, concurrency: int) -> None:
    """A ``ValueError`` for a mode that is not known or lacks its function, or a ``k`` or concurrency below 1."""
    if mode not in ("retrieval", "answer"):
        raise ValueError(f"mode must be 'retrieval' or 'answer', not {mode!r}")
    if mode == "retrieval" and retrieve is None:
        raise ValueError("retrieval mode needs a retrieve function")
    if mode == "answer" and answer is None:
        raise ValueError("answer mode needs an answer function")
    if k < 1 or concurrency < 1:
        raise ValueError("k and concurrency must be at least 1")


def _run_all(
    questions: Sequence[EvalQuestion],
    mode: Mode,
    retrieve: Callable[[EvalQuestion, int], Sequence[HitLike]] | None,
    answer: Callable[[EvalQuestion], AnswerLike] | None,
    k: int,
    concurrency: int,
    progress: Callable[[QuestionResult], None] | None,
) -> tuple[list[QuestionResult], bool]:
    """The questions' results in the set's order, ``concurrency`` at a time, and whether Ctrl-C cut the run short
    (then only the answered ones)."""
    results: list[QuestionResult | None] = [None] * len(questions)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="eval")
    futures: dict[Future[QuestionResult], int] = {}
    partial = False
    try:
        for i, q in enumerate(questions):
            futures[pool.submit(_run_one, q, mode, retrieve, answer, k)] = i
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if progress is not None:
                progress(result)
    except KeyboardInterrupt:
        # Ctrl-C: no new question starts, the ones running finish (a second Ctrl-C stops waiting for them), and
        # the answered ones make a partial run.
        partial = True
        pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(KeyboardInterrupt):
            pool.shutdown(wait=True)
        for future, i in futures.items():
            if results[i] is None and future.done() and not future.cancelled():
                results[i] = future.result()
    else:
        pool.shutdown()
    done = [r for r in results if r is not None]
    return done, partial
