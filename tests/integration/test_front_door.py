"""The front door, as a new user meets it: the README's commands run through the real ``sift`` console script,
from the folder that was ingested and from others, with the default data directory (no ``--data-dir``, no
``$SIFT_DATA_DIR``); and commands that only read create nothing where there is nothing to read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sift.config import find_data_dir
from tests.conftest import TINY_FILES

SIFT = Path(sys.executable).with_name("sift")
KB = "tiny"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_") or k == "SIFT_DATABASE_URL"}
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}


def _sift(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SIFT), *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=600)


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``proj/`` (the tiny repository) ingested from inside it with the default data directory, and a sibling
    folder ``elsewhere/``."""
    if os.environ.get("SIFT_DATABASE_URL"):
        pytest.skip("the default data directory holds the SQLite database; this run uses a database server")
    base = tmp_path_factory.mktemp("front")
    proj = base / "proj"
    for rel, text in TINY_FILES.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    (base / "elsewhere").mkdir()
    assert find_data_dir(base) == base / ".sift", "a .sift above the test's folder would be found first"
    out = _sift(proj, "ingest", ".", "--kb", KB)
    assert out.returncode == 0, out.stderr
    assert (proj / ".sift" / "sift.db").is_file()  # no .sift anywhere above: the first ingest makes ./.sift
    first = out.stdout
    assert f"kb {KB} generation 1 (published)" in first and "the kb now holds 5 files" in first
    rate = re.search(r"\(([0-9.]+) files/s\)", first)
    assert rate is not None and float(rate.group(1)) > 0, first  # never "(0 files/s)"
    return base


def test_readme_commands_work_from_a_sub_folder(workspace: Path) -> None:
    sub = workspace / "proj" / "pkg"
    out = _sift(sub, "search", "validate token", "--kb", KB, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert any(h["path"] == "pkg/auth.py" for h in json.loads(out.stdout)["hits"])
    out = _sift(sub, "kb", "list", "--json")
    assert [kb["name"] for kb in json.loads(out.stdout)] == [KB]
    out = _sift(sub, "docql", '$.code.function("login")', "--kb", KB, "--format", "grep")
    assert out.returncode == 0 and out.stdout.startswith("pkg/auth.py:17:"), out.stdout + out.stderr
    out = _sift(sub, "ask", "Where is the token validated?", "--kb", KB, "--json")
    assert out.returncode == 0, out.stderr
    assert any(c["path"] == "pkg/auth.py" for c in json.loads(out.stdout)["citations"])
    # re-ingesting from the sub-folder updates the same knowledge base and says it is unchanged
    out = _sift(sub, "ingest", "..", "--kb", KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"kb {KB} unchanged: no file changed since generation 1, which still serves 5 files")
    assert "0 chunks" not in out.stdout
    assert not (sub / ".sift").exists()


def test_another_folder_is_told_where_sift_looked_and_how_to_point_elsewhere(workspace: Path) -> None:
    elsewhere, data = workspace / "elsewhere", workspace / "proj" / ".sift"
    out = _sift(elsewhere, "search", "validate token", "--kb", KB)
    assert out.returncode == 1
    assert str(elsewhere / ".sift") in out.stderr and "--data-dir" in out.stderr and "SIFT_DATA_DIR" in out.stderr
    assert _tree(elsewhere) == []
    # --data-dir and $SIFT_DATA_DIR name it; --data-dir wins over $SIFT_DATA_DIR, which wins over the walk up
    assert _sift(elsewhere, "search", "validate token", "--kb", KB, "--data-dir", str(data)).returncode == 0
    assert _sift(elsewhere, "search", "validate token", "--kb", KB, SIFT_DATA_DIR=str(data)).returncode == 0
    assert _sift(elsewhere, "search", "validate token", "--kb", KB, "--data-dir", str(data),
                 SIFT_DATA_DIR=str(elsewhere / "nothing")).returncode == 0
    out = _sift(workspace / "proj", "search", "validate token", "--kb", KB, SIFT_DATA_DIR=str(elsewhere / "nothing"))
    assert out.returncode == 1 and str(elsewhere / "nothing") in out.stderr
    # a knowledge base that is not in the data directory found: the message names that directory
    out = _sift(workspace / "proj" / "docs", "search", "x", "--kb", "nope")
    assert out.returncode == 1
    assert "knowledge base 'nope' does not exist" in out.stderr and str(data) in out.stderr
    assert "--data-dir" in out.stderr


READ_ONLY = [
    ("search", "validate token", "--kb", KB),
    ("ask", "Where is the token validated?", "--kb", KB),
    ("docql", "$.files", "--kb", KB),
    ("files", "--kb", KB, "pkg/auth.py"),
    ("kb", "list"),
    ("kb", "show", KB),
    ("kb", "check", KB),
    ("threads", "list"),
    ("threads", "show", "t1"),
    ("eval", "QUESTIONS", "--kb", KB, "--mode", "answer"),
]


@pytest.mark.parametrize("how", ["default", "--data-dir"])
def test_read_only_commands_create_nothing(tmp_path: Path, how: str) -> None:
    if os.environ.get("SIFT_DATABASE_URL"):
        pytest.skip("a database server is configured: there is no SQLite file to create or not")
    empty, questions = tmp_path / "empty", tmp_path / "q.jsonl"
    empty.mkdir()
    questions.write_text(json.dumps({"id": "q", "query": "Where is the token validated?"}) + "\n")
    assert find_data_dir(empty) == empty / ".sift", "a .sift above the test's folder would be found first"
    missing = empty / "data"
    for args in READ_ONLY:
        args = tuple(str(questions) if a == "QUESTIONS" else a for a in args)
        if how == "--data-dir":
            args = (*args, "--data-dir", str(missing))
        out = _sift(empty, *args)
        looked_in = empty / ".sift" if how == "default" else missing
        if args[:2] == ("kb", "list"):
            assert out.returncode == 0 and str(looked_in) in out.stdout, out.stdout + out.stderr
        else:
            assert out.returncode == 1, (args, out.stdout, out.stderr)
            assert str(looked_in) in out.stderr and "--data-dir" in out.stderr, (args, out.stderr)
        assert _tree(empty) == [], (args, _tree(empty))
