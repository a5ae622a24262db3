"""The DocQL grammar: accepted queries and their trees, and every error with its column."""

from __future__ import annotations

import pytest

from sift.errors import InvalidQuery
from sift.retrievers.docql import parse
from sift.retrievers.docql.ast import And, Compare, Not, Or, Regex, Selector, Truthy, Window


@pytest.mark.parametrize(
    ("query", "root", "record", "selector"),
    [
        ("$.toc", "toc", "heading", None),
        ("  $ . toc [ * ] ", "toc", "heading", None),
        ("$.content", "content", "heading", None),
        ('$.content.heading("Authentication")', "content", "heading", ("heading", ("Authentication",))),
        ("$.content.h1('Intro')", "content", "heading", ("h1", ("Intro",))),
        ('$.content.h6("x")', "content", "heading", ("h6", ("x",))),
        ('$.content.grep("to+ken")', "content", "match", ("grep", (Regex("to+ken", "", 16),))),
        ('$.content.grep("token", "i")', "content", "match", ("grep", (Regex("token", "i", 16),))),
        ("$.content.codeblock[*]", "content", "codeblock", ("codeblock", ())),
        ("$.code", "code", "code", None),
        ("$.code.classes", "code", "code", ("classes", ())),
        ("$.code.functions", "code", "code", ("functions", ())),
        ("$.code.methods", "code", "code", ("methods", ())),
        ('$.code.class("AuthService")', "code", "code", ("class", ("AuthService",))),
        ('$.code.function("validate_token")', "code", "code", ("function", ("validate_token",))),
        ('$.code.method("Cls.m")', "code", "code", ("method", ("Cls.m",))),
        ('$.code.query("login")', "code", "code", ("query", ("login",))),
        ('$.code.callers("validate_token")', "code", "call", ("callers", ("validate_token",))),
        ('$.code.calls("login")', "code", "call", ("calls", ("login",))),
        ("$.files", "files", "file", None),
        ("$.entities", "entities", "entity", None),
        ("$.structure.tree()", "structure", "outline", ("tree", ())),
        ('$.structure.flat("pkg")', "structure", "outline", ("flat", ("pkg",))),
    ],
)
def test_parse_roots_and_selectors(query: str, root: str, record: str, selector: tuple | None) -> None:
    q = parse(query)
    assert (q.root, q.record) == (root, record)
    assert (q.selector.name, q.selector.args) == selector if selector else q.selector is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("$.toc[?(@.level == 1)]", Compare("level", "==", 1, 9, 20)),
        ("$.toc[? (@.level >= 2)]", Compare("level", ">=", 2, 10, 21)),
        ('$.toc[?(@.title ~= "auth")]', Compare("title", "~=", "auth", 9, 20)),
        ("$.toc[?(@.title =~ /^a\\/b/im)]", Compare("title", "=~", Regex("^a/b", "im", 20), 9, 20)),
        ("$.toc[?(@.title =~ 'x.y')]", Compare("title", "=~", "x.y", 9, 20)),
        ('$.code[?(@.name startsWith "val")]', Compare("name", "startsWith", "val", 10, 28)),
        ('$.code[?(@.name endsWith "_token")]', Compare("name", "endsWith", "_token", 10, 26)),
        ("$.code[?(@.signature == null)]", Compare("signature", "==", None, 10, 25)),
        ("$.code[?(@.docstring != false)]", Compare("docstring", "!=", False, 10, 25)),
        ("$.code[?(@.level < 2.5)]", Compare("level", "<", 2.5, 10, 20)),
        ("$.code[?(@.start_line <= -1)]", Compare("start_line", "<=", -1, 10, 26)),
        ('$.toc[?(@.title == "a\\"b\\n\\u00e9")]', Compare("title", "==", 'a"b\né', 9, 20)),
        ("$.toc[?(@.anchor)]", Truthy("anchor", 9)),
        ("$.toc[?(!@.anchor)]", Not(Truthy("anchor", 10), 9)),
        (
            "$.toc[?(@.level == 1 || @.level == 2 && @.title != 'x')]",
            Or(
                (
                    Compare("level", "==", 1, 9, 20),
                    And((Compare("level", "==", 2, 25, 36), Compare("title", "!=", "x", 41, 52))),
                )
            ),
        ),
        (
            "$.toc[?((@.level == 1 || @.level == 2) && !(@.title ~= 'x'))]",
            And(
                (
                    Or((Compare("level", "==", 1, 10, 21), Compare("level", "==", 2, 26, 37))),
                    Not(Compare("title", "~=", "x", 45, 56), 43),
                )
            ),
        ),
    ],
)
def test_parse_filter_expressions(query: str, expected: object) -> None:
    assert parse(query).filters == (expected,)


@pytest.mark.parametrize(
    ("query", "window", "projection"),
    [
        ("$.toc[0]", Window(0, None, True, 6), None),
        ("$.toc[-1]", Window(-1, None, True, 6), None),
        ("$.toc[2:5]", Window(2, 5, False, 6), None),
        ("$.toc[:3]", Window(None, 3, False, 6), None),
        ("$.toc[3:]", Window(3, None, False, 6), None),
        ("$.toc[?(@.level == 1)][0].content", Window(0, None, True, 23), "text"),
        ('$.code.class("A").source', None, "text"),
        ("$.files.text", None, "text"),
    ],
)
def test_parse_windows_and_projection(query: str, window: Window | None, projection: str | None) -> None:
    q = parse(query)
    assert (q.window, q.projection) == (window, projection)


def test_parse_multiple_filters_are_kept_in_order() -> None:
    q = parse("$.code.methods[?(@.level == 2)][*][?(@.name ~= 'x')]")
    assert [f.field for f in q.filters] == ["level", "name"]
    assert q.selector == Selector("methods", (), False, 8)


