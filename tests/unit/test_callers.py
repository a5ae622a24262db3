"""Which recorded call sites call a definition (``graph.callers.calls_it``): a method's name alone is not enough; and
which of them an answer names (``distinct_sites``: one per calling definition)."""

from __future__ import annotations

import pytest

from sift.graph.callers import calls_it, distinct_sites, owner_of

ADD = "pkg/schema.py::Registry.add"


@pytest.mark.parametrize(("qualified", "owner"), [
    (ADD, "Registry"),
    ("pkg/m.py::Outer.Inner.run", "Outer.Inner"),
    ("pkg/m.py::load", ""),
    ("lib/w.js::Writer.render", "Writer"),
])
def test_owner_of(qualified: str, owner: str) -> None:
    assert owner_of(qualified) == owner


@pytest.mark.parametrize(("callee", "resolved", "caller", "qualified", "kind", "unique", "expected"), [
    ("self.add", None, "Registry.extend", ADD, "method", False, True),  # inside its own class
    ("self.add", None, "ErrorTree.__init__", ADD, "method", False, False),  # another class's add
    ("self.tree_root.add", None, "ErrorTreeNode.add", ADD, "method", False, False),  # some object's add
    ("self.seen.add", None, "Registry.extend", ADD, "method", True, False),  # a set's add, though add is unique
    ("Registry.add", None, "setup", ADD, "method", False, True),  # on the class by name
    ("Registry().add", None, "setup", ADD, "method", False, True),
    ("store.register", None, "setup", "pkg/schema.py::Registry.register", "method", True, True),  # one of its name
    ("store.register", None, "setup", "pkg/schema.py::Registry.register", "method", False, False),  # one of several
    ("self.add", None, None, ADD, "method", False, False),  # a module-level call has no class
    ("this.renderSection", None, "Writer.renderTokens", "lib/w.js::Writer.renderSection", "method", False, True),
    ("add", "pkg.schema.Registry.add", None, ADD, "method", False, True),  # resolved through an import
    ("monotonic", "time.monotonic", None, "pkg/clock.py::monotonic", "function", True, False),  # resolved elsewhere
    ("now", "pkg.clock.now", None, "src/pkg/clock.py::now", "function", True, True),  # to its own module
    ("now", "pkg.now", None, "src/pkg/clock.py::now", "function", True, True),  # re-exported by its package
    ("parse", None, "main", "pkg/cli.py::parse", "function", False, True),  # a function: its name is enough
    ("Registry", None, "main", "pkg/schema.py::Registry", "class", False, True),
])
def test_calls_it(callee: str, resolved: str | None, caller: str | None, qualified: str, kind: str, unique: bool,
                  expected: bool) -> None:
    assert calls_it(callee, resolved, caller, qualified, kind, unique) is expected


def _site(path: str, line: int, caller: str | None) -> dict:
    return {"path": path, "line": line, "caller": caller}


@pytest.mark.parametrize(("sites", "own", "expected"), [
    # one site in three copies of a bundled module: shown once, in the called definition's own file
    ([_site("tmpl.js", 700, "Template.compile"), _site("lib/cjs/tmpl.js", 699, "Template.compile"),
      _site("lib/esm/tmpl.js", 762, "Template.compile")], "lib/cjs/tmpl.js", [("lib/cjs/tmpl.js", 699)]),
    # no copy in the definition's file: the first
    ([_site("render.js", 523, "Writer.scan"), _site("render.mjs", 517, "Writer.scan")], "src/other.js",
     [("render.js", 523)]),
    # different callers, or the same caller in differently named files, are different sites
    ([_site("a.js", 1, "run"), _site("a.js", 9, "main"), _site("b.js", 3, "run")], "", [("a.js", 1), ("a.js", 9),
                                                                                     ("b.js", 3)]),
    # a caller that calls it twice is named once, at its first call
    ([_site("tab.py", 2308, "tabulate"), _site("tab.py", 2327, "tabulate"), _site("cli.py", 5, "main")], "",
     [("tab.py", 2308), ("cli.py", 5)]),
    # module-level calls have no caller to match on: all kept
    ([_site("a.py", 1, None), _site("pkg/a.py", 1, None)], "", [("a.py", 1), ("pkg/a.py", 1)]),
    ([], "", []),
])
def test_distinct_sites(sites: list[dict], own: str, expected: list[tuple[str, int]]) -> None:
    assert [(s["path"], s["line"]) for s in distinct_sites(sites, own)] == expected
