"""The names a function binds in its own scope (``ingest.parsers.scopes``), read from real tree-sitter trees."""

from __future__ import annotations

import pytest
import tree_sitter_language_pack as tslp

from sift.ingest.parsers.scopes import local_names


def first_function(language: str, source: str):  # type: ignore[no-untyped-def]
    root = tslp.get_parser(language).parse(source.encode()).root_node
    return root.named_children[0]


@pytest.mark.parametrize(("language", "source", "expected"), [
    ("python", "def f(a, b: int = 2, *args, c=default, **kw):\n    pass\n", {"a", "b", "args", "c", "kw"}),
    ("python", "def f(x: Validator):\n    pass\n", {"x"}),  # the annotation names a type, binds nothing
    ("python", "def f():\n    x, (y, z) = 1, (2, 3)\n    total += 1\n", {"x", "y", "z", "total"}),
    ("python", "def f():\n    for check in checks:\n        check()\n", {"check"}),
    ("python", "def f():\n    with open(p) as fh:\n        pass\n    try:\n        pass\n    except E as err:\n"
               "        pass\n", {"fh", "err"}),
    ("python", "def f():\n    [g(1) for g in gs]\n    if (n := 3):\n        pass\n", {"g", "n"}),
    ("python", "def f():\n    obj.attr = 1\n    d[k] = 2\n", set()),  # attribute and subscript targets
    ("python", "def f():\n    def inner(p):\n        q = p\n    lambda r: r\n", set()),  # scopes of their own
    ("python", "def f():\n    global cache\n    cache = {}\n    nonlocal_ = 1\n", {"nonlocal_"}),
    ("javascript", "function f(a, {b, c: d}, [e], g = 1, ...rest) {}", {"a", "b", "d", "e", "g", "rest"}),
    ("javascript", "function f() { const h = 1, {i} = o; let j; var k = 2; for (const m of xs) {} "
                   "try {} catch (err) {} }", {"h", "i", "j", "k", "m", "err"}),
    ("javascript", "function f() { n = 3; for (p of xs) {} const inner = (q) => q; }", {"inner"}),  # no declaration
    ("javascript", "obj.method = function (h) { h() }", {"h"}),  # a function assigned: its own parameters
    ("typescript", "function f(a: Validator, b?: number, c = 1) {}", {"a", "b", "c"}),
    ("go", "func f(a int) { b := 1 }", set()),  # a language not read here binds nothing
])
def test_local_names(language: str, source: str, expected: set[str]) -> None:
    assert local_names(first_function(language, source), language) == expected
