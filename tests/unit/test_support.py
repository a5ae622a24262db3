"""Naming and grouping helpers of evidence selection: last names, whole sections, module listings."""

from __future__ import annotations

import pytest

from sift.graph.state import Evidence
from sift.graph.support import MODULE_CHANNEL, is_listing, last_name, whole_name


def ev(symbol: str, path: str = "pkg/m.py", kind: str = "function", channels: tuple[str, ...] = (),
       module_code: bool = False, n: int = 1) -> Evidence:
    return Evidence(id=n, path=path, start_line=1, end_line=2, kind=kind, name=symbol, symbol=symbol, score=1.0,
                    channels=list(channels), module_code=module_code)


@pytest.mark.parametrize(("symbol", "kind", "expected"), [
    ("Schema.Meta", "class", "Meta"),
    ("load", "function", "load"),
    ("Guide > Install > Extras", "doc", "Extras"),  # a heading path: the innermost heading
    ("Guide > config.toml", "doc", "toml"),  # a dot in a heading still splits
    ("", "function", ""),
])
def test_last_name(symbol: str, kind: str, expected: str) -> None:
    assert last_name(ev(symbol, kind=kind)) == expected


@pytest.mark.parametrize(("a", "b", "same"), [
    (ev("Schema.load"), ev("Schema.load"), True),  # two parts of one definition
    (ev("Schema.load"), ev("Schema.dump"), False),
    (ev("m.py", module_code=True), ev("m.py", module_code=False), False),  # module code is not the file's symbol
])
def test_whole_name(a: Evidence, b: Evidence, same: bool) -> None:
    assert (whole_name(a) == whole_name(b)) is same


@pytest.mark.parametrize(("chosen", "expected"), [
    ([ev("a", channels=(MODULE_CHANNEL,), n=1), ev("b", n=2), ev("c", n=3)], True),
    ([ev("a", channels=("bm25",), n=1), ev("b", n=2), ev("c", n=3)], False),  # not listed by the fuse node
    ([ev("a", channels=(MODULE_CHANNEL,), n=1), ev("b", channels=(MODULE_CHANNEL,), n=2)], False),  # two: no list
    ([], False),
])
def test_is_listing(chosen: list[Evidence], expected: bool) -> None:
    assert is_listing(chosen) is expected
