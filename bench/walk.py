"""Benchmark ingest.walk on a synthetic 10,000-file tree with .gitignore rules.

Run with ``python bench/walk.py``. Prints files/s, seconds (best of 3) and the ratio to a bare ``os.walk``
that only lists files (no ignore rules, no reading) measured in the same run. Target: under 2 s.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sift.ingest.walk import WalkStats, walk

ROOT_GITIGNORE = [
    "*.log", "*.tmp", "*.bak", "*.swp", "*~", ".DS_Store", "/out", "/release/", "cache/", "tmp/",
    "*.cover", ".coverage", "secret_*.txt", "!secret_keep.txt", "docs/_build/", "**/generated/*.py",
    "!**/generated/keep.py", "*.orig", "*.rej", "logs/**", "local_settings.py", "*.sqlite-journal",
    ".env", ".env.*", "!.env.example",
]  # fmt: skip
PKG_GITIGNORE = ["*.dat", "scratch/", "!important.dat", "/build_info.txt", "fixtures/big_*"]
SOURCE_SNIPPET = '"""Synthetic module."""\n\n\ndef f(x: int) -> int:\n    return x + 1\n' * 4


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)


def make_tree(root: Path, total: int = 10_000, seed: int = 7) -> int:
    """Write a synthetic repository of ``total`` files under ``root``; return the number written."""
    rng = random.Random(seed)
    _write(root / ".gitignore", "\n".join(ROOT_GITIGNORE) + "\n")
    written = 1
    # About a fifth of the files sit in pruned dependency/build directories.
    for i in range(total // 10):
        _write(root / "node_modules" / f"dep{i % 40}" / "lib" / f"m{i}.js", "module.exports = 1;\n")
        _write(root / "web" / "node_modules" / f"w{i % 20}" / f"i{i}.js", "export default 1;\n")
        written += 2
    n_pkgs = 20
    for p in range(n_pkgs):
        _write(root / f"pkg{p}" / ".gitignore", "\n".join(PKG_GITIGNORE) + "\n")
        written += 1
    kinds = ["py", "py", "py", "md", "txt", "log", "tmp", "dat", "png", "bin", "gen", "scratch"]
    while written < total:
        p, d1, d2 = rng.randrange(n_pkgs), rng.randrange(6), rng.randrange(5)
        base = root / f"pkg{p}" / f"sub{d1}" / f"leaf{d2}"
        kind = rng.choice(kinds)
        name = f"f{written}"
        if kind == "py":
            _write(base / f"{name}.py", SOURCE_SNIPPET)
        elif kind in ("md", "txt"):
            _write(base / f"{name}.{kind}", f"# Title {name}\n\nSome prose.\n")
        elif kind in ("log", "tmp", "dat"):
            _write(base / f"{name}.{kind}", "ignored\n")
        elif kind == "png":
            _write(base / f"{name}.png", b"\x89PNG\r\n\x1a\n" + bytes(64))
        elif kind == "bin":
            _write(base / f"{name}.blob", b"\x00\x01\x02" * 100)
        elif kind == "gen":
            _write(base / "generated" / f"{name}.py", SOURCE_SNIPPET)
        else:
            _write(base / "scratch" / f"{name}.py", SOURCE_SNIPPET)
        written += 1
    return written


def _best_of(n: int, fn: Callable[[], int]) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(n):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _bare_os_walk(root: Path) -> int:
    count = 0
    for _dirpath, _dirnames, filenames in os.walk(root):
        count += len(filenames)
    return count


def main() -> None:
    """Build the synthetic tree, time walk() and a bare os.walk, and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="files in the synthetic tree")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best is kept")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sift-bench-walk-") as tmp:
        root = Path(tmp) / "repo"
        t0 = time.perf_counter()
        total = make_tree(root, args.files)
        print(f"tree: {total} files written in {time.perf_counter() - t0:.2f}s under {root}")

        stats_holder: list[WalkStats] = []

        def run_walk() -> int:
            stats = WalkStats()
            stats_holder.append(stats)
            return sum(1 for _ in walk(root, stats=stats))

        base_s, base_n = _best_of(args.repeat, lambda: _bare_os_walk(root))
        walk_s, yielded = _best_of(args.repeat, run_walk)
        stats = stats_holder[-1]

    print(f"baseline os.walk : {base_n} files listed in {base_s:.3f}s ({base_n / base_s:,.0f} files/s)")
    print(
        f"ingest.walk      : {yielded} yielded of {total} on disk in {walk_s:.3f}s "
        f"({total / walk_s:,.0f} files/s on disk, {yielded / walk_s:,.0f} yielded files/s)"
    )
    print(f"files seen       : {stats.files_seen} (the rest pruned with their directories)")
    print(f"skipped          : {dict(sorted(stats.skipped.items()))}")
    print(f"ratio walk/os.walk: {walk_s / base_s:.1f}x")
    verdict = "PASS" if walk_s < 2.0 else "FAIL"
    print(f"target < 2.0s    : {verdict} ({walk_s:.3f}s)")


if __name__ == "__main__":
    main()
