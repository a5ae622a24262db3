"""Ingestion benchmark on a real repository (the attrs sdist from PyPI, cached in tests/.cache), or with
``--large`` on a repository of over 10,000 files built from pinned packages (``bench/large_repo.py``).

Phases, each in its own subprocess so peak RSS is its own:
  parse   — walk + parse + chunk in memory (no database, no embeddings), one core; baseline in the same run:
            bare tree-sitter ``parser.parse`` of the same code files (no tree walk, no chunking).
  store   — the full pipeline without embeddings (``--no-index``): walk, parse, chunk, write SQLite.
  full    — the full pipeline with embeddings and indexes (and when its keyword index was published: the time
            to searchable), then a no-op re-ingest and a one-file-changed re-ingest, printed as ratios to the full
            ingest.
  searchable — the pipeline up to its keyword-only publication, stopped before embedding (as a stop request
            would): files/s and chunks/s of the walk, the parse and the BM25 index, the time to searchable, and
            peak RSS (of the ingest process, of its parse children, and at the end of each stage). Minutes where
            a full ingest of the large repository takes hours on two cores.
  embed   — the full pipeline on the first ``--embed-files`` files (path order) of the repository: the same
            stages plus embedding, and the full ingest time of the whole repository extrapolated from its
            embedding rate (chunks/s) and its chunk count (measured by ``searchable`` in the same run).
  index   — the full pipeline on the whole repository with a stand-in encoder (deterministic vectors, no model):
            the embedding stage's memory (vectors, FAISS, BM25, the embedding cache) at full scale, in minutes.

``--baseline DIR`` runs every phase a second time with the code of another checkout (e.g. ``git archive main``
unpacked), staged as the wheel lays it out (``scripts/stage_package.py``), and prints its figures below this
checkout's; ``--checkout DIR`` measures a frozen export of this code the same way (edits made while it runs do not
leak into it).

Usage: python bench/ingest.py [--repo PATH | --large] [--phases parse,store,full] [--repeat 3]
                              [--baseline DIR] [--checkout DIR] [--embed-files 300]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a --baseline child imports the staged checkout's sift
sys.path.insert(0, str(ROOT / "tests"))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _descendants_peak_mb() -> float:
    """The largest peak resident set (``VmHWM``) among this process's living descendants: the parse workers are
    forked by a fork server, so ``RUSAGE_CHILDREN`` (finished children waited for) never sees them."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo, peak = set(), [os.getpid()], 0.0
    while todo:
        pid = todo.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                found.add(child)
                todo.append(child)
    for pid in found:
        try:
            with open(f"/proc/{pid}/status") as fh:
                hwm = next((line for line in fh if line.startswith("VmHWM:")), None)
        except OSError:
            continue
        if hwm:
            peak = max(peak, int(hwm.split()[1]) / 1024)
    return peak


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class StageClock:
    """The pipeline's progress callback, timing each stage and reading memory where each one ends.

    Stages as the progress reports them: ``walk`` (until the last file found), ``parse`` (until the last file
    parsed and written), ``searchable`` (the BM25 index built and published), ``embed`` (from the model load to
    the last index file written).
    """

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.last: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self.peak: dict[str, float] = {}
        self.rss: dict[str, float] = {}
        self.children_peak = 0.0
        self.first_walk: float | None = None

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        phase = {"model": "embed", "index": "embed"}.get(phase, phase)
        now = self.last[phase] = time.perf_counter()
        if phase == "walk" and self.first_walk is None:
            self.first_walk = now
        if phase == "parse" and (done % 500 == 0 or done == total):
            self.children_peak = max(self.children_peak, _descendants_peak_mb())
        if phase != "embed" or done:
            self.count[phase] = max(done, self.count.get(phase, 0)) if phase != "searchable" else done
        if phase in ("searchable",) or (phase == "parse" and total is not None and done == total):
            self.rss[phase], self.peak[phase] = round(_current_rss_mb(), 1), round(_rss_mb(), 1)

    def stages(self, summary: dict) -> dict:
        """Seconds, files/s and chunks/s per stage, and memory where each ended."""
        out: dict[str, object] = {"setup_s": round((self.first_walk or self.t0) - self.t0, 2)}
        start = self.first_walk or self.t0
        chunks = summary.get("chunks", 0)
        for stage in ("walk", "parse", "searchable", "embed"):
            if stage not in self.last:
                continue
            seconds = max(self.last[stage] - start, 1e-9)
            out[f"{stage}_s"] = round(seconds, 2)
            out[f"{stage}_files_per_s"] = round(summary.get("files", 0) / seconds, 1)
            if stage != "walk":
                n = (summary.get("index") or {}).get("chunks_total", chunks) if stage == "embed" else chunks
                out[f"{stage}_chunks_per_s"] = round(n / seconds, 1)
            if stage in self.rss:
                out[f"{stage}_rss_mb"], out[f"{stage}_peak_mb"] = self.rss[stage], self.peak[stage]
            start = self.last[stage]
        out["parse_children_peak_mb"] = round(self.children_peak, 1)
        return out


