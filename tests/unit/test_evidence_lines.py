"""Which lines a hit's evidence covers (``graph.retrieval.whole_section``): a chunk of a short documentation
section brings the whole section; anything else, its own lines."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from sift.graph.retrieval import WHOLE_SECTION_LINES, whole_section
from sift.models import Hit


def _hit(kind: str, start: int, end: int) -> Hit:
    return Hit(chunk_id=1, node_id=2, path="README.md", start_line=start, end_line=end, kind=kind, name="Usage",
               score=1.0, channel="bm25", rank=1)


def _node(kind: str, start: int, end: int) -> Any:
    return SimpleNamespace(kind=kind, start_line=start, end_line=end)


SHORT_END = 100 + WHOLE_SECTION_LINES - 1  # a section of exactly WHOLE_SECTION_LINES lines from line 100


@pytest.mark.parametrize(("hit", "node", "expected"), [
    (_hit("doc", 100, 108), _node("heading", 100, 121), (100, 121)),  # its first chunk: the whole section
    (_hit("doc", 110, 121), _node("heading", 100, 121), (100, 121)),  # a later chunk: the whole section too
    (_hit("doc", 100, 108), _node("heading", 100, SHORT_END), (100, SHORT_END)),  # as long as it may be
    (_hit("doc", 100, 108), _node("heading", 100, SHORT_END + 1), (100, 108)),  # a long section: the chunk
    (_hit("doc", 100, 108), _node("document", 1, 20), (100, 108)),  # no heading: the chunk
    (_hit("doc", 90, 108), _node("heading", 100, 121), (90, 108)),  # a chunk outside the heading's lines
    (_hit("function", 100, 108), _node("function", 100, 121), (100, 108)),  # code keeps its own lines
    (_hit("doc", 100, 108), None, (100, 108)),  # no node recorded
])
def test_whole_section(hit: Hit, node: Any, expected: tuple[int, int]) -> None:
    assert whole_section(hit, node) == expected
