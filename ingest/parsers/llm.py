"""LLM boundary parser: functions and classes of files no tree-sitter grammar covers, found by a chat model.

The model sees line-numbered text (long files in overlapping windows, with the definitions still open at each
window's first line) and answers ``{"items": [{name, kind, start_line, end_line, parent?}]}``. Nothing it says is
trusted: ``boundaries.validate_items`` keeps only items whose range lies inside the file, whose name appears on or near
their start line and whose nesting is consistent; the rest are dropped and counted. An answer that never parses
(after retries), a timeout or a spent token budget leaves the file to the registry's flat-text fallback.
Validated answers are cached by (model, prompt version, content hash), so re-ingesting unchanged text is free.

Unlike the other parsers this one does I/O (the model, the cache); the registry runs it ahead of the pipeline in
a bounded thread pool (:meth:`LLMBoundaryParser.prefetch`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from sift.chat import is_transient, make_chat_model
from sift.ingest.chunk import text_hash
from sift.ingest.parsers.boundaries import (
    RESPONSE_FORMAT,
    Boundary,
    BoundaryItem,
    InvalidAnswer,
    build_tree,
    number_lines,
    parse_answer,
    validate_items,
    windows,
)
from sift.models import DocumentTree, SourceType
from sift.text import split_lines

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from sqlalchemy import Engine

    from sift.config import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

PROMPT_VERSION = "b1"
_SYSTEM = (
    "You find the definitions in source code. For every class, interface, struct, enum, trait, function and "
    "method that starts in the excerpt (or is listed as still open), return its name as written, its kind, and "
    "its first and last line using the line numbers shown (the first line includes decorators or attributes). "
    "Give `parent` as the name of the enclosing definition when there is one. If a definition continues past the "
    "excerpt, use the excerpt's last line as end_line. Answer with JSON only: "
    '{"items": [{"name": str, "kind": str, "start_line": int, "end_line": int, "parent": str | null}]}.'
)


class BudgetExhausted(RuntimeError):
    """The run's token budget is spent; the file stays flat text."""


