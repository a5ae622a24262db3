"""Parser registry: picks the parser for a file, and falls back to flat text when that parser fails."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from sift.ingest.parsers.base import Parser
from sift.ingest.parsers.llm import BudgetExhausted, LLMBoundaryParser
from sift.ingest.parsers.text import TextParser
from sift.models import DocumentTree, SourceType

log = logging.getLogger(__name__)
F = TypeVar("F")


class ParserRegistry:
    """Holds one instance of each parser (tree-sitter parsers are reused across files).

    With ``llm``, code files no parser supports (and files the user forces) go to the LLM boundary parser.
    """

    def __init__(self, parsers: list[Parser] | None = None, llm: LLMBoundaryParser | None = None) -> None:
        if parsers is None:
            from sift.ingest.parsers.code import CodeParser
            from sift.ingest.parsers.markdown import MarkdownParser
            from sift.ingest.parsers.rst import RstParser

            parsers = [MarkdownParser(), RstParser(), CodeParser()]
        self.parsers = parsers
        self.text = TextParser()
        self.llm = llm

    def uses_llm(self, path: str, language: str, source_type: SourceType) -> bool:
        """Whether ``path`` goes to the LLM parser in this run."""
        if self.llm is None:
            return False
        return self.llm.wants(path, source_type, any(p.supports(language) for p in self.parsers))

    def prefetch(self, files: Iterable[F], wanted: Callable[[F], bool]) -> Iterator[F] | Iterable[F]:
        """``files`` unchanged, but LLM-parsed ones among those ``wanted`` are parsed ahead, concurrently."""
        if self.llm is None:
            return files
        from sift.languages import classify

        def language_of(f: F) -> str | None:
            path = f.path  # type: ignore[attr-defined]
            language, source_type = classify(path)
            return language if wanted(f) and self.uses_llm(path, language, source_type) else None

        return self.llm.prefetch(files, language_of)

    def parse(self, path: str, text: str, language: str, source_type: SourceType) -> tuple[DocumentTree, str | None]:
        """Parse a file; returns the tree and, if its own parser failed, the error (the tree is then flat text)."""
        if self.llm is not None and self.uses_llm(path, language, source_type):
            return self._try(self.llm, path, text, language, source_type)
        for parser in self.parsers:
            if parser.supports(language):
                return self._try(parser, path, text, language, source_type)
        return self.text.parse(path, text, language, source_type), None

    def _try(self, parser: Parser, path: str, text: str, language: str,
             source_type: SourceType) -> tuple[DocumentTree, str | None]:
        try:
            return parser.parse(path, text, language), None
        except BudgetExhausted:  # not a failure of the file: the run chose to stop spending
            return self.text.parse(path, text, language, source_type), None
        except MemoryError:  # the file is over the parse's memory bound (parse_worker), not malformed
            raise
        except Exception as exc:  # noqa: BLE001 - one bad file must not end the run
            log.warning("parser %s failed on %s: %s", parser.name, path, exc)
            tree = self.text.parse(path, text, language, source_type)
            return tree, f"{parser.name}: {type(exc).__name__}: {exc}"
