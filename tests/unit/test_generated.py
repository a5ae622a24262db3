"""When a published package's dist/ is its code (``ingest/generated.py``): the manifest's entry points, read from
real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sift.ingest.generated import (
    MAX_MANIFEST_BYTES,
    MINIFIED_MIN_CHARS,
    entry_points,
    minified,
    output_part,
    package_output,
)


@pytest.mark.parametrize(("manifest", "expected"), [
    ({"main": "dist/index.js"}, ["dist/index.js"]),
    ({"name": "x", "version": "1.0.0"}, []),
    ({"exports": {".": {"import": "./dist/a.mjs", "require": ["./dist/a.cjs"]}, "./pkg": "./package.json"}},
     ["./dist/a.mjs", "./dist/a.cjs", "./package.json"]),
    ({"bin": {"tool": "dist/cli.js"}, "browser": {"./fs.js": False}}, ["dist/cli.js"]),
    ({"main": "dist/cjs/index.js", "module": "dist/esm/index.js", "types": "dist/types/index.d.ts"},
     ["dist/types/index.d.ts", "dist/esm/index.js", "dist/cjs/index.js"]),  # declarations, then modules
    ({"main": 3, "types": None}, []),  # not strings
    ([], []),  # not an object
    ("dist/index.js", []),
])
def test_entry_points_table(manifest: Any, expected: list[str]) -> None:
    assert entry_points(manifest) == expected


@pytest.mark.parametrize(("paths", "folder", "expected"), [
    (["./dist/index.js"], "dist", ""),  # directly in the folder: all of it
    (["dist"], "dist", ""),
    (["./dist/esm/index.js", "./dist/cjs/index.js"], "dist", "esm"),  # the first entry point's build
    (["index.js", "build/es/x.js"], "build", "es"),
    (["distribution/index.js", "dist.js"], "dist", None),
    (["./lib/../dist/x.js"], "dist", ""),
    (["../dist/x.js", "/dist/x.js"], "dist", None),  # outside the package, or absolute
    (["build\\out.js"], "build", ""),
    ([], "dist", None),
])
def test_output_part_table(paths: list[str], folder: str, expected: str | None) -> None:
    assert output_part(paths, folder) == expected


def _package(tmp_path: Path, manifest: str | bytes, *dirs: str) -> set[str]:
    data = manifest.encode() if isinstance(manifest, str) else manifest
    (tmp_path / "package.json").write_bytes(data)
    for d in dirs:
        (tmp_path / d).mkdir()
    return {p.name for p in tmp_path.iterdir()}


def test_dist_named_by_the_manifest_with_no_sources_beside_it_is_the_code(tmp_path: Path) -> None:
    names = _package(tmp_path, json.dumps({"main": "./dist/index.js"}), "dist")
    assert package_output("dist", str(tmp_path), names) == ""
    assert package_output("node_modules", str(tmp_path), names) is None  # only build-output folders


@pytest.mark.parametrize(("manifest", "dirs"), [
    (json.dumps({"main": "./dist/index.js"}), ("dist", "src")),  # the sources are beside it
    (json.dumps({"main": "./dist/index.js"}), ("dist", "lib")),
    (json.dumps({"main": "index.js"}), ("dist",)),  # the entry point is elsewhere
    ("{not json", ("dist",)),
    (b"\xff\xfe not utf-8", ("dist",)),
    ("[" * 100_000 + "]" * 100_000, ("dist",)),  # nesting too deep for the parser
])
def test_dist_stays_skipped(tmp_path: Path, manifest: str | bytes, dirs: tuple[str, ...]) -> None:
    assert package_output("dist", str(tmp_path), _package(tmp_path, manifest, *dirs)) is None


def test_a_manifest_that_is_a_symlink_or_too_large_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"main": "dist/index.js"}))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "dist").mkdir()
    os.symlink(outside, pkg / "package.json")
    assert package_output("dist", str(pkg), {"package.json", "dist"}) is None
    big = json.dumps({"main": "dist/index.js", "pad": "x" * MAX_MANIFEST_BYTES})
    (pkg / "package.json").unlink()
    (pkg / "package.json").write_text(big)
    assert package_output("dist", str(pkg), {"package.json", "dist"}) is None


_BUNDLE = "!function(t,e){" + "var a=t.x,b=e.y;" * 60 + "}(this);"  # one line of about a thousand characters
_SOURCE = "\n".join(f"  const value{i} = compute(input, {i});" for i in range(40))


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("plugin/utc.js", _BUNDLE, True),  # a bundle named like source
    ("theme.css", "a{color:red}" * 100, True),
    ("esm/index.mjs", _BUNDLE + "\n" + _SOURCE, False),  # one long line among many short ones
    ("src/index.js", _SOURCE, False),
    ("regex.js", "export default /^" + "[0-9a-f]" * 40 + "$/i;", False),  # one line, but short
    ("data.json", _BUNDLE, False),  # not a script or stylesheet
    ("core.py", _BUNDLE, False),
    ("empty.js", "", False),
])
def test_minified(name: str, text: str, expected: bool) -> None:
    assert minified(name, text) is expected


def test_minified_needs_a_file_of_some_length() -> None:
    line = "x" * (MINIFIED_MIN_CHARS - 1)
    assert not minified("a.js", line) and minified("a.js", line + "x")
