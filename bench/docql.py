"""DocQL latency on a synthetic 2,000-file repository, with the SQLite plan of every query.

Generates 1,500 Python modules (classes, methods, functions, calls) and 500 Markdown documents (three heading
levels, code blocks), ingests them with the real pipeline, then runs 20 representative queries ``--repeat``
times each and prints p50/p95 latency per query and overall (target p95 < 30 ms), followed by
``EXPLAIN QUERY PLAN`` of each compiled SELECT to show which index narrows it.

With ``--headings N`` it instead times a grep over one Markdown file of N headings (default 40,000): the first
``--limit`` results of a common pattern (target ≤ 1 s), a window at the far end, and a pattern that backtracks
catastrophically on the last line, which must be cut at the query's deadline with the matches found before it.

    python bench/docql.py [--files 2000] [--repeat 20] [--keep DIR]
    python bench/docql.py --headings 40000 [--limit 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, bench/ is first on sys.path and bench/ingest.py would shadow the ingest package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from sift.config import Settings  # noqa: E402 - after the sys.path fix
from sift.db import open_database  # noqa: E402 - after the sys.path fix
from sift.ingest.pipeline import ingest  # noqa: E402 - after the sys.path fix
from sift.retrievers.docql import execute, parse, resolve_kb  # noqa: E402 - after the sys.path fix
from sift.retrievers.docql.compiler import compile_query  # noqa: E402 - after the sys.path fix

QUERIES = [
    "$.toc[?(@.level == 1)]",
    '$.toc[?(@.level == 2 && @.title startsWith "Usage")]',
    '$.toc[?(@.path == "docs/guide_0042.md")]',
    '$.content.heading("Configuration 17")',
    '$.content.h2("Usage 250")',
    '$.code.class("Service0777")',
    '$.code.function("helper_1234")',
    '$.code.method("Service0042.handle")',
    '$.code.method("validate")[0:10]',
    '$.code.query("Model1499")',
    "$.code.classes[0:20]",
    '$.code.functions[?(@.name startsWith "helper_12")]',
    '$.code.methods[?(@.parent == "Service0100")]',
    '$.code.callers("helper_0007")',
    '$.code.calls("Service0500.handle")',
    '$.files[?(@.path startsWith "pkg/mod_01")]',
    '$.entities[?(@.type == "class" && @.name == "Model0999")]',
    '$.structure.flat("pkg/mod_0123.py")',
    '$.structure.tree("docs/guide_0007.md")',
    '$.code[?(@.name == "handle" && @.path endsWith "mod_0999.py")].source',
]

PY = '''"""Module {i}."""

from pkg.mod_{j:04d} import helper_{j:04d}


class Model{i:04d}:
    """A record."""

    def __init__(self, value: int) -> None:
        self.value = value


class Service{i:04d}:
    """Handles requests for model {i}."""

    def handle(self, request: dict) -> bool:
        """Handle one request."""
        return self.validate(request) and helper_{j:04d}(request)

    def validate(self, request: dict) -> bool:
        return bool(request)


def helper_{i:04d}(request: dict) -> bool:
    """Help with request {i}."""
    return Service{i:04d}().validate(request)
'''

MD = """# Guide {i}

Overview of guide {i}.

## Usage {i}

Call `Service{i:04d}.handle` with a request.

```python
Service{i:04d}().handle({{"id": {i}}})
```

### Details {i}

More details.

## Configuration {i}

Set the option for guide {i}.
"""


def generate(root: Path, n_files: int) -> None:
    """Write ``n_files`` files: three quarters Python modules, the rest Markdown guides."""
    n_py = n_files * 3 // 4
    (root / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    for i in range(n_py):
        (root / "pkg" / f"mod_{i:04d}.py").write_text(PY.format(i=i, j=(i * 7 + 3) % n_py))
    for i in range(n_files - n_py):
        (root / "docs" / f"guide_{i:04d}.md").write_text(MD.format(i=i))


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def grep_bench(work: Path, headings: int, limit: int) -> None:
    """Time greps over one file of ``headings`` headings; print each result's size, marker and latency."""
    repo, settings = work / "headings", Settings(data_dir=work / "headings_data")
    if not repo.exists():
        repo.mkdir(parents=True)
        text = "".join(f"## t{i}\n\nx\n\n" if i % 2 else f"# t{i}\n" for i in range(headings))
        (repo / "big.md").write_text(text + "a" * 64 + "!\n")
    ingest(settings, repo, "headings", build_index=False)
    print(f"one file of {headings} headings, {(repo / 'big.md').stat().st_size // 1000} KB")
    engine = open_database(settings)
    kb_id, generation = resolve_kb(engine, "headings")
    print(f"\n{'ms':>8} {'shown':>6} {'total':>6} {'cut':>5}  query (--limit {limit})")
    worst = 0.0
    for q in ['$.content.grep("t1")', '$.content.grep("t1")[-3:]', '$.content.grep("^#+ t3999[0-9]$|^(a|aa)+$")']:
        t0 = time.perf_counter()
        result = execute(engine, kb_id, generation, q, limit=limit)
        ms = (time.perf_counter() - t0) * 1000
        worst = max(worst, ms) if "(a|aa)" not in q else worst
        shown = sum(len(v) for v in result["files"].values())
        print(f"{ms:8.1f} {shown:6d} {result['total']:6d} {result['deadline_exceeded']!s:>5}  {q}")
    print(f"\nslowest uncut grep: {worst:.0f} ms (target ≤ 1000 ms: {'OK' if worst <= 1000 else 'OVER TARGET'})")


def main() -> None:
    """Generate, ingest, time and explain."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument(
        "--keep", type=Path, default=None, help="work directory to keep (default: a temporary one)"
    )
    ap.add_argument("--headings", type=int, default=None, help="time grep over one file of this many headings")
    ap.add_argument("--limit", type=int, default=5, help="--limit of the grep queries (default 5)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="docql_bench_"))
    if args.headings:
        grep_bench(work, args.headings, args.limit)
        return
    repo, settings = work / "repo", Settings(data_dir=work / "data")
    if not repo.exists():
        generate(repo, args.files)
    started = time.perf_counter()
    summary = ingest(settings, repo, "bench", build_index=False)
    print(
        f"ingested {summary['files']} files, {summary['nodes']} nodes in {time.perf_counter() - started:.1f} s"
    )
    engine = open_database(settings)
    kb_id, generation = resolve_kb(engine, "bench")
    all_ms: list[float] = []
    print(f"\n{'p50 ms':>8} {'p95 ms':>8} {'total':>6}  query")
    for q in QUERIES:
        execute(engine, kb_id, generation, q)  # warm the page cache
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = execute(engine, kb_id, generation, q)
            times.append((time.perf_counter() - t0) * 1000)
        all_ms += times
        print(f"{statistics.median(times):8.2f} {percentile(times, 95):8.2f} {result['total']:6d}  {q}")
    p95 = percentile(all_ms, 95)
    verdict = "OK" if p95 < 30 else "OVER TARGET"
    print(
        f"\nall queries: p50 {statistics.median(all_ms):.2f} ms, p95 {p95:.2f} ms (target < 30 ms: {verdict})"
    )
    print("\nEXPLAIN QUERY PLAN")
    with engine.connect() as conn:
        for q in QUERIES:
            stmt = compile_query(parse(q), kb_id, generation).stmt
            sql = str(stmt.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True}))
            print(f"\n{q}")
            for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql):
                print(f"  {row[-1]}")


if __name__ == "__main__":
    main()
