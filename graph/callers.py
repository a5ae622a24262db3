"""Where a definition is called from: the call sites recorded at ingestion whose callee is this definition.

Call sites are recorded by name (``Ref.callee_name``), qualified only where an import makes the callee visible (as a
dotted name, ``pkg.schema.Registry``, which must end with the definition's own dotted name, after a module that is
its file or a package above it). A function's name is specific enough, but a method's is not: ``add`` is
``Registry.add`` and ``ErrorTree.add`` in one project, and a ``set``'s ``add`` everywhere. So for a method a call
counts only when it is resolved to this method, made on ``self``/``this``/``cls`` inside its own class, made on the
class by name (``Registry.add``), or, when no other definition in the knowledge base has the method's name and the
name is not a method of Python's built-in types, made on any object. A call of a name the calling function binds
itself (``Ref.bound_locally``: ``for rule in rules: rule(x)``) calls no definition.

A calling definition is named once (``distinct_sites``): a function that calls the definition twice is one caller,
and so is one caller in each copy of a source that a package ships several times (``lib/cjs/tmpl.js`` beside
``lib/esm/tmpl.js``, ``render.js`` beside ``render.mjs``), so that the few sites an answer names are different callers.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import Engine, func, select

from sift.db import visible_in
from sift.db.tables import File, Node, Ref

MAX_CALLERS = 5
MAX_SITES = 200  # call sites read per name, before those of other methods with that name are dropped
_PATH_PARTS = re.compile(r"[/\\.]")
_RECEIVERS = frozenset({"self", "this", "cls"})
# Methods of Python's built-in types: a call ``items.add(x)`` is far likelier a set's than the project's one ``add``.
BUILTIN_METHODS = frozenset(
    name for t in (dict, list, set, str, bytes, tuple, frozenset) for name in dir(t) if not name.startswith("_"))


def owner_of(qualified: str) -> str:
    """The class a method belongs to, from its qualified name (``pkg/m.py::Outer.Inner.run`` → ``Outer.Inner``);
    "" for a top-level function."""
    dotted = qualified.partition("::")[2] or qualified
    return dotted.rpartition(".")[0]


def calls_it(callee: str, callee_qualified: str | None, caller: str | None, qualified: str, kind: str,
             unique: bool) -> bool:
    """Whether a call site (its callee as written, the callee it was resolved to, the calling definition's name)
    calls the definition ``qualified`` of ``kind``; ``unique``: no other definition in the kb has its name."""
    path, _, dotted = qualified.rpartition("::")
    if callee_qualified:  # resolved through an import, as a dotted name (``pkg.schema.Registry.add``)
        if callee_qualified != dotted and not callee_qualified.endswith("." + dotted):
            return False
        # Its module must be the definition's file or a package above it (which may re-export it), not another
        # library's (``time.monotonic`` for the project's own ``monotonic``).
        module = callee_qualified[: -len(dotted)].strip(".")
        return not module or module.rpartition(".")[2] in set(_PATH_PARTS.split(path.rsplit(".", 1)[0]))
    owner = owner_of(qualified)
    if kind != "method" or not owner:
        return True  # a function: its name is the call's name
    receiver, _, name = callee.rpartition(".")
    receiver = receiver.removesuffix("()")
    if receiver in _RECEIVERS:
        return bool(caller) and (caller or "").startswith(owner + ".")
    if receiver and receiver.rpartition(".")[2] == owner.rpartition(".")[2]:
        return True  # on the class by name: ``Registry.add``, ``Registry().add``
    return unique and name not in BUILTIN_METHODS


def _stem(path: str) -> str:
    """A file's name up to its first dot: ``lib/esm/tmpl.js`` → ``tmpl``, ``render.min.js`` → ``render``."""
    return path.rpartition("/")[2].split(".", 1)[0]


def distinct_sites(sites: list[dict[str, Any]], own_path: str = "") -> list[dict[str, Any]]:
    """Call sites, one per calling definition, in their order: sites in the same calling definition in one file, or in
    files of the same name (a bundle's copies of one module), are one site, shown in ``own_path`` (the called
    definition's file) when one of them is there, else the first. A module-level site (no caller) is always its own."""
    keep: dict[tuple[str, str] | int, dict[str, Any]] = {}
    for i, site in enumerate(sites):
        key: tuple[str, str] | int = (site["caller"], _stem(site["path"])) if site.get("caller") else i
        if key not in keep or (site["path"] == own_path and keep[key]["path"] != own_path):
            keep[key] = site
    chosen = {id(site) for site in keep.values()}
    return [site for site in sites if id(site) in chosen]


def callers(engine: Engine, kb_id: int, generation: int, node: Any) -> list[dict[str, Any]]:
    """Up to ``MAX_CALLERS`` call sites of ``node`` (a function, method or class row with ``name``,
    ``qualified_name`` and ``kind``), in path and line order."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(Ref.path, Ref.line, Ref.caller_name, Ref.callee, Ref.callee_qualified)
            .join(File, Ref.file_id == File.id)
            .where(Ref.kb_id == kb_id, Ref.callee_name == node.name, Ref.bound_locally.is_(False),
                   visible_in(File, generation))
            .order_by(Ref.path, Ref.line).limit(MAX_SITES)
        ).all()
        unique = True
        if node.kind == "method" and rows:
            same = conn.execute(
                select(func.count()).select_from(Node).join(File, Node.file_id == File.id)
                .where(Node.kb_id == kb_id, Node.kind.in_(("function", "method")), Node.name == node.name,
                       visible_in(File, generation))  # by the (kb, kind, name) index
            ).scalar_one()
            unique = same <= 1
    found = [r for r in rows if calls_it(r.callee, r.callee_qualified, r.caller_name, node.qualified_name or "",
                                         node.kind, unique)]
    sites = [{"path": r.path, "line": r.line, "caller": r.caller_name} for r in found]
    return distinct_sites(sites, (node.qualified_name or "").partition("::")[0])[:MAX_CALLERS]