def phase_parse(repo: Path, repeat: int) -> dict:
    """Walk + parse + chunk in memory; and the bare tree-sitter parse baseline."""
    import tree_sitter_language_pack as tslp

    from sift.ingest.chunk import ChunkLimits, chunk_tree
    from sift.ingest.parsers import ParserRegistry
    from sift.ingest.walk import walk
    from sift.languages import classify
    from sift.text import split_lines

    files = list(walk(repo))
    registry = ParserRegistry()
    limits = ChunkLimits()
    lines = sum(f.text.count("\n") + 1 for f in files)
    code = [(f, classify(f.path)[0]) for f in files if classify(f.path)[1].value == "code"]
    code_lines = sum(f.text.count("\n") + 1 for f, _ in code)
    best, best_base, chunks = float("inf"), float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        chunks = 0
        for f in files:
            language, source_type = classify(f.path)
            tree, _err = registry.parse(f.path, f.text, language, source_type)
            chunks += len(chunk_tree(tree, split_lines(f.text), limits))
        best = min(best, time.perf_counter() - t0)
        parsers: dict[str, object] = {}
        t0 = time.perf_counter()
        for f, language in code:
            parser = parsers.get(language) or parsers.setdefault(language, tslp.get_parser(language))
            parser.parse(f.text.encode())  # type: ignore[attr-defined]
        best_base = min(best_base, time.perf_counter() - t0)
    return {
        "files": len(files), "lines": lines, "code_lines": code_lines, "chunks": chunks,
        "seconds": round(best, 4), "files_per_s": round(len(files) / best), "lines_per_s": round(lines / best),
        "baseline_treesitter_seconds": round(best_base, 4),
        "baseline_code_lines_per_s": round(code_lines / best_base) if best_base else None,
        "ratio_to_bare_treesitter": round(best / best_base, 2) if best_base else None,
        "peak_rss_mb": round(_rss_mb(), 1),
    }


def _ingest(repo: Path, data: Path, build_index: bool) -> dict:
    from sift.config import Settings
    from sift.ingest.pipeline import ingest

    t0 = time.perf_counter()
    summary = ingest(Settings(data_dir=data), repo, "bench", build_index=build_index)
    summary["wall_seconds"] = round(time.perf_counter() - t0, 3)
    return summary


def phase_store(repo: Path, repeat: int) -> dict:
    """Full pipeline without embeddings into a fresh SQLite database."""
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            s = _ingest(repo, Path(tmp), build_index=False)
            if best is None or s["wall_seconds"] < best["wall_seconds"]:
                best = s
    assert best is not None
    return {"files": best["files"], "lines": best["lines"], "nodes": best["nodes"], "chunks": best["chunks"],
            "seconds": best["wall_seconds"], "files_per_s": round(best["files"] / best["wall_seconds"]),
            "lines_per_s": round(best["lines"] / best["wall_seconds"]), "peak_rss_mb": round(_rss_mb(), 1)}


