"""What the local model does in each role (planner, agent, writer), on a dev set's questions.

Starts ``sift llm serve`` (the packaged SmolLM2-135M-Instruct unless ``--model``), ingests the set's project
once into the answer bench's ``bench/out/answer-data`` (the pinned sdist of ``tests/sources.py``), and asks the first ``--n``
answerable questions under each roles setting in one run, beside the model-free extractive answer
(roles ""). Per setting it prints: answer hit, citation precision, the share of answers the model wrote that
passed the evidence check, degraded answers, plans the model made, tool calls run, p50/p95 latency and the
model's tokens per second of wall time. Dev sets only (attrs, marshmallow, click): never a test set.

    python lab/llm/roles.py --set eval/sets/attrs.jsonl --n 5 --roles "" writer planner agent
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))



async def ask_all(settings: Any, engine: Any, searcher: Any, questions: list[Any]) -> list[dict[str, Any]]:
    """One row per question: its answer metrics, how the model took part, and the latency."""
    from sift.chat import make_chat_model
    from sift.eval import metrics as m
    from sift.eval.runner import answer_metrics, to_answer
    from sift.graph.checkpointer import open_checkpointer
    from sift.graph.context import RunLimits
    from sift.graph.service import AskService

    rows = []
    async with open_checkpointer(settings) as saver:
        service = AskService(settings, engine, searcher, saver, make_chat_model(settings),
                             limits=RunLimits(wall_clock=False))
        for q in questions:
            key = uuid.uuid4().hex
            t0 = time.perf_counter()
            answer = await service.ask(q.query, q.kb, thread_id=key)
            latency = time.perf_counter() - t0
            state = await service.graph.aget_state({"configurable": {"thread_id": key}})
            messages = state.values.get("messages") or []
            record, _ = to_answer(answer)
            rows.append({
                "id": q.id, "latency_s": latency, "tokens": answer.tokens, "mode": answer.mode,
                "degraded": answer.degraded, "reasons": answer.degraded_reasons,
                "planner": answer.plan.planner if answer.plan else "rules",
                "tools": sum(1 for x in messages if x.type == "tool"),
                "hit": m.answer_hit(answer.text, q.answer_contains, answer.citations, q.gold_spans),
                **{k: v for k, v in answer_metrics(q, record).items() if k == "citation_precision"},
            })
            await saver.adelete_thread(key)
            print(json.dumps({"roles": settings.llm_roles, **rows[-1]}), file=sys.stderr, flush=True)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-setting figures."""
    from sift.eval import metrics as m

    lat = [r["latency_s"] for r in rows]
    wrote = [r for r in rows if r["mode"] == "llm"]
    return {
        "questions": len(rows), "answer_hit": m.mean(r["hit"] for r in rows),
        "citation_precision": m.mean(r["citation_precision"] for r in rows),
        "llm_answers_passed": len(wrote), "degraded": sum(r["degraded"] for r in rows),
        "llm_plans": sum(r["planner"] == "llm" for r in rows), "tool_calls": sum(r["tools"] for r in rows),
        "p50_s": m.percentile(lat, 50), "p95_s": m.percentile(lat, 95),
        "tokens_per_s": sum(r["tokens"] for r in rows) / max(sum(lat), 1e-9),
    }


def main() -> int:
    """Serve the model, ingest, ask under each setting, print."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", type=Path, default=ROOT / "eval" / "sets" / "attrs.jsonl")
    p.add_argument("--n", type=int, default=8)
    p.add_argument("--roles", nargs="*", default=["", "planner", "writer", "agent"])
    p.add_argument("--ctx", type=int, default=2048)
    p.add_argument("--max-tokens", type=int, default=384)
    p.add_argument("--model", default=None)
    p.add_argument("--dump", type=Path)
    args = p.parse_args()
    if args.set.parent.name != "sets":
        raise SystemExit("dev sets only (eval/sets/*.jsonl)")
    from bench.answer import DATA, ensure_kbs
    from sift.config import Settings
    from sift.embed import make_embedder
    from sift.eval.format import load_questions
    from sift.graph.service import open_resources
    from tests.local_llm import served

    questions = [q for q in load_questions(args.set, strict=True)[0] if q.kind != "negative"][: args.n]
    DATA.mkdir(parents=True, exist_ok=True)
    base = Settings(data_dir=DATA)
    embedder = make_embedder(base)
    ensure_kbs(base, embedder, {q.kb for q in questions})
    engine, searcher = open_resources(base, embedder)
    extra = ("--model", args.model) if args.model else ()
    out: dict[str, Any] = {}
    dump = []
    with served("--ctx", str(args.ctx), *extra) as llm:
        for roles in args.roles:
            settings = base.model_copy(update={**llm, "llm_roles": roles, "llm_max_tokens": args.max_tokens})
            rows = asyncio.run(ask_all(settings, engine, searcher, questions))
            out[roles or "(extractive)"] = summary(rows)
            dump += [{"roles": roles, **r} for r in rows]
            print(json.dumps({roles or "(extractive)": out[roles or "(extractive)"]}), flush=True)
    searcher.close()
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in dump))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