@pytest.mark.parametrize(
    ("query", "column", "fragment"),
    [
        ("", 1, "empty query"),
        ("toc", 1, "expected '$'"),
        ("$toc", 2, "expected '.' after '$'"),
        ("$.", 3, "expected a root"),
        ("$.foo", 3, "unknown root 'foo': use one of $.toc, $.content, $.code"),
        ("$.structure", 12, "expected a function after $.structure: tree(…), flat(…)"),
        ('$.code.klass("X")', 8, "unknown function 'klass' on $.code: valid are classes"),
        ('$.toc.heading("X")', 7, "'heading' is not a function of $.toc"),
        ("$.code.class", 13, "expected '(' and arguments"),
        ('$.code.classes("X")', 15, "'classes' takes no arguments"),
        ("$.code.class()", 8, "class() takes 1 argument(s), got 0"),
        ('$.code.class("a", "b")', 8, "class() takes 1 argument(s), got 2"),
        ("$.code.class(X)", 14, "expected a quoted string argument"),
        ('$.code.class("X"', 17, "expected ',' or ')'"),
        ('$.code.class("X)', 14, "unterminated string"),
        ("$.toc[?(@.level = 1)]", 17, "expected an operator: ==, !=, ~=, =~"),
        ("$.toc[?(@.level == )]", 20, "expected a value"),
        ("$.toc[?(@.lvl == 1)]", 11, "unknown field 'lvl': valid are anchor"),
        ("$.toc[?(@.level == 1]", 21, "expected ')' or an operator"),
        ("$.toc[?(@.level == 1)", 22, "expected ']' to close the filter"),
        ("$.toc[?(level == 1)]", 9, "expected '@.field', '!' or '('"),
        ("$.toc[?@.level == 1]", 8, "expected '(' after '?'"),
        ("$.toc[x]", 7, "expected '*', '?(', an index"),
        ("$.toc[1", 8, "expected ']' or ':'"),
        ("$.toc[5:2]", 6, "slice [5:2] is empty"),
        ("$.toc[0][?(@.level == 1)]", 9, "nothing may follow an index or slice"),
        ("$.toc.title", 7, "'title' is not a function of $.toc"),
        ("$.toc.content[0]", 14, "expected the end of the query after .content"),
        ("$.toc )", 7, "expected '[', '.source', '.content' or the end"),
        ('$.toc[?(@.level == "1")]', 20, "'level' is a number"),
        ("$.toc[?(@.title == 1)]", 20, "'title' is text"),
        ("$.toc[?(@.level ~= 'x')]", 9, "~= compares text"),
        ("$.toc[?(@.title startsWith 1)]", 28, "startsWith compares text"),
        ("$.toc[?(@.level =~ /1/)]", 9, "=~ applies to text fields"),
        ("$.toc[?(@.title > null)]", 19, "> cannot compare with null"),
        ("$.toc[?(@.title =~ /(/)]", 20, "invalid regex /(/"),
        ("$.toc[?(@.title =~ '[')]", 20, "invalid regex /[/"),
        ("$.toc[?(@.title =~ /a/x)]", 23, "unknown regex flag 'x'"),
        ("$.toc[?(@.title =~ /a)]", 20, "unterminated regex"),
        ("$.toc[?(@.title =~ 3)]", 20, "=~ needs a /regex/"),
        ("$.toc[?(@.title == 'a\\q')]", 22, "invalid escape"),
        ("$.content.grep(/a(/)", 16, "invalid regex"),
        ("$.content.grep(1)", 16, "expected a quoted string argument or a /regex/"),
        ("$.content.grep('(')", 16, "invalid regex /(/"),
        ("$.content.grep('a', 'x')", 22, "the second argument holds regex flags"),
        ("$.content.grep('a', 'i', 'm')", 27, "the second argument holds regex flags"),
    ],
)
def test_parse_error_points_at_column(query: str, column: int, fragment: str) -> None:
    with pytest.raises(InvalidQuery) as info:
        parse(query)
    assert info.value.position == column
    assert fragment in info.value.message
    if query:
        lines = info.value.message.splitlines()
        assert lines[-2] == "  " + query
        assert lines[-1] == "  " + " " * (column - 1) + "^"


@pytest.mark.parametrize(
    ("query", "message", "position"),
    [
        ("$.code[?(" + "(" * 65 + "@.name" + ")" * 65 + ")]", "nested too deeply", 74),
        ("$.code[?(" + "!" * 65 + "@.name)]", "nested too deeply", 74),
        ("$.code[?(" + "||".join(["@.name"] * 257) + ")]", "too many conditions", 9 + 256 * 8 + 1),
        ("$.code[?(@.start_line == 9223372036854775808)]", "number too large", 26),
        ("$.code[?(@.start_line == -12345678901234567890123)]", "number too large", 26),
        ("$.code[99999999999999999999]", "number too large", 8),
        ("$.code[?(@.start_line < 1" + "0" * 400 + ".5)]", "number too large", 25),
    ],
)
def test_parse_bounds_depth_terms_and_numbers(query: str, message: str, position: int) -> None:
    with pytest.raises(InvalidQuery) as info:
        parse(query)
    assert message in info.value.message
    assert info.value.position == position


def test_parse_accepts_the_limits_themselves() -> None:
    parse("$.code[?(" + "(" * 64 + "@.name" + ")" * 64 + ")]")
    parse("$.code[?(" + "||".join(["@.name"] * 256) + ")]")
    assert parse("$.code[?(@.start_line > -9223372036854775807)]").filters[0].value == -(2**63 - 1)
    assert parse("$.code[-" + "0" * 5000 + "1]").window.start == -1