def phase_full(repo: Path, repeat: int) -> dict:
    """Full ingest with embeddings, a no-op re-ingest and a one-file-changed re-ingest."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        shutil.copytree(repo, work)
        data = Path(tmp) / "data"
        full = _ingest(work, data, build_index=True)
        noop = _ingest(work, data, build_index=True)
        target = next(p for p in sorted(work.rglob("*.py")) if p.stat().st_size > 2000)
        target.write_text(target.read_text() + "\n\ndef bench_added_function():\n    return 42\n")
        one = _ingest(work, data, build_index=True)
    index = full.get("index") or {}
    return {
        "files": full["files"], "chunks": full["chunks"], "full_seconds": full["wall_seconds"],
        "searchable_seconds": full.get("searchable_seconds"),
        "searchable_ratio": round((full.get("searchable_seconds") or 0) / full["wall_seconds"], 4),
        "noop_seconds": noop["wall_seconds"], "one_file_seconds": one["wall_seconds"],
        "noop_ratio": round(noop["wall_seconds"] / full["wall_seconds"], 3),
        "one_file_ratio": round(one["wall_seconds"] / full["wall_seconds"], 3),
        "embed_chunks_per_s": index.get("embed_chunks_per_s"),
        "one_file_embedded": (one.get("index") or {}).get("embedded"),
        "peak_rss_mb": round(_rss_mb(), 1),
    }


def _stopping_clock(stop: object) -> StageClock:
    """A StageClock that asks the run to stop once its keyword index is published (before the model loads)."""
    clock = StageClock()

    def report(phase: str, done: int, total: int | None) -> None:
        clock(phase, done, total)
        if phase == "searchable":
            stop.request("the bench's searchable-only stop")  # type: ignore[attr-defined]

    clock.report = report  # type: ignore[attr-defined]
    return clock


def phase_searchable(repo: Path, repeat: int) -> dict:
    """Walk, parse, write and publish the keyword index; stop before embedding. Per-stage rates and memory."""
    from sift.config import Settings
    from sift.ingest.liveness import Interrupted, StopRequest
    from sift.ingest.pipeline import ingest

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        stop = StopRequest()
        clock = _stopping_clock(stop)
        try:
            ingest(settings, repo, "bench", progress=clock.report, stop=stop)  # type: ignore[attr-defined]
            raise RuntimeError("the ingest ran to its end: no keyword-only publication to stop after")
        except Interrupted:
            pass
        seconds = round(time.perf_counter() - clock.t0, 2)
        from sqlalchemy import text

        from sift.db import open_database

        with open_database(settings).connect() as conn:
            job = conn.execute(text("SELECT ready FROM ingest_jobs ORDER BY id DESC LIMIT 1")).one()
            files = conn.execute(text("SELECT count(*) FROM files")).scalar_one()
            chunks = conn.execute(text("SELECT count(*) FROM chunks")).scalar_one()
    summary = {"files": files, "chunks": chunks}
    assert job.ready == "searchable", job
    return {"files": files, "chunks": chunks, "searchable_seconds": seconds, **clock.stages(summary),
            "peak_rss_mb": round(_rss_mb(), 1)}


def phase_embed(repo: Path, repeat: int) -> dict:
    """The full pipeline on the first ``EMBED_FILES`` files of the repository (path order)."""
    from sift.config import Settings
    from sift.ingest.pipeline import ingest
    from sift.ingest.walk import walk

    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "repo"
        for i, wf in enumerate(walk(repo)):
            if i >= EMBED_FILES:
                break
            (subset / wf.path).parent.mkdir(parents=True, exist_ok=True)
            os.link(wf.abs_path, subset / wf.path)
        clock = StageClock()
        summary = ingest(Settings(data_dir=Path(tmp) / "data"), subset, "bench", progress=clock)
        seconds = round(time.perf_counter() - clock.t0, 2)
    index = summary.get("index") or {}
    embedded = (index.get("embedded") or 0) + ((index.get("windows") or {}).get("embedded") or 0)
    embed_s = (index.get("seconds") or {}).get("embed") or 0.0
    return {"files": summary["files"], "chunks": summary["chunks"], "seconds": seconds,
            "searchable_seconds": summary.get("searchable_seconds"), **clock.stages(summary),
            "embedded_passages": embedded, "embed_passages_per_s": round(embedded / embed_s, 2) if embed_s else None,
            "passages_per_chunk": round(embedded / summary["chunks"], 3) if summary["chunks"] else None,
            "peak_rss_mb": round(_rss_mb(), 1)}


class StandInEncoder:
    """Deterministic unit vectors of the local model's size, seeded by each text's hash: the ``index`` phase's
    encoder, so that the embedding stage's memory (vectors held, FAISS and BM25 built, the embedding cache) is
    measured at the whole repository's scale without hours of model time. Its vectors mean nothing."""

    model_id = "bench-stand-in"
    dim = 384

    def embed_documents(self, texts: list[str]) -> object:
        import hashlib

        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest())
            out[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str) -> object:
        return self.embed_documents([text])[0]  # type: ignore[index]


