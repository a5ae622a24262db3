"""Parsing and chunking files in a child process, so that one file's parse is bounded and can be stopped.

A parse can run long without returning to Python: tree-sitter matches its queries in C (300 KB of nested calls,
``f(f(f(…)))``, kept ``QueryCursor.matches`` busy for over two minutes), and the Markdown and reStructuredText
parsers are pure Python loops over the text. Neither a signal handler nor a deadline checked inside the process
can stop them, so the ingest's process hands each file to a child and waits for it under three bounds:

- time: at most ``ParseBounds.seconds`` of wall clock per file; then the child is killed (a new one takes the next
  file) and the file is skipped with :class:`ParseLimitExceeded`;
- memory: before each file the child's address space may grow by at most ``ParseBounds.max_mb`` (``RLIMIT_AS``);
  an allocation beyond it fails (a ``MemoryError``, or a parser that aborts) and the file is skipped;
- signals: the child ignores SIGINT and SIGTERM; the parent checks its :class:`StopRequest` every ``POLL_S`` while
  it waits and kills the child at once, so the run stops within a fraction of a second, not after the file.

A child whose parent was SIGKILLed mid-file stops by itself: its CPU time is limited (``RLIMIT_CPU``) to what it
had used plus twice the per-file bound; between files it waits on the pipe and exits when the parent is gone.
Children are forked from a fork server with the parsers already imported, so starting one costs milliseconds.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, NamedTuple

from sift.ingest.chunk import ChunkLimits, chunk_tree
from sift.ingest.liveness import StopRequest
from sift.ingest.walk import WalkStats
from sift.languages import classify
from sift.models import ChunkDraft, DocumentTree, SourceType
from sift.text import split_lines

if TYPE_CHECKING:  # the parsers load in the child (and with the registry), not with this module
    from sift.ingest.parsers import ParserRegistry

log = logging.getLogger(__name__)

#: Seconds between the parent's looks at its stop request and the clock while a file is parsed.
POLL_S = 0.05
#: Skip reason (``summary["skipped"]``) of a file whose parse went past a bound.
SKIP_PARSE_LIMIT = "parse_limit"
#: At most this many skipped files are listed in the summary (all are counted).
MAX_LISTED = 1000


class ParseLimitExceeded(Exception):
    """One file's parse went past the time or memory bound (the file is skipped; the run goes on)."""


@dataclass(frozen=True, slots=True)
class ParseBounds:
    """Per-file bounds: wall-clock seconds, and megabytes the parse may add to the child's address space."""

    seconds: float = 30.0
    max_mb: int = 1024


class Parsed(NamedTuple):
    """A parsed file: its tree, its own parser's error (the tree is then flat text) and its chunks."""

    tree: DocumentTree
    error: str | None
    drafts: list[ChunkDraft]


def parse_and_chunk(registry: ParserRegistry, limits: ChunkLimits, path: str, text: str, language: str,
                    source_type: SourceType) -> Parsed:
    """Parse one file with ``registry`` and cut it into chunks."""
    tree, error = registry.parse(path, text, language, source_type)
    return Parsed(tree, error, chunk_tree(tree, split_lines(text), limits))


def record_skip(walk_stats: WalkStats, summary: dict[str, Any], path: str, reason: str) -> None:
    """Count a file skipped for ``reason`` under ``parse_limit`` and list it in ``summary["skipped_files"]``."""
    log.info("skipped %s: %s", path, reason)
    walk_stats.skip(path, SKIP_PARSE_LIMIT)
    listed = summary.setdefault("skipped_files", [])
    if len(listed) < MAX_LISTED:
        listed.append({"path": path, "reason": SKIP_PARSE_LIMIT, "detail": reason})


def _context() -> ForkServerContext:
    ctx = multiprocessing.get_context("forkserver")
    assert isinstance(ctx, ForkServerContext)
    # Imported once by the fork server; every child starts with the parsers loaded.
    ctx.set_forkserver_preload(["sift.ingest.parse_worker", "sift.ingest.parsers", "sift.ingest.parsers.code",
                                "sift.ingest.parsers.markdown", "sift.ingest.parsers.rst"])
    return ctx


