"""Pure parts of the LLM boundary parser: windows, answer parsing, validation, tree building, routing."""

from __future__ import annotations

import pytest

from sift.ingest.parsers import ParserRegistry
from sift.ingest.parsers.boundaries import (
    Boundary,
    BoundaryItem,
    InvalidAnswer,
    build_tree,
    name_near,
    number_lines,
    parse_answer,
    validate_items,
    windows,
)
from sift.ingest.parsers.llm import (
    BudgetExhausted,
    LLMBoundaryParser,
    LLMParserOptions,
)
from sift.models import SourceType

SRC = [
    "import x",  # 1
    "",  # 2
    "@decorator",  # 3
    "@other(1)",  # 4
    "class Box:",  # 5
    "    def open(self):",  # 6
    "        return 1",  # 7
    "",  # 8
    "    def close(self):",  # 9
    "        return 2",  # 10
    "",  # 11
    "def free():",  # 12
    "    return 3",  # 13
]


def _item(name: str, kind: str, start: int, end: int, parent: str | None = None) -> BoundaryItem:
    return BoundaryItem(name=name, kind=kind, start_line=start, end_line=end, parent=parent)


@pytest.mark.parametrize(
    ("n", "size", "overlap", "expected"),
    [
        (0, 10, 2, []),
        (5, 10, 2, [(1, 5)]),
        (10, 10, 2, [(1, 10)]),
        (11, 10, 2, [(1, 10), (9, 11)]),
        (20, 8, 3, [(1, 8), (6, 13), (11, 18), (16, 20)]),
        (3, 1, 5, [(1, 1), (2, 2), (3, 3)]),  # overlap never stalls the windows
    ],
)
def test_windows_cover_every_line(n: int, size: int, overlap: int, expected: list[tuple[int, int]]) -> None:
    assert windows(n, size, overlap) == expected


def test_number_lines_prefixes_numbers() -> None:
    assert number_lines(["a", "b", "c"], 2, 3) == "2| b\n3| c"


@pytest.mark.parametrize(
    ("content", "names", "bad"),
    [
        ('{"items": [{"name": "f", "kind": "function", "start_line": 1, "end_line": 2}]}', ["f"], 0),
        ('[{"name": "f", "kind": "function", "start_line": 1, "end_line": 2}]', ["f"], 0),
        ('```json\n{"items": []}\n```', [], 0),
        ('{"items": [{"name": "f"}, {"name": "g", "kind": "class", "start_line": 3, "end_line": 4}]}', ["g"], 1),
        ('{"items": [{"name": "f", "kind": "function", "start_line": "one", "end_line": 2}]}', [], 1),
    ],
)
def test_parse_answer_shapes(content: str, names: list[str], bad: int) -> None:
    items, malformed = parse_answer(content)
    assert ([i.name for i in items], malformed) == (names, bad)


@pytest.mark.parametrize("content", ["not json", '{"items": 3}', '{"functions": []}', "", '"items"'])
def test_parse_answer_rejects_unusable_replies(content: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_answer(content)


@pytest.mark.parametrize(
    ("name", "start", "near"),
    [
        ("Box", 3, True),  # two decorator lines above the class line
        ("Box", 5, True),
        ("Box.open", 6, True),
        ("free", 12, True),
        ("free", 6, False),
        ("free()", 9, True),
        ("free", 7, False),
        ("clos", 9, False),  # whole words only
        ("", 1, False),
    ],
)
def test_name_near_start(name: str, start: int, near: bool) -> None:
    assert name_near(name, SRC, start) is near


def test_name_near_skips_multiline_decorators() -> None:
    src = ["@pytest.mark.parametrize(", '    "value",', "    [", "        1,", "        2,", "    ],", ")",
           "def test_value(value):", "    assert value"]
    assert name_near("test_value", src, 1) and not name_near("test_other", src, 1)


def test_validate_items_nests_and_normalises_kinds() -> None:
    items = [_item("free", "def", 12, 13), _item("Box.open", "function", 6, 7, parent="Box"),
             _item("Box", "class", 3, 10), _item("close", "method", 9, 10)]
    bounds, dropped = validate_items(items, SRC)
    assert bounds == [Boundary("Box", "class", 3, 10), Boundary("open", "method", 6, 7, 0),
                      Boundary("close", "method", 9, 10, 0), Boundary("free", "function", 12, 13)]
    assert not dropped


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (_item("free", "function", 12, 40), "out_of_file"),
        (_item("free", "function", 0, 13), "out_of_file"),
        (_item("free", "function", 13, 12), "reversed"),
        (_item("ghost", "function", 12, 13), "name_not_near_start"),
        (_item("free", "variable", 12, 13), "kind"),
        (_item("Box", "class", 3, 10), "duplicate"),
        (_item("close", "method", 9, 12), "overlaps_sibling"),
        (_item("close", "method", 9, 10, parent="free"), "nesting"),
    ],
)
def test_validate_items_drops_with_reason(item: BoundaryItem, reason: str) -> None:
    base = [_item("Box", "class", 3, 10), _item("free", "function", 12, 13)]
    bounds, dropped = validate_items([*base, item], SRC)
    assert dropped == {reason: 1}
    assert [(b.name, b.start_line, b.end_line) for b in bounds] == [("Box", 3, 10), ("free", 12, 13)]


