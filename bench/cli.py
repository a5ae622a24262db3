"""Cold-process CLI latency and memory on a synthetic 2,000-file repository, against bare interpreter starts.

Generates the repository of ``bench/docql.py`` (1,500 Python modules, 500 Markdown guides), ingests it once into
``bench/out/cli`` (reused on later runs), then times fresh ``sift`` processes — ``kb list``, ``docql``,
``search`` and ``ask`` — each ``--runs`` times, beside ``python -c pass`` and ``python -c "import numpy"``
measured in the same run. Prints the median wall time and the peak RSS of each (``wait4`` resource usage of
that child), with the targets on two cores: search ≤ 1.5 s, ask ≤ 2.5 s, docql and kb list ≤ 0.8 s, peak RSS
≤ 400 MB.

    python bench/cli.py [--files 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "bench" / "out" / "cli"
SIFT = Path(sys.executable).with_name("sift")
KB = "synthetic"

#: (label, argv, wall-time target in s or None for a baseline)
COMMANDS: list[tuple[str, list[str], float | None]] = [
    ("python -c pass", [sys.executable, "-c", "pass"], None),
    ("python -c 'import numpy'", [sys.executable, "-c", "import numpy"], None),
    ("sift kb list", [str(SIFT), "kb", "list"], 0.8),
    ("sift docql", [str(SIFT), "docql", '$.code.class("Service0777")', "--kb", KB], 0.8),
    ("sift search", [str(SIFT), "search", "where is the request validated", "--kb", KB], 1.5),
    ("sift ask", [str(SIFT), "ask", "Where is the request validated?", "--kb", KB], 2.5),
]
RSS_TARGET_MB = 400


def _generator():  # noqa: ANN202 - a module loaded from a file
    spec = importlib.util.spec_from_file_location("bench_docql", HERE / "docql.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def prepare(n_files: int) -> Path:
    """The data directory holding the synthetic repository as kb ``synthetic`` (ingested on first use)."""
    data = OUT / f"data-{n_files}"
    if (data / ".complete").exists():
        return data
    repo = OUT / f"synthetic-{n_files}"
    if not repo.exists():
        _generator().generate(repo, n_files)
    t0 = time.perf_counter()
    out = subprocess.run([str(SIFT), "ingest", str(repo), "--kb", KB, "--json"], env=_env(data), check=True,
                         capture_output=True, text=True)
    print(f"ingested {n_files} files in {time.perf_counter() - t0:.0f} s ({len(out.stdout)} bytes of summary)")
    (data / ".complete").write_text("ok")
    return data


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "SIFT_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB and exit status of one fresh process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024, proc.returncode


def main() -> None:
    """Prepare the repository, time every command and print the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per command (median reported)")
    args = ap.parse_args()
    env = _env(prepare(args.files))
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {args.runs} runs each (median)\n")
    print(f"{'command':<28} {'wall s':>7} {'min s':>7} {'peak MB':>8}  target")
    for label, argv, target in COMMANDS:
        run_once(argv, env)  # page cache and bytecode cache warm, as for a user's second command
        runs = [run_once(argv, env) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        verdict = ""
        if target is not None:
            ok = wall <= target and rss <= RSS_TARGET_MB
            verdict = f"≤ {target:.1f} s, ≤ {RSS_TARGET_MB} MB: {'OK' if ok else 'OVER'}"
        print(f"{label:<28} {wall:7.2f} {min(r[0] for r in runs):7.2f} {rss:8.0f}  {verdict}")


if __name__ == "__main__":
    main()
