"""The names a file's functions bind themselves (``ingest.parsers.scopes``), read from real tree-sitter trees: a
call of the name at the marked place (its last ``name(``) is of a local value or not."""

from __future__ import annotations

import pytest
import tree_sitter_language_pack as tslp

from sift.ingest.parsers.scopes import bindings_in, bound_at


def local_call(language: str, source: str, name: str) -> bool:
    root = tslp.get_parser(language).parse(source.encode()).root_node
    return bound_at(bindings_in(root, language), name, source.encode().rindex(f"{name}(".encode()))


@pytest.mark.parametrize(("language", "source", "name", "local"), [
    ("python", "def f(a, b: int = 2, *args, c=d, **kw):\n    a(); b(); args(); c(); kw()\n", "a", True),
    ("python", "def f(a, b: int = 2, *args, c=d, **kw):\n    a(); b(); args(); c(); kw()\n", "kw", True),
    ("python", "def f(a, b: int = 2, *args, c=d, **kw):\n    d()\n", "d", False),  # a default value binds nothing
    ("python", "def f(x: Rule):\n    Rule()\n", "Rule", False),  # nor does an annotation
    ("python", "def f():\n    x, (y, z) = 1, (2, 3)\n    z()\n", "z", True),
    ("python", "def f():\n    for rule in rules:\n        rule()\n", "rule", True),
    ("python", "def f():\n    rule()\n    for rule in rules:\n        pass\n", "rule", True),  # bound in all of f
    ("python", "def f():\n    with open(p) as fh:\n        fh()\n", "fh", True),
    ("python", "def f():\n    try:\n        pass\n    except E as err:\n        err()\n", "err", True),
    ("python", "def f():\n    [g(1) for g in gs]\n", "g", True),
    ("python", "def f():\n    [g for g in gs]\n    g()\n", "g", False),  # a comprehension's own variable
    ("python", "def f():\n    if (n := 3):\n        n()\n", "n", True),
    ("python", "def f():\n    obj.attr = 1\n    attr()\n", "attr", False),  # an attribute target binds no name
    ("python", "def f(cb):\n    def inner():\n        cb()\n", "cb", True),  # a closure's variable
    ("python", "def f():\n    def inner():\n        pass\n    inner()\n", "inner", False),  # a definition
    ("python", "def f():\n    global cache\n    cache = {}\n    cache()\n", "cache", False),
    ("python", "class A:\n    helper = make()\n    def m(self):\n        helper()\n", "helper", False),
    ("python", "run = make()\nrun()\n", "run", False),  # module level
    ("python", "def f():\n    " + "[" * 3000 + "a" + "]" * 3000 + " = x\n    a()\n", "a", True),  # no recursion
    ("javascript", "function f(a, {b, c: d}, [e], g = 1, ...rest) { d(); }", "d", True),
    ("javascript", "function f(a, {b, c: d}, [e], g = 1, ...rest) { rest(); }", "rest", True),
    ("javascript", "function f() { const h = 1, {i} = o; var k = 2; k(); }", "k", True),
    ("javascript", "function f() { for (const m of xs) { m(); } }", "m", True),
    ("javascript", "function f() { for (const m of xs) {} m(); }", "m", False),  # outside the loop
    ("javascript", "function f() { if (x) { const j = 1; } j(); }", "j", False),  # outside the block
    ("javascript", "function f() { for (p of xs) {} p(); }", "p", False),  # assigns a name declared elsewhere
    ("javascript", "function f() { try {} catch (err) { err(); } }", "err", True),
    ("javascript", "obj.method = function (h) { h() }", "h", True),
    ("javascript", "const run = (q) => { q() }", "q", True),
    ("javascript", "const run = q => q()", "q", True),
    ("typescript", "function f(a: Rule, b?: number, c = 1) { b(); }", "b", True),
    ("typescript", "function f(a: Rule) { Rule(); }", "Rule", False),
    ("go", "func f(a func()) { a() }", "a", False),  # a language not read here binds nothing
])
def test_a_call_of_a_locally_bound_name(language: str, source: str, name: str, local: bool) -> None:
    assert local_call(language, source, name) is local
