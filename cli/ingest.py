"""`sift ingest PATH --kb NAME`: build or update a knowledge base from a repository."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sift.cli import UsageError
from sift.cli.common import add_common, settings_from
from sift.cli.output import echo, escape, print_json

if TYPE_CHECKING:  # rich loads only on a terminal
    from types import TracebackType

    from rich.progress import Progress, TaskID

    from sift.config import Settings

EXAMPLE = "example: sift ingest ~/src/myproject --kb myproject"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ingest command."""
    p = sub.add_parser("ingest", help="ingest a repository into a knowledge base", description=__doc__, epilog=EXAMPLE)
    p.add_argument("path", type=Path, help="repository root to ingest")
    p.add_argument("--kb", required=True, help="knowledge base name")
    p.add_argument("--tenant", default=None, help="owning tenant (default: $SIFT_TENANT or 'default')")
    p.add_argument("--public", action="store_true", help="mark the knowledge base's chunks public")
    p.add_argument("--no-index", action="store_true", help="parse and chunk only; skip embeddings and indexes")
    p.add_argument("--max-file-bytes", type=int, default=None, help="skip files larger than this (default 1 MiB)")
    p.add_argument("--parser", choices=("auto", "llm", "off"), default="auto",
                   help="LLM boundary parser: auto = code with no grammar when an LLM is configured (default); "
                        "llm = force it (for --parser-glob files, else every code file); off = never")
    p.add_argument("--parser-glob", "--llm-parser-glob", dest="parser_globs", action="append", default=[],
                   metavar="GLOB", help="parse files matching GLOB (e.g. '*.foo') with the LLM; repeatable")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--job-id", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--claimed-by", default=None, help=argparse.SUPPRESS)
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run an ingest and print its summary."""
    from sift.errors import NotFound

    # Checked before the parsers and models load: a typo is answered at once.
    if not args.path.exists():
        raise NotFound(f"path {str(args.path)!r} does not exist")
    if not args.path.is_dir():
        raise NotFound(f"path {str(args.path)!r} is not a directory")
    settings = settings_from(args)
    if (args.parser == "llm" or args.parser_globs) and not (settings.llm_base_url and settings.llm_model):
        raise UsageError("the LLM parser needs a model: set SIFT_LLM_BASE_URL and SIFT_LLM_MODEL")
    if args.parser == "off" and args.parser_globs:
        raise UsageError("--parser-glob needs --parser llm or auto, not off")
    if not args.no_index:
        from sift.embed import check_embedder

        check_embedder(settings)  # a missing model is reported before the walk, not after the parsing
    from sift.ingest.parsers.llm import LLMParserOptions
    from sift.ingest.pipeline import ingest

    llm_parser = LLMParserOptions(mode=args.parser, globs=tuple(args.parser_globs))
    if args.max_file_bytes is not None:
        settings = settings.model_copy(update={"max_file_bytes": args.max_file_bytes})
    from sift.ingest.liveness import Interrupted, interrupt_on_signals

    try:
        # SIGTERM/SIGINT end the run through the pipeline, which records them on the job before exiting.
        with interrupt_on_signals() as stop, _Progress(args.json) as progress:
            summary = ingest(settings, args.path, args.kb, tenant=args.tenant, public=args.public,
                             build_index=not args.no_index, progress=progress, job_id=args.job_id,
                             llm_parser=llm_parser, stop=stop, claimed_by=args.claimed_by)
    except Interrupted as exc:
        echo(f"sift ingest: {exc}; the ingest stopped and its job is marked failed", file=sys.stderr)
        return 128 + signal.Signals[exc.signame].value
    totals = _totals(settings, summary)
    if args.json:
        print_json({**summary, "kb_totals": totals} if totals else summary)
    else:
        echo(format_summary(summary, totals))
        for failure in summary["failures"][:10]:
            echo(f"  failed to parse {escape(failure['path'])}: {escape(failure['error'])}")
        for skipped in summary.get("skipped_files", [])[:10]:
            echo(f"  skipped {escape(skipped['path'])}: {escape(skipped['detail'])}")
    return 0


def _totals(settings: Settings, summary: dict[str, Any]) -> dict[str, Any] | None:
    """Files, nodes and chunks the knowledge base's serving generation holds after the run (None without one)."""
    from sift.db import open_database
    from sift.ingest.inspect import show_kb

    if not summary.get("generation"):
        return None
    info = show_kb(open_database(settings), settings, summary["kb"], summary.get("tenant") or settings.tenant)
    return {key: info[key] for key in ("files", "nodes", "chunks")}


