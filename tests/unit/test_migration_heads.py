"""The migration heads read from the scripts' text, without Alembic or ``ast`` (see ``sift.db._script_heads``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.db import _script_heads, migrations_dir


def _scripts(tmp_path: Path, *bodies: str) -> Path:
    for i, body in enumerate(bodies):
        (tmp_path / f"{i:04d}_m.py").write_text(f'"""migration {i}"""\nimport sqlalchemy as sa\n\n{body}\n')
    return tmp_path


@pytest.mark.parametrize(("bodies", "heads"), [
    (('revision = "a"\ndown_revision = None',), {"a"}),
    (('revision = "a"\ndown_revision = None', 'revision: str = "b"\ndown_revision: Union[str, None] = "a"'), {"b"}),
    (("revision = 'a'\ndown_revision = None", "revision = 'b'\ndown_revision = 'a'",
      "revision = 'c'\ndown_revision = 'a'"), {"b", "c"}),  # two heads
    (('revision = "a"\ndown_revision = None', 'revision = "b"\ndown_revision = "a"',
      'revision = "c"\ndown_revision = "a"', 'revision = "d"\ndown_revision = ("b", "c")'), {"d"}),  # a merge
    (('revision = make_id()\ndown_revision = None',), None),  # not a literal: ask Alembic
    (('revision = "a"',), None),  # no down_revision line
])
def test_script_heads_table(tmp_path, bodies, heads):
    _script_heads.cache_clear()
    got = _script_heads(_scripts(tmp_path, *bodies))
    assert (set(got) if got is not None else None) == heads


def test_script_heads_of_the_package_are_alembics():
    from alembic.script import ScriptDirectory

    _script_heads.cache_clear()
    assert set(_script_heads(migrations_dir() / "versions") or ()) == set(
        ScriptDirectory(str(migrations_dir())).get_heads())
