"""Before/after check of two commits: identical quality figures, and fused-search latency measured in one run.

For each commit this builds a detached worktree ``bench/out/ab/<sha>/src`` and a venv ``bench/out/ab/<sha>/venv``
that installs the checkout editable without dependencies and reads the heavy ones (torch, sentence-transformers,
FAISS, …) from a shared venv's site-packages (``--shared-venv``). Then, each commit's own code on its own data:

1. ingest the eval projects into the data directories of its ``bench/retrieval.py`` and ``bench/answer.py``
   (skipped once done; the content-keyed embedding cache in each ``sift.db`` and the naive baseline's vectors are
   seeded from the other data directories, so unchanged chunk text is embedded once across commits);
2. run its ``bench/retrieval.py`` (dev and test) and its ``bench/answer.py`` (dev sets, then test sets, with
   ``--dump`` per question) and diff every quality figure, latency columns and lines removed; the verdict is
   ``identical`` or the differing lines, and the per-question answer rows that differ;
3. time ``Searcher.search`` (fused, k=10) over every eval question in two warm processes, one per commit,
   interleaved query by query for ``--rounds`` rounds, printing each round's p50/p95, the after/before ratio and
   the p95 of each query's best time over the rounds (which filters bursts of load from elsewhere).

``--hits`` also diffs each question's top-10 per channel (bm25, vector, smart, fused); ``--hits-only`` does just
that after ingesting, cheap enough to bisect a difference to one commit (a commit whose migrations cannot run,
e.g. two alembic heads inside a merge, cannot be a side). The question files are the after commit's, else the
before's, else this checkout's. Outputs stay under ``bench/out/ab/``: ``<sha>/retrieval.txt``,
``answer-{dev,test}.txt`` and ``.jsonl`` dumps, ``hits.jsonl``, and ``report-<before>-<after>.txt``.

    python bench/ab_commits.py BEFORE AFTER [--rounds 3] [--skip-quality] [--skip-latency] [--hits | --hits-only]
                               [--shared-venv DIR]

Run it with any Python 3.11; it uses the standard library only (the drivers it starts run in each commit's venv).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # this checkout's helper, whichever commit a driver then imports
from bench.embedding_cache import seed as seed_embeddings  # noqa: E402

sys.path.remove(str(ROOT))

DEV = ["eval/sets/attrs.jsonl", "eval/sets/marshmallow.jsonl", "eval/sets/click.jsonl"]
TEST = ["eval/sets/test/structlog.jsonl", "eval/sets/test/axios.jsonl"]
RETRIEVAL_DATA = "bench/out/retrieval/data"
ANSWER_DATA = "bench/out/answer-data"
ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def sh(*cmd: str | Path, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
    """Run a command, failing loudly."""
    return subprocess.run([str(c) for c in cmd], cwd=cwd, check=True, text=True, **kw)


class Side:
    """One commit's checkout, venv and outputs."""

    def __init__(self, label: str, sha: str, out: Path) -> None:
        self.label, self.sha = label, sha
        self.dir = out / sha
        self.src = self.dir / "src"
        self.venv = self.dir / "venv"
        self.python = self.venv / "bin" / "python"

    def env(self, cache: Path) -> dict[str, str]:
        """The environment its scripts run in: offline model, no inherited SIFT_* settings, shared sdist cache."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_") and k != "VIRTUAL_ENV"}
        env.update(ENV, SIFT_TEST_CACHE=str(cache), VIRTUAL_ENV=str(self.venv))
        env["PATH"] = f"{self.venv / 'bin'}:{env.get('PATH', '')}"
        env.pop("PYTHONPATH", None)
        return env

    def setup(self, shared_venv: Path) -> None:
        """Detached worktree and a venv sharing ``shared_venv``'s site-packages, each made once."""
        if not self.src.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            sh("git", "worktree", "add", "--detach", self.src, self.sha, cwd=ROOT)
        if not (self.venv / ".ready").exists():
            sh("python3.11", "-m", "venv", "--clear", self.venv)
            site = "import site; print(site.getsitepackages()[0])"
            shared = sh(shared_venv / "bin" / "python", "-c", site, capture_output=True).stdout.strip()
            mine = sh(self.python, "-c", site, capture_output=True).stdout.strip()
            Path(mine, "_shared_site.pth").write_text(shared + "\n")
            sh(self.python, "-m", "pip", "install", "-q", "-e", self.src, "--no-deps")
            (self.venv / ".ready").touch()


