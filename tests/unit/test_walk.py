"""Tests for ingest.walk: real trees written under tmp_path, walked for real."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sift.errors import OutsideRoot
from sift.ingest.walk import MAX_SKIPPED_PATHS, WalkStats, decode_text, is_binary_bytes, walk


def _make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
    return root


def _walk(root: Path, **kwargs: int) -> tuple[list[str], WalkStats]:
    stats = WalkStats()
    paths = [f.path for f in walk(root, stats=stats, **kwargs)]
    return paths, stats


def _reasons(stats: WalkStats) -> dict[str, str]:
    return dict(stats.skipped_paths)


WALK_CASES = [
    pytest.param(
        {
            ".gitignore": "*.log\nsecret/\n",
            "a.log": "x",
            "keep.py": "x",
            "secret/x.py": "x",
            "sub/.gitignore": "!important.log\ntmp/\n",
            "sub/important.log": "x",
            "sub/other.log": "x",
            "sub/tmp/t.py": "x",
            "tmp/t.py": "x",
        },
        [".gitignore", "keep.py", "sub/.gitignore", "sub/important.log", "tmp/t.py"],
        {"a.log": "ignored", "secret/": "ignored", "sub/other.log": "ignored", "sub/tmp/": "ignored"},
        id="nested-gitignore-negation-and-dir-patterns",
    ),
    pytest.param(
        {
            ".gitignore": "/notes.txt\n/out\n",
            "notes.txt": "x",
            "x/notes.txt": "x",
            "out/a.py": "x",
            "x/out/a.py": "x",
            "x/.gitignore": "/gen\n",
            "x/gen/g.py": "x",
            "x/y/gen/g.py": "x",
        },
        [".gitignore", "x/.gitignore", "x/notes.txt", "x/out/a.py", "x/y/gen/g.py"],
        {"notes.txt": "ignored", "out/": "ignored", "x/gen/": "ignored"},
        id="root-anchored-patterns",
    ),
    pytest.param(
        {
            ".gitignore": "logs/\n",
            "logs/a.txt": "x",
            "logs/.gitignore": "!a.txt\n",
            "docs/.gitignore": "*\n!*.md\n",
            "docs/a.md": "x",
            "docs/b.txt": "x",
        },
        [".gitignore", "docs/a.md"],
        {"logs/": "ignored", "docs/.gitignore": "ignored", "docs/b.txt": "ignored"},
        id="ignored-dir-cannot-be-reincluded-and-last-rule-wins",
    ),
    pytest.param(
        {".git/info/exclude": "*.tmp\n", ".git/config": "x", "a.tmp": "x", "a.py": "x", ".hg/x": "x"},
        ["a.py"],
        {".git/": "ignored", ".hg/": "ignored", "a.tmp": "ignored"},
        id="vcs-dirs-and-info-exclude",
    ),
    pytest.param(
        {
            "node_modules/pkg/index.js": "x",
            "web/node_modules/x.js": "x",
            "vendor/lib.go": "x",
            "third_party/a.c": "x",
            "pkg.egg-info/PKG-INFO": "x",
            "__pycache__/m.cpython-311.pyc": b"\x00",
            "env/pyvenv.cfg": "home = /usr",
            "env/lib/x.py": "x",
            ".env311/pyvenv.cfg": "home = /usr",
            "tools/env/run.py": "x",
            "rust/Cargo.toml": "[package]",
            "rust/target/debug/out.rs": "x",
            "docs/target/page.md": "x",
            "app.js": "x",
            "app.min.js": "x",
            "app.js.map": "x",
            "style.min.css": "x",
            "plugin/utc.js": "!function(t){" + "t.utc=t.u;" * 100 + "}(this);",  # minified, named like source
            "package-lock.json": "{}",
            "uv.lock": "x",
        },
        ["app.js", "docs/target/page.md", "rust/Cargo.toml", "tools/env/run.py"],
        {
            "node_modules/": "vendored",
            "web/node_modules/": "vendored",
            "vendor/": "vendored",
            "third_party/": "vendored",
            "pkg.egg-info/": "vendored",
            "__pycache__/": "vendored",
            "env/": "vendored",
            ".env311/": "vendored",
            "rust/target/": "vendored",
            "app.min.js": "vendored",
            "app.js.map": "vendored",
            "style.min.css": "vendored",
            "plugin/utc.js": "vendored",
            "package-lock.json": "vendored",
            "uv.lock": "vendored",
        },
        id="vendored-dirs-minified-and-lock-files",
    ),
    pytest.param(
        {
            "data.dat": b"abc\x00def",
            "late_nul.txt": b"a" * 9000 + b"\x00",
            "logo.png": "not really a png",
            "lib.SO": "x",
            "latin.txt": b"caf\xe9 \xff\xfe\xfa",
            "ok.txt": "caf\u00e9",
        },
        ["late_nul.txt", "ok.txt"],
        {"data.dat": "binary", "logo.png": "binary", "lib.SO": "binary", "latin.txt": "undecodable"},
        id="binary-and-undecodable",
    ),
    pytest.param(
        {".gitignore": "!\n*.log\nfoo\\\n", "a.log": "x", "a.py": "x"},
        [".gitignore", "a.py"],
        {"a.log": "ignored"},
        id="malformed-gitignore-lines-dropped",
    ),
    pytest.param({}, [], {}, id="empty-repo"),
    pytest.param(
        {
            "package.json": '{"main": "./dist/index.js", "types": "dist/index.d.ts"}',
            "dist/index.js": "x",
            "dist/index.d.ts": "x",
            "dist/index.min.js": "x",
            "build/out.js": "x",
        },
        ["dist/index.d.ts", "dist/index.js", "package.json"],
        {"build/": "vendored", "dist/index.min.js": "vendored"},
        id="a-published-package-whose-entry-points-are-in-dist",
    ),
    pytest.param(
        {
            "package.json": '{"main": "./dist/cjs/index.js", "module": "./dist/esm/index.js"}',
            "dist/cjs/index.js": "x",
            "dist/esm/index.js": "x",
            "dist/esm/index.d.ts": "x",
            "dist/esm/cjs/odd.js": "x",  # a folder of the kept build keeps its name
            "dist/esm-browser/index.js": "x",
            "dist/bin/uuid": "x",
        },
        ["dist/esm/cjs/odd.js", "dist/esm/index.d.ts", "dist/esm/index.js", "package.json"],
        {"dist/bin/": "vendored", "dist/cjs/": "vendored", "dist/esm-browser/": "vendored"},
        id="a-published-package-built-several-times-keeps-the-build-its-first-entry-point-names",
    ),
    pytest.param(
        {
            "package.json": '{"main": "./dist/index.js"}',
            "dist/index.js": "x",
            "src/index.ts": "x",
            "py/setup.py": "x",
            "py/build/lib/m.py": "x",
        },
        ["package.json", "py/setup.py", "src/index.ts"],
        {"dist/": "vendored", "py/build/": "vendored"},
        id="dist-beside-its-sources-and-a-python-build-stay-skipped",
    ),
]


@pytest.mark.parametrize(("files", "expected", "skipped"), WALK_CASES)
def test_walk_filters_tree(
    tmp_path: Path, files: dict[str, str | bytes], expected: list[str], skipped: dict[str, str]
) -> None:
    root = _make_tree(tmp_path / "repo", files)
    paths, stats = _walk(root)
    assert paths == expected
    assert _reasons(stats) == skipped
    assert stats.files_yielded == len(expected)
    file_skips = sum(1 for path, _ in stats.skipped_paths if not path.endswith("/"))
    assert stats.files_seen == stats.files_yielded + file_skips


def test_walk_prunes_skipped_directories(tmp_path: Path) -> None:
    root = _make_tree(
        tmp_path / "repo", {f"node_modules/p{i}/index.js": "x" for i in range(50)} | {"a.py": "x"}
    )
    paths, stats = _walk(root)
    assert paths == ["a.py"]
    assert stats.files_seen == 1
    assert stats.skipped == {"vendored": 1}


@pytest.mark.parametrize(
    ("size", "limit", "expected_reason"),
    [(100, 100, None), (101, 100, "too_large"), (0, 100, None), (5000, 4096, "too_large")],
)
def test_walk_size_limit(tmp_path: Path, size: int, limit: int, expected_reason: str | None) -> None:
    root = _make_tree(tmp_path / "repo", {"f.txt": "a" * size})
    paths, stats = _walk(root, max_file_bytes=limit)
    assert paths == ([] if expected_reason else ["f.txt"])
    assert _reasons(stats) == ({"f.txt": expected_reason} if expected_reason else {})


def test_walk_file_fields(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfprint('hi')\n"
    root = _make_tree(tmp_path / "repo", {"pkg/m.py": raw, "empty.txt": b""})
    files = {f.path: f for f in walk(root)}
    m = files["pkg/m.py"]
    assert m.text == "print('hi')\n"
    assert m.size == len(raw)
    assert m.content_hash == hashlib.sha256(raw).hexdigest()
    assert m.abs_path == root.resolve() / "pkg" / "m.py"
    assert files["empty.txt"].text == ""


def test_walk_orders_by_full_path(tmp_path: Path) -> None:
    names = ["a/b.py", "a-b.py", "a.py", "a.b/c.py", "B.py", "z/y/x.py", "z/y.py", "_.py"]
    root = _make_tree(tmp_path / "repo", dict.fromkeys(names, "x"))
    paths, _ = _walk(root)
    assert paths == sorted(names)


def test_walk_symlinks(tmp_path: Path) -> None:
    outside = _make_tree(tmp_path / "outside", {"secret.txt": "s", "d/x.py": "x"})
    root = _make_tree(tmp_path / "repo", {"real/a.py": "a", "b.py": "b"})
    (root / "out_file").symlink_to(outside / "secret.txt")
    (root / "out_dir").symlink_to(outside / "d", target_is_directory=True)
    (root / "rel_out").symlink_to("../outside/secret.txt")
    (root / "in_file.py").symlink_to(root / "b.py")
    (root / "in_dir").symlink_to("real", target_is_directory=True)
    (root / "real" / "loop").symlink_to("..", target_is_directory=True)
    (root / "broken").symlink_to(root / "missing.txt")
    paths, stats = _walk(root)
    assert paths == ["b.py", "in_dir/a.py", "in_file.py", "real/a.py"]
    assert _reasons(stats) == {
        "broken": "unreadable",
        "out_dir/": "symlink_outside",
        "out_file": "symlink_outside",
        "rel_out": "symlink_outside",
    }


def test_walk_symlink_cycle_between_siblings_terminates(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "repo", {"x/a.py": "a", "y/b.py": "b"})
    (root / "x" / "to_y").symlink_to("../y", target_is_directory=True)
    (root / "y" / "to_x").symlink_to("../x", target_is_directory=True)
    paths, _ = _walk(root)
    assert paths == ["x/a.py", "x/to_y/b.py", "y/b.py", "y/to_x/a.py"]


def test_walk_root_symlink_is_resolved(tmp_path: Path) -> None:
    real = _make_tree(tmp_path / "repo", {"a.py": "a"})
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    paths, stats = _walk(link)
    assert paths == ["a.py"]
    assert not stats.skipped


def test_walk_special_file_is_unreadable(tmp_path: Path) -> None:
    root = _make_tree(tmp_path / "repo", {"a.py": "a"})
    os.mkfifo(root / "pipe")
    paths, stats = _walk(root)
    assert paths == ["a.py"]
    assert _reasons(stats) == {"pipe": "unreadable"}


def test_walk_stats_cap_skipped_paths(tmp_path: Path) -> None:
    n = MAX_SKIPPED_PATHS + 5
    root = _make_tree(tmp_path / "repo", {f"f{i:05d}.png": "" for i in range(n)})
    paths, stats = _walk(root)
    assert paths == []
    assert stats.skipped == {"binary": n}
    assert stats.files_seen == n
    assert len(stats.skipped_paths) == MAX_SKIPPED_PATHS


@pytest.mark.parametrize(
    ("make_file", "error"), [(False, FileNotFoundError), (True, NotADirectoryError)], ids=["missing", "file"]
)
def test_walk_bad_root_raises_on_call(tmp_path: Path, make_file: bool, error: type[Exception]) -> None:
    root = tmp_path / "root"
    if make_file:
        root.write_text("x")
    with pytest.raises(error, match="repository root"):
        walk(root)  # raises on the call, before iteration starts


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"", False),
        (b"plain text\n", False),
        (b"a\x00b", True),
        (b"a" * 8191 + b"\x00", True),
        (b"a" * 8192 + b"\x00", False),
        ("x".encode("utf-16"), True),
    ],
)
def test_is_binary_bytes(head: bytes, expected: bool) -> None:
    assert is_binary_bytes(head) is expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", ""),
        (b"hello", "hello"),
        (b"\xef\xbb\xbfhello", "hello"),
        ("caf\u00e9".encode(), "caf\u00e9"),
        (b"\xff\xfe\xfa", None),
        (b"caf\xe9", None),
    ],
)
def test_decode_text(data: bytes, expected: str | None) -> None:
    assert decode_text(data) == expected


def test_walk_never_follows_entries_swapped_for_symlinks_while_it_runs(tmp_path: Path) -> None:
    """A real race: between the listing that saw a directory and a file and the reads, both become symlinks out."""
    secret = _make_tree(tmp_path / "home" / ".ssh", {"id_rsa": "PRIVATE KEY"})
    root = _make_tree(tmp_path / "repo", {"a.py": "x", "b/inner.py": "y", "c.py": "z"})
    stats = WalkStats()
    files = walk(root, stats=stats)
    first = next(files)  # the root is listed: b/ is a directory and c.py a file, as far as the walk knows
    assert first.path == "a.py"
    (root / "b").rename(tmp_path / "b.moved")
    (root / "b").symlink_to(secret, target_is_directory=True)
    (root / "c.py").unlink()
    (root / "c.py").symlink_to(secret / "id_rsa")
    rest = list(files)
    assert [f.path for f in rest] == []
    assert all("PRIVATE" not in f.text for f in rest)
    assert _reasons(stats) == {"b/": "unreadable", "c.py": "unreadable"}


def test_walk_within_refuses_a_root_that_resolves_outside(tmp_path: Path) -> None:
    allowed = _make_tree(tmp_path / "allowed", {"sub/a.py": "x"})
    secret = _make_tree(tmp_path / "secret", {"id_rsa": "PRIVATE KEY"})
    assert [f.path for f in walk(allowed / "sub", within=allowed)] == ["a.py"]
    (allowed / "sub").rename(tmp_path / "sub.moved")
    (allowed / "sub").symlink_to(secret, target_is_directory=True)
    with pytest.raises(OutsideRoot, match="outside the allowed root"):
        list(walk(allowed / "sub", within=allowed))
