"""Ingestion benchmark on a real repository (the attrs sdist from PyPI, cached in tests/.cache).

Phases, each in its own subprocess so peak RSS is its own:
  parse   — walk + parse + chunk in memory (no database, no embeddings), one core; baseline in the same run:
            bare tree-sitter ``parser.parse`` of the same code files (no tree walk, no chunking).
  store   — the full pipeline without embeddings (``--no-index``): walk, parse, chunk, write SQLite.
  full    — the full pipeline with embeddings and indexes (and when its keyword index was published: the time
            to searchable), then a no-op re-ingest and a one-file-changed re-ingest, printed as ratios to the full
            ingest.

Usage: python bench/ingest.py [--repo PATH] [--phases parse,store,full] [--repeat 3]
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


PHASES = {"parse": phase_parse, "store": phase_store, "full": phase_full}


def main() -> None:
    """Run each phase in a child process and print its figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=None)
    ap.add_argument("--phases", default="parse,store,full")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.repo is None:
        from conftest import fetch_sdist

        args.repo = fetch_sdist("attrs")
    if args.child:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        print(json.dumps(PHASES[args.child](args.repo, args.repeat)))
        return
    for phase in args.phases.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--child", phase, "--repo", str(args.repo), "--repeat", str(args.repeat)],
            capture_output=True, text=True, check=False,
        )
        if out.returncode != 0:
            print(f"{phase}: failed\n{out.stderr[-2000:]}")
            continue
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{phase}: " + "  ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