def format_summary(s: dict[str, Any], totals: dict[str, Any] | None = None) -> str:
    """The one-line human summary of an ingest run; ``totals`` are what the knowledge base holds afterwards."""
    skipped = ", ".join(f"{k} {v}" for k, v in s["skipped"].items()) or "none"
    held = f"{totals['files']} files, {totals['nodes']} nodes, {totals['chunks']} chunks" if totals else None
    took = f"checked {s['files']} files in {_duration(s['seconds'])}"
    if s["status"] == "unchanged":  # nothing was parsed or embedded: say what still serves, not "0 chunks"
        serving = f", which still serves {held}" if held else ""
        return (f"kb {escape(s['kb'])} unchanged: no file changed since generation {s['generation']}{serving} "
                f"({took}, skipped: {skipped})")
    line = (
        f"kb {escape(s['kb'])} generation {s['generation']} ({s['status']}): {s['files']} files "
        f"(+{s['added']} ~{s['changed']} -{s['deleted']} ={s['unchanged']}), parsed {s['nodes']} nodes into "
        f"{s['chunks']} chunks" + (f"; the kb now holds {held}" if held else "")
        + f"; skipped: {skipped}, failures {len(s['failures'])}, {_duration(s['seconds'])}"
        + _rate(s["added"] + s["changed"], s["seconds"], "files")
    )
    if s.get("searchable_seconds") is not None:
        line += f"; searchable by keyword after {_duration(s['searchable_seconds'])}"
    index = s.get("index")
    if index:
        line += f"; embedded {index.get('embedded', 0)} (cached {index.get('cached', 0)})"
    llm = s.get("llm_parser")
    if llm and llm["files"]:
        fallbacks = ", ".join(f"{k} {v}" for k, v in llm["fallbacks"].items()) or "none"
        cost = f" (cost {llm['cost']:.4f})" if llm["cost"] else ""
        line += (f"; llm parser {llm['files']} files: {llm['calls']} calls, {llm['tokens']} tokens{cost}, "
                 f"cached {llm['cached']}, dropped {llm['dropped_total']} items, flat-text fallbacks: {fallbacks}")
        if llm["budget_exhausted"]:
            line += f"; token budget {llm['token_budget']} spent, the remaining files are flat text"
    return line


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:02.0f} s"


def _rate(done: int, seconds: float, unit: str) -> str:
    """`` (12 files/s)`` with the digits a slow rate needs (never "0 files/s"); empty when nothing was done."""
    if done <= 0 or seconds <= 0:
        return ""
    rate = done / seconds
    digits = 0 if rate >= 10 else 1 if rate >= 1 else 2
    return f" ({rate:.{digits}f} {unit}/s)" if rate >= 0.01 else f" ({seconds / done:.0f} s per {unit[:-1]})"


#: What each ingest phase counts, and its label on the progress display.
_PHASES = {"walk": ("files", "walk (files found)"), "parse": ("files", "parse"),
           "model": ("", "load embedding model"), "embed": ("chunks", "embed"), "index": ("steps", "write indexes"),
           "searchable": ("", "searchable by keyword (BM25, smart, DocQL); embedding next")}


class _Progress:
    """A rich progress display on a terminal: one line per phase, with its total once known and its rate. Where
    stderr is no terminal (logs, CI, pipes) a plain line every ~10 s instead (``ProgressLines``), with no control
    sequences; none on a terminal with ``--json``.
    """

    def __init__(self, json: bool) -> None:
        self.terminal = sys.stderr.isatty()
        self.enabled = self.terminal and not json
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> Callable[[str, int, int | None], None] | None:
        if not self.terminal:
            from sift.cli.progress import ProgressLines

            lines = ProgressLines("ingest")

            def line(phase: str, done: int, total: int | None) -> None:
                unit, _ = _PHASES.get(phase, ("items", phase))
                lines.update(phase, done, total, unit)

            return line
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), console=Console(stderr=True), transient=True,
        )
        self._bar.__enter__()
        return self

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        bar = self._bar
        assert bar is not None  # called only through what __enter__ returned, which it opened
        unit, label = _PHASES.get(phase, ("items", phase))
        task = self._tasks.get(phase)
        if task is None:
            for earlier in self._tasks.values():  # a new phase means the earlier ones are over
                bar.stop_task(earlier)
            task = self._tasks[phase] = bar.add_task(label, total=total, rate="")
        elapsed = bar.tasks[task].elapsed or 1e-9
        rate = f"{done / elapsed:.0f} {unit}/s" if unit and done else ""
        bar.update(task, completed=done, total=total, rate=rate)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
