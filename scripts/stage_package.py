"""Lay out the ``sift`` package as a wheel installs it, as a tree of links to the repository's files.

The repository's layer folders become ``sift.*`` through setuptools' package-dir mapping, which static tools
(import-linter's grimp, mypy) cannot follow: they find a package's modules by walking its directory. This
mirrors the mapping in pyproject.toml into ``DEST/sift/...`` (directories created, files symlinked), so
they can run on ``DEST`` and report paths that map back to the repository by prefix.

Usage: python scripts/stage_package.py DEST
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stage(dest: Path) -> None:
    """Create ``dest/sift`` mirroring every ``tool.setuptools.package-dir`` entry."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    # Longest package names last, so a subpackage's own folder wins over its parent's copy of the same name.
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        source = ROOT / folder
        target = dest.joinpath(*package.split("."))
        for path in sorted(source.rglob("*")):
            if "__pycache__" in path.parts or path.is_dir():
                continue
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    stage(Path(sys.argv[1]))