def phase_index(repo: Path, repeat: int) -> dict:
    """The full pipeline on the whole repository with the stand-in encoder: every stage's memory at full scale."""
    from sift.config import Settings
    from sift.ingest.pipeline import ingest

    with tempfile.TemporaryDirectory() as tmp:
        clock = StageClock()
        summary = ingest(Settings(data_dir=Path(tmp)), repo, "bench", progress=clock,
                         embedder=StandInEncoder())  # type: ignore[arg-type]
        seconds = round(time.perf_counter() - clock.t0, 2)
    index = summary.get("index") or {}
    return {"files": summary["files"], "chunks": summary["chunks"],
            "windows": (index.get("windows") or {}).get("count"), "seconds": seconds,
            "searchable_seconds": summary.get("searchable_seconds"), **clock.stages(summary),
            "peak_rss_mb": round(_rss_mb(), 1)}


EMBED_FILES = 300
PHASES = {"parse": phase_parse, "store": phase_store, "full": phase_full, "searchable": phase_searchable,
          "embed": phase_embed, "index": phase_index}


def _stage(checkout: Path, dest: Path) -> Path:
    """``checkout``'s package laid out as the wheel installs it (its own ``scripts/stage_package.py``)."""
    subprocess.run([sys.executable, str(checkout / "scripts" / "stage_package.py"), str(dest)], check=True)
    return dest


def _run_phase(phase: str, args: argparse.Namespace, pythonpath: Path | None) -> dict | None:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, __file__, "--child", phase, "--repo", str(args.repo), "--repeat", str(args.repeat),
         "--embed-files", str(args.embed_files)],
        # In the staged folder: a fork server's interpreter imports from its working directory first, and a
        # checkout's own folder holds a ``sift/`` of the other version.
        capture_output=True, text=True, check=False, env=env, cwd=pythonpath,
    )
    if out.returncode != 0:
        print(f"{phase}: failed\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _estimate(figures: dict[str, dict]) -> dict | None:
    """A full ingest of the whole repository: its time to searchable, plus its chunks embedded at the rate (and
    with the windows per chunk) the ``embed`` phase measured."""
    whole, sample = figures.get("searchable"), figures.get("embed")
    if not whole or not sample or not sample.get("embed_passages_per_s"):
        return None
    embed_s = whole["chunks"] * sample["passages_per_chunk"] / sample["embed_passages_per_s"]
    full_s = whole["searchable_seconds"] + embed_s
    return {"estimated_full_ingest_s": round(full_s), "estimated_full_ingest_h": round(full_s / 3600, 2),
            "searchable_share": round(whole["searchable_seconds"] / full_s, 4)}


def main() -> None:
    """Run each phase in a child process (for the baseline checkout too) and print its figures."""
    global EMBED_FILES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=None)
    ap.add_argument("--large", action="store_true", help="the 10,000-file repository of bench/large_repo.json")
    ap.add_argument("--phases", default=None, help="default: parse,store,full (with --large: searchable,embed)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout, measured in the same run")
    ap.add_argument("--checkout", type=Path, default=None,
                    help="measure this checkout's code staged from DIR (a frozen export), not as installed")
    ap.add_argument("--embed-files", type=int, default=EMBED_FILES, help="files the embed phase ingests")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.repo is None and args.large:
        from bench.large_repo import large_repo

        args.repo = large_repo()
    elif args.repo is None:
        from conftest import fetch_sdist

        args.repo = fetch_sdist("attrs")
    if args.child:
        EMBED_FILES = args.embed_files
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        print(json.dumps(PHASES[args.child](args.repo, args.repeat)))
        return
    phases = (args.phases or ("searchable,embed" if args.large else "parse,store,full")).split(",")
    with tempfile.TemporaryDirectory() as tmp:
        this = _stage(args.checkout.resolve(), Path(tmp) / "this") if args.checkout is not None else None
        sides: list[tuple[str, Path | None]] = [("this", this)]
        if args.baseline is not None:
            sides.append(("baseline", _stage(args.baseline.resolve(), Path(tmp) / "baseline")))
        print(f"repository: {args.repo}")
        for label, pythonpath in sides:
            figures: dict[str, dict] = {}
            for phase in phases:
                result = _run_phase(phase, args, pythonpath)
                if result is not None:
                    figures[phase] = result
                    print(f"{label} {phase}: " + "  ".join(f"{k}={v}" for k, v in result.items()), flush=True)
            estimate = _estimate(figures)
            if estimate:
                print(f"{label} estimate: " + "  ".join(f"{k}={v}" for k, v in estimate.items()), flush=True)


if __name__ == "__main__":
    main()
