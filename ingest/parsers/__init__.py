"""Parser registry: picks the parser for a file, and falls back to flat text when that parser fails."""

from __future__ import annotations

import logging

from ingest.parsers.base import Parser
from ingest.parsers.text import TextParser
from sift.models import DocumentTree, SourceType

log = logging.getLogger(__name__)


class ParserRegistry:
    """Holds one instance of each parser (tree-sitter parsers are reused across files)."""

    def __init__(self, parsers: list[Parser] | None = None) -> None:
        if parsers is None:
            from ingest.parsers.code import CodeParser
            from ingest.parsers.markdown import MarkdownParser
            from ingest.parsers.rst import RstParser

            parsers = [MarkdownParser(), RstParser(), CodeParser()]
        self.parsers = parsers
        self.text = TextParser()

    def parse(self, path: str, text: str, language: str, source_type: SourceType) -> tuple[DocumentTree, str | None]:
        """Parse a file; returns the tree and, if its own parser failed, the error (the tree is then flat text)."""
        for parser in self.parsers:
            if parser.supports(language):
                try:
                    return parser.parse(path, text, language), None
                except Exception as exc:  # noqa: BLE001 - one bad file must not end the run
                    log.warning("parser %s failed on %s: %s", parser.name, path, exc)
                    tree = self.text.parse(path, text, language, source_type)
                    return tree, f"{parser.name}: {type(exc).__name__}: {exc}"
        return self.text.parse(path, text, language, source_type), None
