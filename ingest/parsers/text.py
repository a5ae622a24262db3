"""Flat documents: the fallback for any text file, and for files whose own parser failed."""

from __future__ import annotations

from pathlib import PurePosixPath

from sift.models import DocumentTree, NodeKind, ParsedNode, SourceType
from sift.text import line_count

__all__ = ["TextParser", "line_count"]


class TextParser:
    """One root node spanning the whole file."""

    name = "text"

    def supports(self, language: str) -> bool:
        """Any language: this is the fallback."""
        return True

    def parse(self, path: str, text: str, language: str, source_type: SourceType = SourceType.TEXT) -> DocumentTree:
        """A single-node tree covering every line."""
        kind = NodeKind.FILE if source_type == SourceType.CODE else NodeKind.DOCUMENT
        root = ParsedNode(
            index=0,
            kind=kind,
            name=PurePosixPath(path).name,
            qualified_name=path,
            start_line=1,
            end_line=max(1, line_count(text)),
        )
        return DocumentTree(path=path, language=language, source_type=source_type, nodes=[root], parser=self.name)
