"""`sift ingest PATH --kb NAME`: build or update a knowledge base from a repository."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from sift.cli import UsageError
from sift.cli.common import add_common, settings_from

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
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run an ingest and print its summary."""
    from sift.ingest.liveness import Interrupted, interrupt_on_signals
    from sift.ingest.parsers.llm import LLMParserOptions
    from sift.ingest.pipeline import ingest

    settings = settings_from(args)
    if (args.parser == "llm" or args.parser_globs) and not (settings.llm_base_url and settings.llm_model):
        raise UsageError("the LLM parser needs a model: set SIFT_LLM_BASE_URL and SIFT_LLM_MODEL")
    if args.parser == "off" and args.parser_globs:
        raise UsageError("--parser-glob needs --parser llm or auto, not off")
    llm_parser = LLMParserOptions(mode=args.parser, globs=tuple(args.parser_globs))
    if args.max_file_bytes is not None:
        settings = settings.model_copy(update={"max_file_bytes": args.max_file_bytes})
    if not args.path.exists():
        raise UsageError(f"path {str(args.path)!r} does not exist")
    if not args.path.is_dir():
        raise UsageError(f"path {str(args.path)!r} is not a directory")
    try:
        # SIGTERM/SIGINT end the run through the pipeline, which records them on the job before exiting.
        with interrupt_on_signals() as stop, _Progress(enabled=sys.stderr.isatty() and not args.json) as progress:
            summary = ingest(settings, args.path, args.kb, tenant=args.tenant, public=args.public,
                             build_index=not args.no_index, progress=progress, job_id=args.job_id,
                             llm_parser=llm_parser, stop=stop)
    except Interrupted as exc:
        print(f"sift ingest: {exc}; the ingest stopped and its job is marked failed", file=sys.stderr)
        return 128 + signal.Signals[exc.signame].value
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(format_summary(summary))
        for failure in summary["failures"][:10]:
            print(f"  failed to parse {failure['path']}: {failure['error']}")
    return 0


def format_summary(s: dict[str, Any]) -> str:
    """The one-line human summary of an ingest run."""
    skipped = ", ".join(f"{k} {v}" for k, v in s["skipped"].items()) or "none"
    secs = s["seconds"] or 1e-9
    line = (
        f"kb {s['kb']} generation {s['generation']} ({s['status']}): {s['files']} files "
        f"(+{s['added']} ~{s['changed']} -{s['deleted']} ={s['unchanged']}), {s['nodes']} nodes, "
        f"{s['chunks']} chunks, skipped: {skipped}, failures {len(s['failures'])}, {s['seconds']:.2f}s "
        f"({s['files'] / secs:.0f} files/s)"
    )
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


class _Progress:
    """A rich progress display on a terminal (files/s while parsing, chunks/s while embedding)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._t0 = time.perf_counter()

    def __enter__(self) -> _Progress | None:
        if not self.enabled:
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), transient=True,
        )
        self._bar.__enter__()
        return self

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        task = self._tasks.get(phase)
        if task is None:
            task = self._tasks[phase] = self._bar.add_task(phase, total=total, rate="")
        unit = "files" if phase == "parse" else "chunks"
        elapsed = self._bar.tasks[task].elapsed or 1e-9
        self._bar.update(task, completed=done, total=total, rate=f"{done / elapsed:.0f} {unit}/s")

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
