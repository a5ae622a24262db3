"""The walk on hostile trees: names that are not UTF-8, deep nesting, .gitignore rules that point outside."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sift.ingest.walk import WalkStats, walk
from tests.hostile import _mkdirs_iteratively, remove_tree


def _walk(root: Path) -> tuple[list[str], WalkStats]:
    stats = WalkStats()
    return [f.path for f in walk(root, stats=stats)], stats


def test_walk_skips_names_that_are_not_utf8(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "ok.py").write_text("ok = 1\n")
    raw = os.fsencode(root)
    with open(raw + b"/bad\xffname.py", "wb") as fh:
        fh.write(b"x = 1\n")
    os.mkdir(raw + b"/dir\xfe")
    with open(raw + b"/dir\xfe/inner.py", "wb") as fh:
        fh.write(b"inner = 1\n")
    paths, stats = _walk(root)
    assert paths == ["ok.py"]
    assert stats.skipped["undecodable_name"] == 2
    assert dict(stats.skipped_paths) == {"bad\\xffname.py": "undecodable_name", "dir\\xfe/": "undecodable_name"}
    for path, _ in stats.skipped_paths:
        path.encode("utf-8")  # storable and printable: no lone surrogates left


def test_walk_descends_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    levels = sys.getrecursionlimit() + 50
    bottom = _mkdirs_iteratively(tmp_path, ["deep", *["d"] * levels])
    (bottom / "bottom.py").write_text("x = 1\n")
    (tmp_path / "top.py").write_text("y = 2\n")
    try:
        paths, stats = _walk(tmp_path)
        assert paths == ["deep/" + "d/" * levels + "bottom.py", "top.py"]
        assert not stats.skipped
    finally:
        remove_tree(tmp_path / "deep")


def test_walk_gitignore_rules_pointing_outside_the_root_hide_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    root = tmp_path / "r"
    (root / "sub").mkdir(parents=True)
    (root / ".gitignore").write_text("../*\n/../x\n../../outside.py\n!../outside.py\n")
    (root / "sub" / ".gitignore").write_text("../*\n")
    (root / "a.py").write_text("a = 1\n")
    (root / "x").write_text("x\n")
    (root / "sub" / "b.py").write_text("b = 1\n")
    paths, stats = _walk(root)
    assert paths == [".gitignore", "a.py", "sub/.gitignore", "sub/b.py", "x"]
    assert not stats.skipped
