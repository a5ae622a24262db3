"""docs/architecture.md stays a design document: short enough to read, and describing every installed package."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 300  # experiments and their figures go to lab/NOTEBOOK.md, not here


def _folder(package: str, package_dir: dict[str, str]) -> str:
    """The repository folder a package installs from: ``sift.retrievers.docql`` → ``retrievers/docql``, through the
    longest prefix that ``[tool.setuptools.package-dir]`` maps."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in package_dir:
            return "/".join([package_dir[prefix], *parts[n:]])
    return "/".join(parts)


def _packages() -> dict[str, str]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return {p: _folder(p, setuptools["package-dir"]) for p in setuptools["packages"]}


def test_folder_follows_the_package_dir_mapping() -> None:
    mapping = {"sift": "sift", "sift.migrations": "alembic", "sift.retrievers": "retrievers"}
    assert _folder("sift.migrations.versions", mapping) == "alembic/versions"
    assert _folder("sift.retrievers.docql", mapping) == "retrievers/docql"
    assert _folder("sift.fitted", mapping) == "sift/fitted"


def test_architecture_is_at_most_300_lines() -> None:
    lines = len(ARCHITECTURE.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"docs/architecture.md has {lines} lines; move experiments to lab/NOTEBOOK.md"


def test_architecture_names_every_package() -> None:
    """Each package of the wheel is named, by its dotted name or its folder (``retrievers/docql/``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    packages = _packages()
    assert "sift.graph" in packages and len(packages) > 10
    missing = [p for p, folder in packages.items() if p not in text and f"{folder}/" not in text]
    assert not missing, f"docs/architecture.md does not describe {missing}"
