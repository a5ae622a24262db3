"""The one Parser interface every format implements."""

from __future__ import annotations

from typing import Protocol

from sift.models import DocumentTree


class Parser(Protocol):
    """Turns one file's text into a document tree. Must not do I/O; raises on input it cannot handle."""

    name: str

    def supports(self, language: str) -> bool:
        """Whether this parser handles files of ``language``."""
        ...

    def parse(self, path: str, text: str, language: str) -> DocumentTree:
        """Parse ``text`` (the file at repository-relative ``path``) into a tree; ``nodes[0]`` is the root."""
        ...
