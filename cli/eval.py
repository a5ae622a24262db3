"""`sift eval FILE --kb NAME`: run a JSONL question set and write JSON + Markdown reports;
`sift eval compare A.json B.json`: per-metric deltas, paired changes with their bootstrap intervals, and the questions
that changed outcome."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sift.cli.common import add_common, settings_from
from sift.cli.output import echo, escape, print_json
from sift.errors import NotFound, SiftError

if TYPE_CHECKING:
    from rich.progress import Progress

    from sift.config import Settings
    from sift.eval.format import EvalQuestion
    from sift.eval.runner import EvalRun, QuestionResult
    from sift.graph.models import Answer
    from sift.models import Hit

    #: The fused retriever ``sift eval`` measures: a question's top ``k`` hits.
    Retrieve = Callable[[EvalQuestion, int], list[Hit]]

EXAMPLE = """examples:
  sift eval eval/sets/myproject.jsonl --kb myproject --mode retrieval --out eval/runs --name myproject-retrieval
  sift eval eval/sets/myproject.jsonl --kb myproject --mode answer --concurrency 2 --format json
  sift eval eval/sets/myproject.jsonl --kb myproject --by difficulty
  sift eval compare eval/runs/before.json eval/runs/after.json"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the eval command (and its `compare` form)."""
    p = sub.add_parser(
        "eval", help="run an evaluation question set, or compare two runs",
        usage="sift eval FILE --kb NAME [options]\n       sift eval compare A.json B.json [--force] [--format json]",
        description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # One positional plus a hidden tail: `compare` cannot be a subparser next to a positional FILE.
    p.add_argument("file", metavar="FILE", help="JSONL question set, or the word `compare`")
    p.add_argument("reports", nargs="*", metavar="A.json B.json", help=argparse.SUPPRESS)
    p.add_argument("--kb", help="knowledge base to evaluate (default: each question's `kb`)")
    p.add_argument("--mode", choices=("retrieval", "answer"), default="retrieval",
                   help="retrieval: the fused retriever; answer: the full graph (default retrieval)")
    p.add_argument("--concurrency", type=int, default=4, help="questions in flight at once (default 4); latency percentiles are per-question "
                   "wall time, so use 1 to measure single-query latency")
    p.add_argument("--k", type=int, default=10, help="hits kept per question (default 10)")
    p.add_argument("--out", type=Path, default=None, help="report directory (default DATA_DIR/eval)")
    p.add_argument("--name", default=None, help="run name, the reports' file stem (default SET-MODE-TIME)")
    p.add_argument("--strict", action="store_true", help="fail on the first malformed line instead of skipping it")
    p.add_argument("--by", default="kind", metavar="kind|FIELD",
                   help="group the report by question kind (default) or by a metadata key of the set's lines")
    p.add_argument("--force", action="store_true",
                   help="compare: compare runs over different question sets or modes, on the questions they share")
    p.add_argument("--format", choices=("text", "json"), default="text", help="stdout format (default text)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the compare form or run a question set."""
    if args.file == "compare":
        return run_compare(args)
    if args.reports:
        raise _usage(f"unexpected arguments {' '.join(args.reports)}; did you mean `sift eval compare A B`?")
    return run_set(args)


def _usage(message: str) -> Exception:
    from sift.cli import UsageError

    return UsageError(message)


def run_compare(args: argparse.Namespace) -> int:
    """Print the comparison of two run reports."""
    from sift.eval.compare import compare, render_comparison

    if len(args.reports) != 2:
        raise _usage("compare takes exactly two run reports: sift eval compare A.json B.json")
    result = compare(*args.reports, force=args.force)
    if args.format == "json":
        print_json(result)
    else:
        echo(render_comparison(result).rstrip("\n"))
    return 0


def run_set(args: argparse.Namespace) -> int:
    """Load the set, run it against the knowledge base, write the reports and print a summary."""
    if args.k < 1 or args.concurrency < 1:
        raise _usage("--k and --concurrency must be at least 1")
    if not Path(args.file).is_file():
        raise NotFound(f"question set {args.file} does not exist")
    from sift.eval.format import load_questions
    from sift.eval.report import write_reports
    from sift.eval.runner import run_eval

    questions, line_errors = load_questions(args.file, strict=args.strict)
    for e in line_errors:
        echo(f"{escape(args.file)}:{e.line}: skipped: {escape(e.message)}", file=sys.stderr)
    if not questions:
        raise SiftError(f"{args.file} has no question to evaluate ({len(line_errors)} line(s) skipped, see "
                        "above); fix those lines or pass another set")
    _check_group(args.by, questions)
    kb = args.kb or _single_kb(questions)
    settings = settings_from(args)
    config: dict[str, Any] = {"question_set": str(args.file), "kb": kb, "kb_generation": _kb_generation(settings, kb)}
    from sift.embed import check_embedder

    check_embedder(settings)  # both modes retrieve by vector
    if args.mode == "retrieval":
        retrieve, close = _fused_retriever(settings, kb)
        _warm_up(retrieve, questions, args.k)
        kwargs: dict[str, Any] = {"retrieve": retrieve}
    else:
        answer, close = _answerer(settings, kb)
        kwargs = {"answer": answer}
    try:
        with _ProgressBar(len(questions)) as advance:
            result = run_eval(questions, mode=args.mode, k=args.k, concurrency=args.concurrency, progress=advance,
                              config=config, line_errors=line_errors, by=args.by, **kwargs)
    finally:
        if close is not None:
            close()
    name = args.name or f"{Path(args.file).stem}-{args.mode}-{datetime.now():%Y%m%d-%H%M%S}"
    json_path, md_path = write_reports(result, args.out or settings.data_dir / "eval", name)
    if args.format == "json":
        print_json({"name": name, "json": str(json_path), "markdown": str(md_path), "partial": result.partial,
                    "aggregate": result.aggregate, "by_kind": result.by_kind, "by": result.by,
                    "by_group": result.by_group, "line_errors": len(line_errors)})
    else:
        _print_summary(result, json_path, md_path)
    if result.partial:
        from sift.cli import EXIT_INTERRUPTED

        echo(f"interrupted: {len(result.results)} of {result.set_size} questions answered; the reports above are "
             "marked partial", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.aggregate["errors"] == result.aggregate["questions"]:
        first = next(r.error for r in result.results if r.error is not None)
        raise SiftError(f"every one of the {len(result.results)} questions failed, so nothing was evaluated "
                        f"(first error: {first}); the reports are in {json_path.parent}")
    return 0


def _check_group(by: str, questions: list[EvalQuestion]) -> None:
    """``--by`` must be ``kind`` or a metadata key some question has (a misspelt key would group nothing)."""
    keys = sorted({k for q in questions for k in q.meta})
    if by != "kind" and by not in keys:
        raise _usage(f"--by {by}: no question has that key; use kind" + (f" or one of {', '.join(keys)}"
                                                                        if keys else ""))


def _single_kb(questions: list[EvalQuestion]) -> str:
    kbs = {q.kb for q in questions if q.kb}
    if len(kbs) != 1:
        raise _usage("pass --kb NAME (the questions name " + (", ".join(sorted(kbs)) or "no knowledge base") + ")")
    return kbs.pop()


def _kb_generation(settings: Settings, kb: str) -> int:
    from sift.catalog import get_serving_kb
    from sift.cli.common import open_existing

    return get_serving_kb(open_existing(settings), kb, settings.tenant).generation


def _fused_retriever(settings: Settings, kb: str) -> tuple[Retrieve, Callable[[], None]]:
    """The fused retriever over the kb's serving generation, and the function that releases it."""
    try:
        from sift.embed import make_embedder
        from sift.retrievers.backend import make_index_cache
        from sift.retrievers.search import Searcher
    except ImportError as exc:
        raise SiftError("retrieval mode needs the fused retriever (retrievers.search.Searcher), which this "
                        "installation does not have; update sift") from exc
    from sift.db import open_database
    from sift.models import Filters

    engine = open_database(settings)
    searcher = Searcher(engine, make_index_cache(settings, engine), make_embedder(settings))
    filters = Filters(kb=kb, tenant=settings.tenant)

    def retrieve(question: EvalQuestion, k: int) -> list[Hit]:
        return searcher.search(question.query, filters, k=k).hits

    return retrieve, searcher.close


def _warm_up(retrieve: Retrieve, questions: list[EvalQuestion], k: int) -> None:
    """Run one untimed query so index loading and model start-up do not land in the latency percentiles."""
    if not questions:
        return
    # A failure here is recorded against the question in the timed run, so it is not reported twice.
    with contextlib.suppress(Exception):
        retrieve(questions[0], k)


def _answerer(settings: Settings, kb: str) -> tuple[Callable[[EvalQuestion], Answer], Callable[[], None]]:
    """The graph's answer function, with its resources opened once for the whole run."""
    from sift.graph.ask import make_answerer

    answer_fn, close = make_answerer(settings, settings.tenant)

    def answer(question: EvalQuestion) -> Answer:
        return answer_fn(question.query, kb)

    return answer, close


class _ProgressBar:
    """A rich progress bar on a terminal; elsewhere a plain line every ~10 s with the count and the time left
    (``ProgressLines``). Yields the runner's per-question callback."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[QuestionResult], None] | None:
        if not sys.stderr.isatty():
            from sift.cli.progress import ProgressLines

            lines, answered = ProgressLines("eval"), [0]

            def line(_result: QuestionResult) -> None:
                answered[0] += 1
                lines.update("eval", answered[0], self.total, "questions")

            return line
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = bar = Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                  console=Console(stderr=True), transient=True)
        bar.start()
        task = bar.add_task("eval", total=self.total)
        return lambda _result: bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_summary(result: EvalRun, json_path: Path, md_path: Path) -> None:
    from sift.eval.report import KIND_COLUMNS_ANSWER, KIND_COLUMNS_RETRIEVAL

    agg = result.aggregate
    keys = KIND_COLUMNS_RETRIEVAL + (KIND_COLUMNS_ANSWER if result.mode == "answer" else ())
    degraded = f", {agg['degraded_answers']} degraded answers" if "degraded_answers" in agg else ""
    echo(f"{agg['questions']} questions, {agg['errors']} errors, {len(result.line_errors)} skipped lines{degraded}")
    for key in (*keys, "latency_p50_ms", "latency_p95_ms"):
        value = agg.get(key)
        echo(f"  {key:<20} {'–' if value is None else f'{value:.3f}'}")
    echo(f"reports: {escape(json_path)}  {escape(md_path)}")