@dataclass
class LLMParserStats:
    """What the LLM parser did in one run (goes into the ingest summary under ``llm_parser``)."""

    model: str = ""
    files: int = 0
    calls: int = 0
    retries: int = 0
    tokens: int = 0
    cached: int = 0
    items: int = 0
    token_budget: int = 0
    budget_exhausted: bool = False
    cost_per_1k_tokens: float = 0.0
    dropped: Counter[str] = field(default_factory=Counter)
    fallbacks: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary; ``cost`` is tokens × the configured price (0 when none is set)."""
        return {"model": self.model, "files": self.files, "calls": self.calls, "retries": self.retries,
                "tokens": self.tokens, "cost": round(self.tokens / 1000 * self.cost_per_1k_tokens, 6),
                "cached": self.cached, "items": self.items, "dropped": dict(sorted(self.dropped.items())),
                "dropped_total": sum(self.dropped.values()), "fallbacks": dict(sorted(self.fallbacks.items())),
                "token_budget": self.token_budget, "budget_exhausted": self.budget_exhausted}


@dataclass(frozen=True)
class LLMParserOptions:
    """How a run uses the LLM parser.

    ``mode``: ``auto`` parses code files no grammar covers (and files matching ``globs``); ``llm`` forces it for
    ``globs`` (every code file when there are none); ``off`` never uses it. ``concurrency``, ``token_budget``
    (0 = none) and ``cost_per_1k_tokens`` (0: the summary reports tokens only) left as None take the settings'
    ``llm_parser_*`` values in :func:`make_llm_parser`, or 4, 1,000,000 and 0.
    """

    mode: str = "auto"
    globs: tuple[str, ...] = ()
    concurrency: int | None = None
    token_budget: int | None = None
    window_lines: int = 400
    overlap_lines: int = 40
    retries: int = 2
    backoff_s: float = 0.5
    cost_per_1k_tokens: float | None = None


class LLMBoundaryParser:
    """Asks a chat model (``ChatOpenAI``-like: ``invoke(messages, **kw)``) for a file's definitions."""

    name = "llm"

    def __init__(self, model: BaseChatModel, model_id: str, *, engine: Engine | None = None,
                 options: LLMParserOptions = LLMParserOptions()) -> None:
        self.model, self.model_id, self.engine, self.options = model, model_id, engine, options
        self.concurrency = max(1, options.concurrency or 4)
        budget = 1_000_000 if options.token_budget is None else options.token_budget
        cost = options.cost_per_1k_tokens or 0.0
        self.stats = LLMParserStats(model=model_id, token_budget=max(0, budget), cost_per_1k_tokens=cost)
        self._lock = threading.Lock()
        self._reserved = 0
        self._pending: dict[tuple[str, str], Future[list[Boundary]]] = {}
        self._memory: dict[str, list[Boundary]] = {}

    def supports(self, language: str) -> bool:
        """Any language: the registry decides when to use it (see :meth:`wants`)."""
        return True

    def wants(self, path: str, source_type: SourceType, has_grammar: bool) -> bool:
        """Whether this run parses ``path`` with the model rather than a grammar or flat text."""
        o = self.options
        if o.globs and any(fnmatchcase(path, g) or fnmatchcase(PurePosixPath(path).name, g) for g in o.globs):
            return True
        code = source_type == SourceType.CODE
        return code and (not has_grammar or (o.mode == "llm" and not o.globs))

    def parse(self, path: str, text: str, language: str) -> DocumentTree:
        """The file's tree from validated model output; raises when the answer is unusable or the budget spent."""
        with self._lock:
            future = self._pending.pop((path, text_hash(text)), None)
        bounds = future.result() if future is not None else self.boundaries(path, text, language)
        return build_tree(path, language, text, bounds, parser=self.name)

    def prefetch(self, files: Iterable[T], language_of: Callable[[T], str | None]) -> Iterator[T]:
        """Yield ``files`` in order while up to ``concurrency`` of them (those with a language) are parsed ahead."""
        ahead: deque[tuple[T, bool]] = deque()
        in_flight = 0
        pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="llm-parse")
        try:
            for f in files:
                language = language_of(f)
                path, text = f.path, f.text  # type: ignore[attr-defined]
                if language is not None:
                    with self._lock:
                        self._pending[(path, text_hash(text))] = pool.submit(self.boundaries, path, text, language)
                    in_flight += 1
                ahead.append((f, language is not None))
                while in_flight > 2 * self.concurrency or len(ahead) > 500:
                    item, queued = ahead.popleft()
                    in_flight -= queued
                    yield item
            while ahead:
                yield ahead.popleft()[0]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            with self._lock:
                self._pending.clear()

    def boundaries(self, path: str, text: str, language: str) -> list[Boundary]:
        """Validated definitions of one file, from the cache or the model (which may raise)."""
        digest, lines = text_hash(text), split_lines(text)
        with self._lock:
            self.stats.files += 1
        if not any(line.strip() for line in lines):
            return []
        cached = self._cache_get(digest)
        if cached is not None:
            with self._lock:
                self.stats.cached += 1
                self.stats.items += len(cached)
            return cached
        try:
            items, pre_dropped, tokens = self._ask(path, language, lines)
            bounds, dropped = validate_items(items, lines)
            dropped.update(pre_dropped)
            with self._lock:
                self.stats.dropped.update(dropped)
            if items and not bounds:
                raise InvalidAnswer(f"all {len(items)} items failed validation")
        except Exception as exc:
            reason = ("budget" if isinstance(exc, BudgetExhausted) else "invalid_answer"
                      if isinstance(exc, InvalidAnswer) else "timeout" if _is_timeout(exc) else "error")
            with self._lock:
                self.stats.fallbacks[reason] += 1
            raise
        with self._lock:
            self.stats.items += len(bounds)
        self._cache_put(digest, bounds, dropped, tokens)
        return bounds

    def _ask(self, path: str, language: str, lines: Sequence[str]) -> tuple[list[BoundaryItem], Counter[str], int]:
        merged: dict[tuple[str, int], BoundaryItem] = {}
        dropped: Counter[str] = Counter()
        tokens = 0
        for a, b in windows(len(lines), self.options.window_lines, self.options.overlap_lines):
            still_open = [it for it in merged.values() if it.start_line < a <= it.end_line][-10:]
            items, bad, used = self._call(_user_prompt(path, language, lines, a, b, still_open))
            tokens += used
            dropped["malformed"] += bad
            open_keys = {(it.name, it.start_line) for it in still_open}
            current: dict[tuple[str, int], BoundaryItem] = {}
            for it in items:
                key = (it.name, it.start_line)
                inside = a <= it.start_line <= b or not 1 <= it.start_line <= len(lines)
                if not (inside or key in open_keys):
                    dropped["outside_excerpt"] += 1
                elif key in current:
                    dropped["duplicate"] += 1
                else:
                    current[key] = it
            merged.update(current)  # a later window saw more of a definition than an earlier one
        return list(merged.values()), +dropped, tokens

    def _call(self, prompt: str) -> tuple[list[BoundaryItem], int, int]:
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [SystemMessage(_SYSTEM), HumanMessage(prompt)]
        estimate = len(prompt) // 3 + 300
        for attempt in range(self.options.retries + 1):
            if attempt:
                with self._lock:
                    self.stats.retries += 1
                time.sleep(self.options.backoff_s * 2 ** (attempt - 1))
            self._reserve(estimate)
            used = 0
            try:
                reply = self.model.invoke(messages, response_format=RESPONSE_FORMAT)
                used = int((getattr(reply, "usage_metadata", None) or {}).get("total_tokens") or 0)
                items, bad = parse_answer(reply.content)
                return items, bad, used
            except Exception as exc:
                if attempt >= self.options.retries or not _retryable(exc):
                    raise
                log.warning("llm parser call failed (%s); retry %d", type(exc).__name__, attempt + 1)
            finally:
                with self._lock:
                    self._reserved -= estimate
                    self.stats.tokens += used
        raise AssertionError("unreachable")

    def _reserve(self, estimate: int) -> None:
        with self._lock:
            budget = self.stats.token_budget
            if self.stats.budget_exhausted or (budget and self.stats.tokens + self._reserved + estimate > budget):
                self.stats.budget_exhausted = True
                raise BudgetExhausted(f"token budget of {budget} spent ({self.stats.tokens} used)")
            self._reserved += estimate
            self.stats.calls += 1

    def _cache_get(self, digest: str) -> list[Boundary] | None:
        if digest in self._memory or self.engine is None:
            return self._memory.get(digest)
        from sqlalchemy import select

        from sift.db.llm_tables import LlmParseCache as C

        with self.engine.connect() as conn:
            rows = conn.execute(select(C.items).where(C.model_id == self.model_id, C.prompt_version == PROMPT_VERSION,
                                                      C.content_hash == digest)).scalar()
        return None if rows is None else [Boundary(*r) for r in rows]

    def _cache_put(self, digest: str, bounds: list[Boundary], dropped: Counter[str], tokens: int) -> None:
        self._memory[digest] = bounds
        if self.engine is None:
            return
        from sqlalchemy import insert
        from sqlalchemy.exc import IntegrityError

        from sift.db.llm_tables import LlmParseCache as C

        rows = [[b.name, b.kind, b.start_line, b.end_line, b.parent] for b in bounds]
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(C).values(model_id=self.model_id, prompt_version=PROMPT_VERSION,
                                              content_hash=digest, items=rows, dropped=dict(dropped), tokens=tokens))
        except IntegrityError:  # the same text parsed twice at once: the first row stands
            pass


