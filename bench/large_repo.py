"""A repository of over 10,000 files for the ingest bench, built from pinned packages (``large_repo.json``).

Each package (name, registry, version and the sha256 of its archive, fetched and checked by ``tests/sources.py``)
is unpacked once into the test cache and linked into one tree, ``<cache>/large-repo-<digest>/<name>/``, like the
packages of a monorepo: Django, SymPy, pandas and SQLAlchemy (Python with C/Cython, reST and HTML templates) and RxJS
(TypeScript). The tree's name carries a digest of the pins, so changing a pin builds a new tree.

    python bench/large_repo.py     # build it (downloads about 40 MB once) and print its path and file count
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = Path(__file__).with_name("large_repo.json")


def _pins() -> list[dict[str, str]]:
    return json.loads(PINS.read_text(encoding="utf-8"))


def _link_tree(src: Path, dest: Path) -> None:
    """``dest`` as a copy of ``src`` made of hard links (a plain copy where links cannot be made)."""

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dest, copy_function=link, symlinks=True)


def large_repo() -> Path:
    """The unpacked tree of every pinned package (built on first use); each package in a folder of its name."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from tests.sources import CACHE, fetch_npm, fetch_sdist

    pins = _pins()
    digest = hashlib.sha256(json.dumps(pins, sort_keys=True).encode()).hexdigest()[:12]
    target = CACHE / f"large-repo-{digest}"
    marker = target.with_name(target.name + ".complete")
    if marker.exists():
        return target
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for pin in pins:
        fetch = fetch_sdist if pin["registry"] == "pypi" else fetch_npm
        _link_tree(fetch(pin["name"], pin["version"], pin["sha256"]), tmp / pin["name"])
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    marker.write_text("ok")
    return target


if __name__ == "__main__":
    repo = large_repo()
    print(repo, sum(len(files) for _, _, files in os.walk(repo)), "files")
