"""Naming and grouping helpers of evidence selection: last names, whole sections, module listings, and the
coverage floor below which nothing is worth citing."""

from __future__ import annotations

import pytest

from sift.graph.models import Evidence, Plan
from sift.graph.writer.selection import (
    AGREED_COVERAGE,
    MIN_COVERAGE,
    MODULE_CHANNEL,
    between,
    coverage_floor,
    is_listing,
    last_name,
    select_evidence,
    whole_name,
)


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


def _led(*top_in: str) -> Evidence:
    return ev("load").model_copy(update={"top_in": list(top_in)})


@pytest.mark.parametrize(("first", "channels", "expected"), [
    (_led("bm25", "smart", "vector"), ["bm25", "vector", "smart"], AGREED_COVERAGE),  # every channel agrees
    (_led("bm25", "vector"), ["bm25", "vector", "smart"], MIN_COVERAGE),  # two of three
    (_led("bm25", "vector"), ["bm25", "vector"], AGREED_COVERAGE),  # every channel the plan ran
    (_led(), ["bm25", "vector", "smart"], MIN_COVERAGE),
    (_led("bm25", "smart", "vector"), [], MIN_COVERAGE),  # no search channel ran: no agreement to read
])
def test_coverage_floor(first: Evidence, channels: list[str], expected: float) -> None:
    assert coverage_floor(Plan(standalone="q", channels=channels), first) == expected


def test_agreed_first_item_is_cited_with_less_coverage() -> None:
    # Three of the question's four words are in no text: the right place covers a quarter of it.
    plan = Plan(standalone="load settings quietly somehow", channels=["bm25", "vector", "smart"])
    idf = {"load": 1.0, "settings": 1.0, "quietly": 1.0, "somehow": 1.0}
    item = ev("load", channels=("bm25",)).model_copy(update={"text": "def load(path):\n    return read(path)\n"})
    assert AGREED_COVERAGE <= 0.25 < MIN_COVERAGE
    assert select_evidence(plan, [item], idf) == []
    agreed = item.model_copy(update={"top_in": ["bm25", "smart", "vector"]})
    assert select_evidence(plan, [agreed], idf) == [agreed]


def _at(symbol: str, start: int, end: int, path: str = "pkg/m.py", kind: str = "function",
        module_code: bool = False) -> Evidence:
    return ev(symbol, path=path, kind=kind, module_code=module_code).model_copy(
        update={"start_line": start, "end_line": end})


_INT, _FLOAT, _STR = _at("to_int", 10, 20), _at("to_float", 22, 30), _at("to_str", 32, 40)


@pytest.mark.parametrize(("chosen", "evidence", "limit", "expected"), [
    ([_INT, _STR], [_INT, _STR, _FLOAT], 3, ["to_float"]),  # between two listed siblings: listed too
    ([_INT, _FLOAT], [_INT, _FLOAT, _STR], 3, []),  # after the last one: nothing says it belongs
    ([_INT, _STR], [_INT, _STR, _at("to_float", 22, 30, path="pkg/other.py")], 3, []),  # another file
    ([_INT, _STR], [_INT, _STR, _at("Numbers.check", 22, 30)], 3, []),  # a method: not their sibling
    ([_INT, _STR], [_INT, _STR, _at("m.py", 22, 30, module_code=True)], 3, []),  # module code is no item
    ([_INT, _STR], [_INT, _STR, _at("_to_float", 22, 30)], 3, []),  # private plumbing
    ([_INT, _STR], [_INT, _STR, _FLOAT], 0, []),  # the list is full
    ([_INT, _at("Guide > Numbers", 1, 9, path="README.md", kind="doc")], [_FLOAT], 3, []),  # not one file's code
    ([_INT], [_INT, _FLOAT], 3, []),  # one item is no enumeration
])
def test_between(chosen: list[Evidence], evidence: list[Evidence], limit: int, expected: list[str]) -> None:
    assert [e.symbol for e in between(chosen, evidence, limit)] == expected