def ensure_sets(before: Side, after: Side) -> None:
    """Every question file the run uses exists in both checkouts: a side lacking one gets the other's copy, or
    this checkout's when neither has it (bisecting inside a branch older than the test sets)."""
    for rel in DEV + TEST:
        have = [s.src for s in (after, before) if (s.src / rel).exists()] + [ROOT]
        for side in (before, after):
            if not (side.src / rel).exists():
                (side.src / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(have[0] / rel, side.src / rel)
                print(f"{side.label}: copied {rel} from {have[0]}")


def seed_naive(sides: list[Side]) -> None:
    """Share the naive baseline's cached window vectors (named by a hash of their texts) between checkouts."""
    dirs = [s.src / "bench/out/retrieval" for s in sides]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    for d in dirs:
        for f in d.glob("naive-*.npy"):
            for other in dirs:
                if not (other / f.name).exists():
                    shutil.copy2(f, other / f.name)


def ingest(side: Side, cache: Path, others: list[Path], sources: Path) -> None:
    """Ingest every eval project into both data dirs with the commit's own code, once (a marker records it)."""
    marker = side.dir / "ingested.json"
    if marker.exists():
        print(f"{side.label}: ingest cached ({marker})")
        return
    log = side.dir / "ingest.log"
    with log.open("w") as fh:
        sh(side.python, __file__, "--driver", "ingest", "--src", side.src, "--seed", ",".join(map(str, others)),
           "--sets", sources, cwd=side.src, env=side.env(cache), stdout=fh, stderr=subprocess.STDOUT)
    marker.write_text(json.dumps({"sha": side.sha, "at": time.strftime("%F %T")}) + "\n")
    print(f"{side.label}: ingested ({log})")


def run_quality(side: Side, cache: Path) -> None:
    """The commit's own retrieval and answer benches; stdout to text files, answers dumped per question."""
    env = side.env(cache)
    jobs = {
        "retrieval.txt": ["bench/retrieval.py", "--splits", "dev,test"],
        "answer-dev.txt": ["bench/answer.py", "--sets", *DEV, "--dump", side.dir / "answer-dev.jsonl"],
        "answer-test.txt": ["bench/answer.py", "--sets", *TEST, "--dump", side.dir / "answer-test.jsonl"],
    }
    for name, args in jobs.items():
        t0 = time.perf_counter()
        with (side.dir / name).open("w") as out, (side.dir / (name + ".err")).open("w") as err:
            sh(side.python, *args, cwd=side.src, env=env, stdout=out, stderr=err)
        print(f"{side.label}: {name} ({time.perf_counter() - t0:.0f} s)")


TABLE_ROW = re.compile(r"^(\S+)((?:\s+-?\d+\.\d+){9})\s+\d+\.\d+\s+\d+\.\d+$")


def quality_lines(text: str) -> list[str]:
    """The quality figures of a bench's output: latency columns and lines, timings and ingest progress removed."""
    out = []
    for line in text.splitlines():
        if line.startswith(("ingest ", "ingested ", "latency_")):
            continue
        if line.startswith("channel") and line.endswith("p95 ms"):
            line = line.rsplit("p50 ms", 1)[0].rstrip()
        elif m := TABLE_ROW.match(line):
            line = m.group(1) + m.group(2)
        elif line.startswith("BM25 on "):
            line = "BM25 " + line.split(";", 1)[-1].strip()  # keep the top-10 agreement, not the timings
        out.append(line)
    return out


def per_question(before: Path, after: Path) -> list[str]:
    """Question ids whose dumped answer (text, citations, confidence, evidence) differs, latency ignored."""
    def rows(path: Path) -> dict[str, dict]:
        out = {}
        for line in path.read_text().splitlines():
            r = json.loads(line)
            r.pop("latency_ms", None)
            out[r["id"]] = r
        return out

    a, b = rows(before), rows(after)
    diffs = []
    for qid in sorted(set(a) | set(b)):
        if a.get(qid) != b.get(qid):
            keys = sorted(k for k in set(a.get(qid, {})) | set(b.get(qid, {}))
                          if a.get(qid, {}).get(k) != b.get(qid, {}).get(k))
            diffs.append(f"{qid}: differs in {', '.join(keys)}")
    return diffs


def compare(before: Side, after: Side) -> tuple[bool, list[str]]:
    """Diff every quality figure of the two sides; the report lines and whether they are identical."""
    report, same = [], True
    for name in ("retrieval.txt", "answer-dev.txt", "answer-test.txt"):
        a = quality_lines((before.dir / name).read_text())
        b = quality_lines((after.dir / name).read_text())
        diff = list(difflib.unified_diff(a, b, f"{before.label}/{name}", f"{after.label}/{name}", n=0, lineterm=""))
        report.append(f"{name}: {'identical' if not diff else 'DIFFERENT'} ({len(a)} figure lines)")
        report.extend(diff)
        same &= not diff
    for split in ("dev", "test"):
        qs = per_question(before.dir / f"answer-{split}.jsonl", after.dir / f"answer-{split}.jsonl")
        report.append(f"answer-{split}.jsonl: {len(qs)} questions differ (latency excluded)")
        report.extend(f"  {q}" for q in qs)
        same &= not qs
    return same, report


def side_by_side(before: Side, after: Side) -> list[str]:
    """The figure lines of both sides next to each other."""
    lines = []
    for name in ("retrieval.txt", "answer-dev.txt", "answer-test.txt"):
        a = quality_lines((before.dir / name).read_text())
        b = quality_lines((after.dir / name).read_text())
        lines.append(f"\n#### {name}: {before.label} | {after.label}")
        width = max((len(x) for x in a), default=0)
        for x, y in zip(a, b, strict=False):
            lines.append(f"{x:<{width}} | {y}" if x != y else f"{x:<{width}} | =")
    return lines


def latency(before: Side, after: Side, cache: Path, rounds: int) -> list[str]:
    """Warm fused-search timings of both commits in one run, interleaved query by query.

    Each round asks every query of both processes in turn (before then after on even queries, after then before on
    odd ones), so a burst of load from elsewhere on the machine lands on both sides alike.
    """
    sets = ",".join(str(after.src / p) for p in DEV + TEST)
    procs = {}
    for side in (before, after):
        procs[side.label] = subprocess.Popen(
            [str(side.python), __file__, "--driver", "latency", "--src", str(side.src), "--sets", sets],
            cwd=side.src, env=side.env(cache), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    counts = {label: json.loads(p.stdout.readline())["queries"] for label, p in procs.items()}
    n = counts[before.label]
    assert counts[after.label] == n, counts

    def ask(label: str, i: int) -> float:
        procs[label].stdin.write(f"{i}\n")
        procs[label].stdin.flush()
        return float(procs[label].stdout.readline())

    report = [f"fused search, k=10, {n} eval queries per round, interleaved query by query, warm searchers"]
    p95s: dict[str, list[float]] = {before.label: [], after.label: []}
    best: dict[str, list[float]] = {before.label: [float("inf")] * n, after.label: [float("inf")] * n}
    for r in range(1, rounds + 1):
        load = os.getloadavg()
        lat: dict[str, list[float]] = {before.label: [], after.label: []}
        for i in range(n):
            order = (before.label, after.label) if i % 2 == 0 else (after.label, before.label)
            for label in order:
                lat[label].append(ask(label, i))
        for label, ms in lat.items():
            best[label] = [min(x, y) for x, y in zip(best[label], ms, strict=True)]
            p50, p95 = statistics.median(ms), percentile(ms, 95)
            p95s[label].append(p95)
            report.append(f"round {r} {label:6} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  mean {statistics.fmean(ms):6.1f} ms"
                          f"  (loadavg at round start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
        report.append(f"round {r} ratio after/before p95 {p95s[after.label][-1] / p95s[before.label][-1]:.3f}")
    for p in procs.values():
        p.stdin.close()
        p.wait()
    a, b = statistics.median(p95s[before.label]), statistics.median(p95s[after.label])
    report.append(f"median p95 over rounds: {before.label} {a:.1f} ms, {after.label} {b:.1f} ms, "
                  f"ratio after/before {b / a:.3f} (limit 1.05)")
    a, b = percentile(best[before.label], 95), percentile(best[after.label], 95)
    report.append(f"p95 of each query's best time over the rounds (load bursts filtered): {before.label} {a:.1f} ms, "
                  f"{after.label} {b:.1f} ms, ratio after/before {b / a:.3f}")
    report.append("uptime after the rounds: " + sh("uptime", capture_output=True).stdout.strip())
    return report


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), so the drivers need not agree on a library."""
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


# --- drivers: run by a commit's venv, importing that commit's code -------------------------------------------


def _driver_path(src: Path) -> None:
    """Import the checkout's ``tests.sources`` and ``sift``; drop this file's folder (bench/ingest.py shadows)."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, str(src))


def driver_ingest(src: Path, seeds: list[Path], sources: Path) -> None:
    """Ingest the eval projects into the retrieval and answer benches' data dirs, as those benches would.

    The pinned archives come from ``sources`` (the after commit's ``tests/sources.py``: an older commit may pin
    fewer projects or keep its fetchers elsewhere); everything else is the checkout's own code.
    """
    _driver_path(src)
    import importlib.util

    from sift.config import Settings
    from sift.db import open_database
    from sift.embed import LocalEmbedder, make_embedder
    from sift.ingest.pipeline import ingest

    spec = importlib.util.spec_from_file_location("ab_sources", sources)
    pins = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(pins)  # type: ignore[union-attr]
    NPM_PACKAGES, fetch_npm, fetch_sdist = pins.NPM_PACKAGES, pins.fetch_npm, pins.fetch_sdist  # noqa: N806

    kbs = ["attrs", "axios", "click", "marshmallow", "structlog"]
    local = LocalEmbedder()
    for data, settings in ((RETRIEVAL_DATA, Settings(data_dir=src / RETRIEVAL_DATA, vector_index="flat")),
                           (ANSWER_DATA, Settings(data_dir=src / ANSWER_DATA))):
        engine = open_database(settings)
        engine.dispose()
        n = seed_embeddings(src / data / "sift.db", seeds + [src / RETRIEVAL_DATA / "sift.db"])
        print(f"{src / data / 'sift.db'}: {n} cached embeddings before ingest", flush=True)
        embedder = local if data == RETRIEVAL_DATA else make_embedder(settings)
        for kb in kbs:
            t0 = time.perf_counter()
            root = fetch_npm(kb) if kb in NPM_PACKAGES else fetch_sdist(kb)
            s = ingest(settings, root, kb, embedder=embedder)
            print(f"{data} {kb}: {s['status']} generation {s['generation']} {s['chunks']} chunks "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)


def driver_latency(src: Path, sets: list[Path]) -> None:
    """Serve timings over stdin: a warm fused searcher on the retrieval bench's data times the query it is given."""
    _driver_path(src)
    from sift.config import Settings
    from sift.db import open_database
    from sift.embed import LocalEmbedder
    from sift.eval.format import load_questions
    from sift.models import Filters
    from sift.retrievers.base import IndexCache
    from sift.retrievers.search import Searcher

    settings = Settings(data_dir=src / RETRIEVAL_DATA, vector_index="flat")
    engine = open_database(settings)
    searcher = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), LocalEmbedder())
    queries = [(q.query, Filters(kb=q.kb)) for p in sets for q in load_questions(p)[0] if q.kb]
    for text, filters in queries:  # warm: indexes, per-generation structures, the query encoder
        searcher.search(text, filters, k=10)
    print(json.dumps({"queries": len(queries)}), flush=True)
    for line in sys.stdin:  # one query index a line; answer its time in ms
        text, filters = queries[int(line)]
        t0 = time.perf_counter()
        searcher.search(text, filters, k=10)
        print((time.perf_counter() - t0) * 1000, flush=True)
    searcher.close()


