"""Answer quality and latency of the graph (extractive mode unless an LLM is configured) on the eval sets.

Ingests the pinned attrs and marshmallow sdists once into ``bench/out/answer-data`` (reused on later runs),
warms the graph up, then asks every question of ``eval/sets/*.jsonl`` one at a time and prints answer hit rate,
citation precision, grounded rate, not-found accuracy on negatives and p50/p95 latency.

    python bench/answer.py [--sets eval/sets/attrs.jsonl ...] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval import metrics as m  # noqa: E402
from eval.format import load_questions  # noqa: E402
from eval.runner import answer_metrics, to_answer  # noqa: E402
from sift.config import Settings  # noqa: E402

DATA = ROOT / "bench" / "out" / "answer-data"
SOURCES = {"attrs": "attrs", "marshmallow": "marshmallow"}


def ensure_kbs(settings: Settings, embedder: Any, names: set[str]) -> None:
    """Ingest each kb's sdist once (skipped when the kb already serves a generation)."""
    from ingest.pipeline import ingest
    from ingest.store import get_serving_kb
    from sift.db import open_database
    from sift.errors import SiftError
    from tests.conftest import fetch_sdist

    engine = open_database(settings)
    for name in sorted(names):
        try:
            get_serving_kb(engine, name, settings.tenant)
            continue
        except SiftError:
            pass
        t0 = time.perf_counter()
        ingest(settings, fetch_sdist(SOURCES[name]), name, embedder=embedder, engine=engine)
        print(f"ingested {name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


async def run(sets: list[Path]) -> dict[str, Any]:
    """Ask every question and aggregate the answer metrics."""
    from graph.llm import make_chat_model
    from graph.service import AskService, open_checkpointer, open_resources
    from sift.embed import make_embedder

    settings = Settings(data_dir=DATA)
    embedder = make_embedder(settings)
    questions = [q for path in sets for q in load_questions(path, strict=True)[0]]
    ensure_kbs(settings, embedder, {q.kb for q in questions if q.kb})
    engine, searcher = open_resources(settings, embedder)
    rows: list[dict[str, Any]] = []
    async with open_checkpointer(settings) as saver:
        service = AskService(settings, engine, searcher, saver, make_chat_model(settings))
        for kb in sorted({q.kb for q in questions}):  # warm: load indexes, first embedding
            await service.ask("What does this project do?", kb)
        for q in questions:
            t0 = time.perf_counter()
            answer = await service.ask(q.query, q.kb or "")
            latency = (time.perf_counter() - t0) * 1000
            record, _ = to_answer(answer)
            rows.append({"id": q.id, "kind": q.kind, "latency_ms": latency, "grounded": answer.grounded,
                         "negative": q.kind == "negative", **answer_metrics(q, record)})
    searcher.close()
    return summarize(rows)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question rows into the headline numbers."""
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    lat = [r["latency_ms"] for r in rows]
    return {
        "questions": len(rows),
        "answer_hit_rate": m.mean(r["answer_hit"] for r in pos),
        "citation_precision": m.mean(r["citation_precision"] for r in pos),
        "grounded_rate_answerable": m.mean(1.0 if r["grounded"] else 0.0 for r in pos),
        "grounded_rate_all": m.mean(1.0 if r["grounded"] else 0.0 for r in rows),
        "negatives_not_found": m.mean(r["not_found_accuracy"] for r in neg),
        "fallback_rate": m.mean(r["fallback"] for r in rows),
        "latency_p50_ms": m.percentile(lat, 50),
        "latency_p95_ms": m.percentile(lat, 95),
        "misses": [r["id"] for r in pos if r["answer_hit"] == 0.0],
        "ungrounded": [r["id"] for r in pos if not r["grounded"]],
        "negatives_answered": [r["id"] for r in neg if r["not_found_accuracy"] == 0.0],
    }


def main() -> int:
    """Parse arguments, run, print."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", nargs="*", type=Path, default=sorted((ROOT / "eval" / "sets").glob("*.jsonl")))
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    result = asyncio.run(run(args.sets))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for key, value in result.items():
        shown = f"{value:.3f}" if isinstance(value, float) else value
        print(f"{key:28} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
