"""Walk real repositories (the attrs sdist, a published npm package) and check what comes out."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sift.ingest.walk import WalkStats, walk


def test_walk_attrs_sdist_yields_package_sources(attrs_src: Path) -> None:
    stats = WalkStats()
    files = list(walk(attrs_src, stats=stats))
    paths = [f.path for f in files]

    expected_py = {p.relative_to(attrs_src).as_posix() for p in (attrs_src / "src" / "attr").glob("*.py")}
    assert len(expected_py) >= 10
    assert expected_py <= set(paths)
    assert {"README.md", "pyproject.toml", "src/attr/__init__.pyi"} <= set(paths)

    assert paths == sorted(paths)
    assert len(paths) == len(set(paths))
    assert stats.files_yielded == len(files)
    assert stats.files_seen == stats.files_yielded + sum(stats.skipped.values())
    assert set(stats.skipped) <= {"binary"}  # the PNG logos under docs/_static
    assert stats.skipped["binary"] >= 1
    assert all(path.endswith((".png", ".afdesign")) for path, _ in stats.skipped_paths)

    init = next(f for f in files if f.path == "src/attr/__init__.py")
    raw = (attrs_src / "src" / "attr" / "__init__.py").read_bytes()
    assert init.content_hash == hashlib.sha256(raw).hexdigest()
    assert "def " in init.text or "import" in init.text
    assert init.abs_path.read_bytes() == raw


def test_walk_a_published_npm_package_keeps_the_build_its_entry_point_names(uuid_src: Path) -> None:
    stats = WalkStats()
    paths = [f.path for f in walk(uuid_src, stats=stats)]
    assert {"README.md", "package.json", "dist/esm/index.js", "dist/esm/index.d.ts", "dist/esm/v4.js",
            "dist/esm/validate.d.ts"} <= set(paths)
    # package.json's "module" names dist/esm: the other builds of the same modules are left out
    assert not [p for p in paths if p.startswith("dist/") and not p.startswith("dist/esm/")]
    assert dict(stats.skipped_paths) == {"dist/cjs/": "vendored", "dist/cjs-browser/": "vendored",
                                         "dist/esm-browser/": "vendored"}