def driver_hits(src: Path, sets: list[Path], out: Path) -> None:
    """Write each question's top-10 hits per channel and fused (path and lines), for a per-question diff."""
    _driver_path(src)
    from sift.config import Settings
    from sift.db import open_database
    from sift.embed import LocalEmbedder
    from sift.eval.format import load_questions
    from sift.models import Filters
    from sift.retrievers.base import IndexCache
    from sift.retrievers.search import Searcher

    settings = Settings(data_dir=src / RETRIEVAL_DATA, vector_index="flat")
    engine = open_database(settings)
    searcher = Searcher(engine, IndexCache(engine, settings.resolved_index_dir()), LocalEmbedder())
    span = lambda h: f"{h.path}:{h.start_line}-{h.end_line}"  # noqa: E731
    with out.open("w") as fh:
        for p in sets:
            for q in load_questions(p)[0]:
                if not q.kb:
                    continue
                f = Filters(kb=q.kb)
                row = {"id": q.id, "fused": [span(h) for h in searcher.search(q.query, f, k=10).hits]}
                for name in ("bm25", "vector", "smart"):
                    row[name] = [span(h) for h in searcher.channel(name, q.query, f, 10)]
                fh.write(json.dumps(row) + "\n")
    searcher.close()


def hits_diff(before: Path, after: Path) -> list[str]:
    """Questions whose top-10 of a channel differ between two ``driver_hits`` files, with both lists."""
    a = {r["id"]: r for r in map(json.loads, before.read_text().splitlines())}
    b = {r["id"]: r for r in map(json.loads, after.read_text().splitlines())}
    out = []
    for qid in a:
        for ch in ("fused", "bm25", "vector", "smart"):
            if a[qid][ch] != b.get(qid, {}).get(ch):
                out.append(f"{qid} {ch}:\n  before {a[qid][ch]}\n  after  {b.get(qid, {}).get(ch)}")
    return out


