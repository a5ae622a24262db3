"""A call of a name the calling function binds itself is no call site of a definition with that name: ingested by
the real pipeline into SQLite, then read by the writer's callers and by DocQL."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from sift.config import Settings
from sift.db import open_database
from sift.db.tables import Node, Ref
from sift.graph.callers import callers
from sift.ingest.pipeline import ingest
from sift.retrievers.docql import execute, resolve_kb

CHECKS = '''def validate(value):
    return value


def run_all(compiled, data):
    for validate in compiled:
        validate(data)
    return validate(data)


def apply(validate, data):
    return validate(data)
'''
RULES = '''function check(value) { return value }

export function runRules(rules, value) {
  for (const check of rules) { check(value) }
  return check(value)
}
'''


def test_locally_bound_calls_are_no_callers(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "checks.py").write_text(CHECKS)
    (repo / "pkg" / "rules.js").write_text(RULES)
    settings = Settings(data_dir=tmp_path / "data")
    ingest(settings, repo, "checks", build_index=False)
    engine = open_database(settings)
    kb_id, generation = resolve_kb(engine, "checks")
    with engine.connect() as conn:
        refs = conn.execute(select(Ref.path, Ref.line, Ref.callee, Ref.bound_locally).order_by(Ref.path, Ref.line)).all()
        nodes = {n.name: n for n in conn.execute(select(Node.name, Node.qualified_name, Node.kind)
                                                 .where(Node.name.in_(("validate", "check"))))}
    assert [tuple(r) for r in refs] == [
        ("pkg/checks.py", 7, "validate", True),  # the loop variable
        ("pkg/checks.py", 8, "validate", True),  # still the loop variable: Python binds it for the whole function
        ("pkg/checks.py", 12, "validate", True),  # a parameter
        ("pkg/rules.js", 4, "check", True),  # the loop's const
        ("pkg/rules.js", 5, "check", False),  # outside the loop's block: the function defined above
    ]
    assert callers(engine, kb_id, generation, nodes["validate"]) == []
    assert callers(engine, kb_id, generation, nodes["check"]) == [
        {"path": "pkg/rules.js", "line": 5, "caller": "runRules"}]
    assert execute(engine, kb_id, generation, '$.code.callers("validate")')["files"] == {}
    found = execute(engine, kb_id, generation, '$.code.callers("check")')["files"]
    assert [(path, i["caller"], i["line"]) for path, items in found.items() for i in items] == [
        ("pkg/rules.js", "runRules", 5)]
    calls = execute(engine, kb_id, generation, '$.code.calls("run_all")')["files"]  # run_all still calls them
    assert [(i["name"], i["line"]) for i in calls["pkg/checks.py"]] == [("validate", 7), ("validate", 8)]
