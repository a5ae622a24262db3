"""The candidates the cross-encoder learns to order: each question's pool from fused search's channels.

Ingests the projects the fit reads (the written questions' projects first, then the train packages, each once,
recorded in ``bench/out/ranker/ingested.json`` as ``lab/fit/ranker.py`` records them, so the two share one
data directory), then searches every question of the ingested projects as ``lab/fit/ranker.py`` does and writes the
groups to ``bench/out/rerank/pool.npz``. Ingesting is the slow part (about a minute per package on 2 idle cores);
a run stopped at any point goes on from the last project ingested.

    .venv/bin/python lab/rerank/pool.py                 # ingest everything missing, then pool
    .venv/bin/python lab/rerank/pool.py --pool-only     # pool what is ingested so far
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT,):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

POOL = ROOT / "bench" / "out" / "rerank" / "pool.npz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool-only", action="store_true", help="pool the projects ingested so far; ingest nothing")
    args = ap.parse_args()

    import json

    from bench.retrieval import source_root
    from lab.fit import ranker as fr
    from lab.train.make_pairs import fetch, load_packages
    from lab.train.pool_cache import save_pool
    from sift.config import Settings
    from sift.embed import LocalEmbedder

    t0 = time.perf_counter()
    packages = load_packages()
    newcomer = fr.newcomer_questions()
    written = sorted({q.kb for qs in newcomer.values() for q in qs})
    embedder = LocalEmbedder()
    settings = Settings(data_dir=fr.OUT / "data")
    layout = fr.layout_label()
    sources = [(kb, f"{kb} {layout}", lambda kb=kb: source_root(kb)) for kb in written]
    sources += [(p["name"], f"{p['name']}-{p['version']} {layout}", lambda p=p: fetch(p)) for p in packages]
    if not args.pool_only:
        fr._ingest_all(settings, embedder, sources)
    done = json.loads(fr.DONE.read_text(encoding="utf-8")) if fr.DONE.exists() else {}
    ready = {kb for kb, label, _ in sources if done.get(kb, {}).get("label") == label}
    train = [q for q in fr._train_questions(packages, None) if q["kb"] in ready]
    asked = {split: [q for q in qs if q.kb in ready] for split, qs in newcomer.items()}
    print(f"pooling {len(train)} train questions and {sum(map(len, asked.values()))} written ones over "
          f"{len(ready)} of {len(sources)} projects", flush=True)
    POOL.parent.mkdir(parents=True, exist_ok=True)
    groups = fr._pooled(train, asked, None, settings, embedder, t0)
    save_pool(POOL, {split: gs for split, gs in groups.items() if gs})  # a split of no ingested project is left out
    print(f"wrote {POOL.relative_to(ROOT)} ({time.perf_counter() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