def main() -> int:
    """Parse arguments and run the check (or a driver, inside a commit's venv)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", nargs="?")
    ap.add_argument("after", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-quality", action="store_true", help="reuse the outputs of an earlier quality pass")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--shared-venv", type=Path, default=Path(os.environ.get("SIFT_AB_SHARED_VENV", "/work/main/.venv")),
                    help="venv whose site-packages supply the dependencies (default /work/main/.venv)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "ab")
    ap.add_argument("--hits", action="store_true", help="also diff each question's top-10 per channel")
    ap.add_argument("--hits-only", action="store_true",
                    help="only ingest and diff the top-10 lists (cheap enough to bisect with)")
    ap.add_argument("--driver", choices=("ingest", "latency", "hits"), help=argparse.SUPPRESS)
    ap.add_argument("--src", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--seed", default="", help=argparse.SUPPRESS)
    ap.add_argument("--sets", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.driver == "ingest":
        driver_ingest(args.src, [Path(p) for p in args.seed.split(",") if p], Path(args.sets))
        return 0
    if args.driver == "latency":
        driver_latency(args.src, [Path(p) for p in args.sets.split(",")])
        return 0
    if args.driver == "hits":
        driver_hits(args.src, [Path(p) for p in args.sets.split(",")], Path(args.seed))
        return 0
    if not (args.before and args.after):
        ap.error("give the before and after commits")
    rev = lambda c: sh("git", "rev-parse", "--verify", f"{c}^{{commit}}", cwd=ROOT, capture_output=True).stdout.strip()  # noqa: E731
    out = args.out.resolve()
    before, after = Side("before", rev(args.before), out), Side("after", rev(args.after), out)
    cache = Path(os.environ.get("SIFT_TEST_CACHE", out / "cache"))
    report = [f"before {before.sha}", f"after  {after.sha}"]
    for side in (before, after):
        side.setup(args.shared_venv)
    ensure_sets(before, after)
    seeds = sorted(out.glob(f"*/src/{RETRIEVAL_DATA}/sift.db"))  # every checkout's, this run's or earlier ones'
    if not args.skip_quality or args.hits_only:
        for side in (before, after):
            pins = next(p for p in (after.src, before.src, ROOT) if (p / "tests" / "sources.py").exists())
            ingest(side, cache, seeds, pins / "tests" / "sources.py")
    if args.hits_only:
        args.skip_quality = args.skip_latency = args.hits = True
    if not args.skip_quality:
        for side in (before, after):
            seed_naive([before, after])
            run_quality(side, cache)
    same = True
    if not args.hits_only:
        same, lines = compare(before, after)
        report += ["", "verdict: " + ("quality figures IDENTICAL" if same else "quality figures DIFFER"), *lines]
    if args.hits:
        sets = ",".join(str(after.src / p) for p in DEV + TEST)
        for side in (before, after):
            sh(side.python, __file__, "--driver", "hits", "--src", side.src, "--sets", sets,
               "--seed", side.dir / "hits.jsonl", cwd=side.src, env=side.env(cache))
        diffs = hits_diff(before.dir / "hits.jsonl", after.dir / "hits.jsonl")
        report += [f"hits.jsonl: {len(diffs)} (question, channel) top-10 lists differ", *diffs]
        same &= not diffs
    if not args.hits_only:
        report += side_by_side(before, after)
    if not args.skip_latency:
        report += ["", *latency(before, after, cache, args.rounds)]
    text = "\n".join(report) + "\n"
    (out / f"report-{before.sha[:7]}-{after.sha[:7]}.txt").write_text(text)
    print(text)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
