"""Product code stays small enough to read: no module over ``MAX_MODULE_LINES`` lines, no function or method over
``MAX_FUNCTION_LINES``.

The product is what installs as ``sift``: the packages that pyproject.toml lists, found in their folders through
its ``package-dir`` mapping. Migrations (``sift.migrations``, the ``alembic`` folder) are left out, as are tests,
bench, lab and scripts, which do not install. A function's length runs from its ``def`` line to its last line
(decorators excluded), nested functions counted inside the function that holds them and on their own.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
EXCLUDED = ("sift.migrations",)


def product_modules() -> list[Path]:
    """The ``.py`` files of every installed package but the migrations."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools["package-dir"]
    files: set[Path] = set()
    for package in setuptools["packages"]:
        if any(package == ex or package.startswith(ex + ".") for ex in EXCLUDED):
            continue
        root = max((p for p in mapping if package == p or package.startswith(p + ".")), key=len)
        folder = ROOT / mapping[root] / Path(*package.split(".")[len(root.split(".")):])
        files.update(folder.glob("*.py"))
    return sorted(files)


def test_the_product_modules_are_found() -> None:
    folders = {p.relative_to(ROOT).parts[0] for p in product_modules()}
    assert folders == {"sift", "graph", "retrievers", "ingest", "api", "cli", "eval"}
    assert ROOT / "graph" / "writer" / "doc_units.py" in product_modules()


def test_no_product_module_is_over_the_limit() -> None:
    long = {str(p.relative_to(ROOT)): n for p in product_modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_product_function_is_over_the_limit() -> None:
    long: dict[str, int] = {}
    for path in product_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