class ParseWorker:
    """The parent's side: parses files in a child process under ``bounds``; use as a context manager."""

    def __init__(self, limits: ChunkLimits, bounds: ParseBounds, stop: StopRequest | None = None) -> None:
        self.limits = limits
        self.bounds = bounds
        self.stop = stop or StopRequest()
        self._proc: BaseProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def parse_file(self, registry: ParserRegistry, path: str, text: str) -> Parsed:
        """Parse and chunk a file: in the child, or here when the LLM parser reads it (network-bound, under the
        LLM client's own time limits)."""
        language, source_type = classify(path)
        if registry.uses_llm(path, language, source_type):
            return parse_and_chunk(registry, self.limits, path, text, language, source_type)
        return self.parse(path, text, language, source_type)

    def parse(self, path: str, text: str, language: str, source_type: SourceType) -> Parsed:
        """Parse and chunk one file in the child.

        Raises ParseLimitExceeded when the file went past a bound, and ``Interrupted`` (from the stop request) at
        once when a signal asked the run to stop; in both cases the child is killed first.
        """
        proc, conn = self._started()
        deadline = time.monotonic() + self.bounds.seconds
        try:
            conn.send((path, text, language, source_type))
            while not conn.poll(POLL_S):
                if self.stop.signame is not None:
                    self.close()
                    self.stop.check()
                if time.monotonic() > deadline:
                    self.close()
                    raise ParseLimitExceeded(f"parsing it took longer than {self.bounds.seconds:g}s")
                if not proc.is_alive():
                    break
            status, payload = conn.recv()
        except (EOFError, OSError) as exc:
            proc.join(1.0)
            ended = _ended(proc.exitcode)
            self.close()
            raise ParseLimitExceeded(f"the parsing process died ({ended}) while parsing it: over the "
                                     f"{self.bounds.max_mb} MB memory bound, or a parser crash") from exc
        if status == "memory":
            raise ParseLimitExceeded(f"parsing it needed more than {self.bounds.max_mb} MB of memory")
        if status == "error":  # a bug in a parser or the chunker that the registry did not catch
            raise RuntimeError(f"parsing {path} failed: {payload}")
        return Parsed(*payload)

    def close(self) -> None:
        """Kill the child (if any); the next parse starts a new one."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is not None:
            if proc.is_alive():
                proc.kill()
            proc.join(5.0)
            proc.close()

    def _started(self) -> tuple[BaseProcess, Connection]:
        if self._proc is None or self._conn is None or not self._proc.is_alive():
            self.close()
            ctx = _context()
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=serve, args=(child, self.limits, self.bounds), daemon=True,
                               name="sift-parse")
            proc.start()
            child.close()
            self._proc, self._conn = proc, parent
        return self._proc, self._conn


def _ended(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit status"
    if exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def serve(conn: Connection, limits: ChunkLimits, bounds: ParseBounds) -> None:
    """The child's loop: receive a file, parse and chunk it under the bounds, send the result back."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # the parent decides when to stop, and kills this process
    from sift.ingest.parsers import ParserRegistry

    registry = ParserRegistry()
    while True:
        try:
            path, text, language, source_type = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        _limit(bounds)
        try:
            reply: tuple[str, Any] = ("ok", tuple(parse_and_chunk(registry, limits, path, text, language,
                                                                  source_type)))
        except MemoryError:
            reply = ("memory", None)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
            reply = ("error", f"{type(exc).__name__}: {exc}")
        del text
        conn.send(reply)


def _limit(bounds: ParseBounds) -> None:
    """Limit this process's address space and CPU time for the next file (soft limits, raised again later)."""
    try:
        with open("/proc/self/statm") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # no /proc: no memory bound but the machine's
        size = None
    if size is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = size + bounds.max_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    cpu = int(usage.ru_utime + usage.ru_stime + 2 * bounds.seconds) + 5
    resource.setrlimit(resource.RLIMIT_CPU,
                       (cpu if cpu_hard == resource.RLIM_INFINITY else min(cpu, cpu_hard), cpu_hard))