def make_llm_parser(settings: Settings, engine: Engine | None = None,
                    options: LLMParserOptions | None = None) -> LLMBoundaryParser | None:
    """The run's LLM parser, or None when the mode is ``off`` or no LLM is configured (``llm`` mode then raises)."""
    options = options or LLMParserOptions()
    options = replace(
        options,
        concurrency=options.concurrency or settings.llm_parser_concurrency,
        token_budget=settings.llm_parser_token_budget if options.token_budget is None else options.token_budget,
        cost_per_1k_tokens=options.cost_per_1k_tokens or settings.llm_parser_cost_per_1k,
    )
    if options.mode == "off":
        return None
    model = make_chat_model(settings)  # None unless SIFT_LLM_BASE_URL and SIFT_LLM_MODEL are both set
    if model is None or not settings.llm_model:
        if options.mode == "llm":
            raise ValueError("the LLM parser needs a model: set SIFT_LLM_BASE_URL and SIFT_LLM_MODEL")
        return None
    return LLMBoundaryParser(model, settings.llm_model, engine=engine, options=options)


def _user_prompt(path: str, language: str, lines: Sequence[str], a: int, b: int,
                 still_open: Sequence[BoundaryItem]) -> str:
    head = f"File: {path} (language: {language}, {len(lines)} lines). Excerpt: lines {a}-{b}."
    if still_open:
        head += "\nStill open at line {}: {}.".format(
            a, "; ".join(f"{it.name} ({it.kind}, from line {it.start_line})" for it in still_open))
    return f"{head}\n\n{number_lines(lines, a, b)}"


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__


def _retryable(exc: Exception) -> bool:
    return isinstance(exc, InvalidAnswer) or _is_timeout(exc) or is_transient(exc)
