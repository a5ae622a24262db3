"""Which recorded call sites call a definition (``graph.callers.calls_it``): a method's name alone is not enough."""

from __future__ import annotations

import pytest

from sift.graph.callers import calls_it, owner_of

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