def test_validate_items_unknown_claimed_parent_is_ignored() -> None:
    bounds, dropped = validate_items([_item("free", "function", 12, 13, parent="Module")], SRC)
    assert (bounds, dropped) == ([Boundary("free", "function", 12, 13)], {})


def test_build_tree_qualified_names_levels_and_entities() -> None:
    bounds = [Boundary("Box", "class", 3, 10), Boundary("open", "method", 6, 7, 0)]
    tree = build_tree("pkg/box.x", "x", "\n".join(SRC) + "\n", bounds)
    root, box, opened = tree.nodes
    assert (root.kind, root.end_line, tree.source_type, tree.parser) == ("file", 13, SourceType.CODE, "llm")
    assert (box.qualified_name, box.level, box.parent, box.signature) == ("pkg/box.x::Box", 1, 0, "class Box:")
    assert (opened.qualified_name, opened.level, opened.parent) == ("pkg/box.x::Box.open", 2, 1)
    assert [(e.type, e.name, e.node) for e in tree.entities] == [("class", "Box", 1), ("method", "open", 2)]


@pytest.mark.parametrize(
    ("options", "path", "language", "source_type", "expected"),
    [
        (LLMParserOptions(), "a.lua", "lua", SourceType.CODE, True),  # code without a grammar
        (LLMParserOptions(), "a.py", "python", SourceType.CODE, False),
        (LLMParserOptions(), "README.md", "markdown", SourceType.DOC, False),
        (LLMParserOptions(), "notes.txt", "text", SourceType.DOC, False),
        (LLMParserOptions(globs=("*.foo",)), "x/y.foo", "text", SourceType.TEXT, True),
        (LLMParserOptions(globs=("src/*.py",)), "src/a.py", "python", SourceType.CODE, True),
        (LLMParserOptions(mode="llm"), "a.py", "python", SourceType.CODE, True),
        (LLMParserOptions(mode="llm"), "README.md", "markdown", SourceType.DOC, False),
        (LLMParserOptions(mode="llm", globs=("*.foo",)), "a.py", "python", SourceType.CODE, False),
    ],
)
def test_registry_uses_llm_routing(options: LLMParserOptions, path: str, language: str, source_type: SourceType,
                                   expected: bool) -> None:
    registry = ParserRegistry(llm=LLMBoundaryParser(None, "m", options=options))
    assert registry.uses_llm(path, language, source_type) is expected
    assert ParserRegistry().uses_llm(path, language, source_type) is False


def test_budget_exhaustion_is_sticky_and_flat() -> None:
    parser = LLMBoundaryParser(None, "m", options=LLMParserOptions(token_budget=100))
    registry = ParserRegistry(llm=parser)
    with pytest.raises(BudgetExhausted):
        parser.boundaries("a.lua", "function f()\nend\n", "lua")
    tree, error = registry.parse("b.lua", "function g()\nend\n", "lua", SourceType.CODE)
    assert (tree.parser, error, len(tree.nodes)) == ("text", None, 1)
    assert (parser.stats.budget_exhausted, parser.stats.calls, dict(parser.stats.fallbacks)) == (True, 0, {"budget": 2})
