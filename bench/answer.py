"""Answer quality, confidence calibration and latency of the graph (extractive unless an LLM is configured).

Ingests each set's project once into ``bench/out/answer-data`` (reused on later runs; vectors another bench
already embedded are copied, ``bench/embedding_cache.py``): the dev sets'
(``eval/sets/*.jsonl``) and the frozen test sets' (``eval/sets/test/``, ``test2/`` and ``test3/``, spent, and
``eval/sets/test4/`` and ``test5/``, the test sets, and ``test6/`` and ``external/``, held back and asked only when named), from the pinned sdists and npm tarballs of ``tests/sources.py``. It warms
the graph up, then asks every question one at a time and prints, for each split separately: answer hit rate,
citation precision, grounded rate, not-found accuracy on negatives,
p50/p95 latency, and a calibration table: for each confidence level, its share of the answers (and of the
answerable questions) and how often its answers were right (``eval.metrics.answer_right``).

Citation precision is printed twice: against the sets' gold spans only, and "pooled", where a citation also counts
when it is exactly a span that ``eval/judgments/<set>.jsonl`` judges relevant (TREC-style pooled judgments of
retrieved spans, made blind to which of them an answer cited; see ``eval/judgments/README.md``). A citation
that is neither gold nor judged counts as wrong, and ``citations_unjudged`` is the share of such citations.

    python bench/answer.py [--split dev|dev2|test|test2|test3|test4|test5|test6|external|both|all] [--sets eval/sets/attrs.jsonl ...]
                           [--json] [--dump rows.jsonl] [--wall-clock] [--llm local|configured]

``--llm local`` starts ``sift llm serve`` (the packaged model, with the settings it prints; ``--llm-roles`` to
change the roles it plays) and asks every question twice in one run, extractive and with the model, and prints both; ``--llm configured`` uses the ``SIFT_LLM_*``
settings instead. The LLM mode adds, per split: the share of its answers written by the model that passed the
evidence check without a fallback (``llm_checked_rate``), degraded runs (``degraded_rate``), and tokens per second
of answer time (``tokens_per_s``).

Quality does not depend on the machine's load: the graph runs without its branch timeouts and time budget
(``RunLimits(wall_clock=False)``), so a busy machine gets the same answers, only slower; ``--wall-clock`` keeps
the service's limits. The numbers are printed for each split and for each set; ``--dump`` writes one JSON line per question
(answer text, citations, confidence, the numbered evidence and which of it overlaps a gold span).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sift.config import Settings  # noqa: E402
from sift.eval import metrics as m  # noqa: E402
from sift.eval.format import load_judgments, load_questions  # noqa: E402
from sift.eval.runner import answer_metrics, to_answer  # noqa: E402

DATA = ROOT / "bench" / "out" / "answer-data"
JUDGMENTS = ROOT / "eval" / "judgments"
SETS = ROOT / "eval" / "sets"
# Each split's question files: the dev sets lie at the top of eval/sets, every other split in its own folder.
SPLIT_SETS = {"dev": sorted(SETS.glob("*.jsonl")),
              **{split: sorted((SETS / split).glob("*.jsonl")) for split in ("dev2", "test", "test2", "test3", "test4",
                                                                             "test5", "test6",
                                                                             "external")}}
# Held back for one run at the end of a round of work: asked only when named (--split test6, --split external),
# never by "all".
HELD_BACK = ("test6", "external")
# What the fitting scripts (confidence, abstention) ask: the dev sets and the spent test sets, never the test sets.
FIT_SETS = [path for split in ("dev", "dev2", "test", "test2", "test3") for path in SPLIT_SETS[split]]


def split_of(path: Path) -> str:
    """The split of a question file: its folder's name (``dev2``, ``test`` … ``test5``), or ``dev``."""
    return path.parent.name if path.parent.name in SPLIT_SETS else "dev"


def _source(name: str) -> Path:
    from tests.sources import NPM_PACKAGES, fetch_npm, fetch_sdist  # pins both; the rest are PyPI sdists

    return fetch_npm(name) if name in NPM_PACKAGES else fetch_sdist(name)


def ensure_kbs(settings: Settings, embedder: Any, names: set[str]) -> None:
    """Ingest each kb's sdist once: skipped when the kb already serves a generation chunked by this version of
    the chunker with its vectors, ingested again (incrementally, as an upgrade would) when another version chunked
    it, or when an interrupted ingest left it serving keywords only (the next ingest embeds what is missing)."""
    from sqlalchemy import select

    from bench.embedding_cache import seed_from_benches
    from sift.catalog import get_serving_kb, index_dir_of
    from sift.db import open_database
    from sift.db.tables import Generation
    from sift.errors import SiftError
    from sift.index.generation import has_vectors, read_manifest
    from sift.ingest import store
    from sift.ingest.chunk import CHUNKING
    from sift.ingest.pipeline import ingest

    engine = open_database(settings)
    seeded = False
    for name in sorted(names):
        try:
            kb = get_serving_kb(engine, name, settings.tenant)
            with engine.connect() as conn:
                files = store.visible_files(conn, kb.id, kb.generation, CHUNKING)
                stored = conn.execute(select(Generation.index_path).where(
                    Generation.kb_id == kb.id, Generation.number == kb.generation)).scalar()
            directory = index_dir_of(settings.resolved_index_dir(), kb.id, kb.generation, stored)
            if all(digest for _, digest in files.values()) and has_vectors(read_manifest(directory)):
                continue
        except SiftError:
            pass
        if not seeded and not settings.database_url:  # SQLite in DATA: the other benches' vectors, copied once
            seed_from_benches(DATA / "sift.db")
            seeded = True
        t0 = time.perf_counter()
        ingest(settings, _source(name), name, embedder=embedder, engine=engine)
        print(f"ingested {name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def _overlaps_gold(item: Any, q: Any) -> bool:
    return any(m.overlaps(item, g) for g in q.gold_spans)


def _dump_row(q: Any, answer: Any, latency_ms: float) -> dict[str, Any]:
    """What one question's answer looked like, for error analysis."""
    return {
        "id": q.id, "query": q.query, "latency_ms": round(latency_ms, 1), "rounds": answer.rounds,
        "answer_contains": q.answer_contains, "text": answer.text, "grounded": answer.grounded,
        "hit": m.answer_hit(answer.text, q.answer_contains, answer.citations, q.gold_spans),
        "confidence": answer.confidence, "confidence_score": answer.confidence_score,
        "confidence_signals": answer.confidence_signals,
        "plan": {k: getattr(answer.plan, k, None) for k in ("question_type", "identifiers", "strategy")},
        "citations": [{"path": c.path, "start_line": c.start_line, "end_line": c.end_line,
                       "gold": _overlaps_gold(c, q)} for c in answer.citations],
        "evidence": [{**e.model_dump(), "gold": any(e.path == g.path and e.start_line <= g.end_line
                                                    and g.start_line <= e.end_line for g in q.gold_spans)}
                     for e in answer.evidence],
    }


def pooled(q: Any, citations: list[Any], judged: list[Any]) -> tuple[float | None, float | None]:
    """Citation precision with judged-relevant spans added to the gold, and the share of unjudged citations."""
    if not citations or not q.gold_spans:
        return None, None
    key = {(j.path, j.start_line, j.end_line): j.relevant for j in judged}
    good = unjudged = 0
    for c in citations:
        if _overlaps_gold(c, q) or key.get((c.path, c.start_line, c.end_line)):
            good += 1
        elif (c.path, c.start_line, c.end_line) not in key:
            unjudged += 1
    return good / len(citations), unjudged / len(citations)


async def collect(sets: list[Path], dump: Path | None = None, confidence: Any = None,
                  wall_clock: bool = False, llm: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Ask every question; one row per question with its metrics, confidence and signals. ``confidence`` is the
    model the graph uses (the fitted one when None). Without ``wall_clock`` no branch timeout or time budget
    applies, so the answers (and every quality figure) are the same however busy the machine is."""
    from sift.chat import make_chat_model
    from sift.embed import make_embedder
    from sift.graph.checkpointer import open_checkpointer
    from sift.graph.context import RunLimits
    from sift.graph.service import AskService, open_resources

    settings = Settings(data_dir=DATA, **(llm or {}))
    embedder = make_embedder(settings)
    questions = [(path, q) for path in sets for q in load_questions(path, strict=True)[0]]
    judgments = {path.stem: load_judgments(JUDGMENTS / path.name) for path in sets}
    ensure_kbs(settings, embedder, {q.kb for _, q in questions if q.kb})
    engine, searcher = open_resources(settings, embedder)
    rows: list[dict[str, Any]] = []
    out = dump.open("w") if dump is not None else None  # one line per question as it is answered
    async with open_checkpointer(settings) as saver:
        service = AskService(settings, engine, searcher, saver, make_chat_model(settings), confidence=confidence,
                             limits=RunLimits(wall_clock=wall_clock))
        for kb in sorted({q.kb for _, q in questions}):  # warm: load indexes, first embedding
            await service.ask("What does this project do?", kb, thread_id=(key := uuid.uuid4().hex))
            await saver.adelete_thread(key)
        for n, (path, q) in enumerate(questions, 1):
            t0 = time.perf_counter()
            answer = await service.ask(q.query, q.kb or "", thread_id=(key := uuid.uuid4().hex))
            latency = (time.perf_counter() - t0) * 1000
            await saver.adelete_thread(key)  # a thread of its own: nothing follows it up
            record, _ = to_answer(answer)
            if out is not None:
                out.write(json.dumps({"split": split_of(path), **_dump_row(q, answer, latency)}) + "\n")
                out.flush()
            print(f"[{n}/{len(questions)}] {q.id} {answer.mode} {latency / 1000:.1f} s", file=sys.stderr)
            precision, unjudged = pooled(q, answer.citations, judgments[path.stem].get(q.id, []))
            rows.append({"split": split_of(path), "set": path.stem, "id": q.id, "kind": q.kind,
                         "latency_ms": latency, "grounded": answer.grounded, "negative": q.kind == "negative",
                         **answer_metrics(q, record), "confidence": answer.confidence,
                         "confidence_score": answer.confidence_score, "signals": answer.confidence_signals,
                         "citation_precision_pooled": precision, "citations_unjudged": unjudged,
                         "mode": answer.mode, "degraded": answer.degraded, "tokens": answer.tokens})
    searcher.close()
    if out is not None:
        out.close()
    return rows


async def run(sets: list[Path], dump: Path | None = None, wall_clock: bool = False,
              llm: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ask every question and aggregate the answer metrics per split (dev, test) and per set; with ``llm``
    (settings of a model server), ask them again with the model and report that mode as ``SPLIT (llm)``."""
    extractive = None if llm is None else {"llm_base_url": None, "llm_model": None}  # the baseline has no model
    result = _per_split(await collect(sets, dump, wall_clock=wall_clock, llm=extractive))
    if llm is not None:
        llm_dump = dump.with_suffix(".llm.jsonl") if dump is not None else None
        for split, part in _per_split(await collect(sets, llm_dump, wall_clock=wall_clock, llm=llm)).items():
            result[f"{split} (llm)"] = part
    return result


def _per_split(rows: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for split in dict.fromkeys(r["split"] for r in rows):
        mine = [r for r in rows if r["split"] == split]
        part = summarize(mine)
        names = list(dict.fromkeys(r["set"] for r in mine))
        if len(names) > 1:
            part["sets"] = {n: summarize([r for r in mine if r["set"] == n]) for n in names}
        result[split] = part
    return result


def _llm_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the model did: answers it wrote that passed the check at once, degraded runs, tokens per second."""
    if not any(r["mode"] == "llm" or r["degraded"] or r["tokens"] for r in rows):
        return {}
    seconds = sum(r["latency_ms"] for r in rows) / 1000
    return {"llm_checked_rate": m.mean(1.0 if r["mode"] == "llm" and not r["fallback"] and not r["degraded"]
                                       else 0.0 for r in rows),
            "degraded_rate": m.mean(1.0 if r["degraded"] else 0.0 for r in rows),
            "tokens_per_s": sum(r["tokens"] for r in rows) / seconds if seconds else 0.0}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question rows into the headline numbers."""
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    lat = [r["latency_ms"] for r in rows]
    return {
        "questions": len(rows),
        "answer_hit_rate": m.mean(r["answer_hit"] for r in pos),
        "citation_precision": m.mean(r["citation_precision"] for r in pos),
        "citation_precision_pooled": m.mean(r["citation_precision_pooled"] for r in pos),
        "citations_unjudged": m.mean(r["citations_unjudged"] for r in pos),
        "grounded_rate_answerable": m.mean(1.0 if r["grounded"] else 0.0 for r in pos),
        "grounded_rate_all": m.mean(1.0 if r["grounded"] else 0.0 for r in rows),
        "negatives_not_found": m.mean(r["not_found_accuracy"] for r in neg),
        "answer_right": m.mean(r["answer_right"] for r in rows),
        "fallback_rate": m.mean(r["fallback"] for r in rows),
        "latency_p50_ms": m.percentile(lat, 50),
        "latency_p95_ms": m.percentile(lat, 95),
        "misses": [r["id"] for r in pos if r["answer_hit"] == 0.0],
        "ungrounded": [r["id"] for r in pos if not r["grounded"]],
        "negatives_answered": [r["id"] for r in neg if r["not_found_accuracy"] == 0.0],
        "calibration": m.calibration((r["confidence"], r["answer_right"], not r["negative"]) for r in rows),
        **_llm_figures(rows),
    }


def main() -> int:
    """Parse arguments, run, print."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--split", choices=(*SPLIT_SETS, "both", "all"),
                   default="all",
                   help="which sets to ask when --sets is not given (default: all = dev, dev2, test, test2, "
                        "test3, test4 and test5, reported apart; both = dev and test; test6 and external only when named)")
    p.add_argument("--sets", nargs="*", type=Path)
    p.add_argument("--json", action="store_true")
    p.add_argument("--dump", type=Path, help="write per-question answers and evidence to this JSONL file")
    p.add_argument("--wall-clock", action="store_true",
                   help="answer under the service's branch timeouts and time budget (answers then depend on load)")
    p.add_argument("--llm", choices=("local", "configured"), default=None,
                   help="ask every question twice, extractive and with a model: `local` serves the packaged model "
                        "(sift llm serve) for the run, `configured` uses the SIFT_LLM_* settings")
    p.add_argument("--llm-roles", default=None, metavar="ROLES",
                   help="with --llm: the roles the model plays (SIFT_LLM_ROLES: planner,agent,writer; default: "
                        "what the server prints, or the configured setting)")
    args = p.parse_args()
    sets = args.sets or {**SPLIT_SETS, "both": SPLIT_SETS["dev"] + SPLIT_SETS["test"],
                         "all": [path for split, paths in SPLIT_SETS.items() if split not in HELD_BACK
                                 for path in paths]}[args.split]
    if args.llm == "configured" and not (Settings().llm_base_url and Settings().llm_model):
        p.error("--llm configured needs SIFT_LLM_BASE_URL and SIFT_LLM_MODEL")
    with contextlib.ExitStack() as stack:
        llm: dict[str, Any] | None = None
        if args.llm == "local":  # `sift llm serve` in a child process, with the settings it prints
            from tests.local_llm import served

            llm = stack.enter_context(served())
        elif args.llm == "configured":
            llm = {}
        if llm is not None and args.llm_roles is not None:
            llm["llm_roles"] = args.llm_roles
        if llm:
            print("model settings: " + ", ".join(f"{k}={v}" for k, v in sorted(llm.items())), file=sys.stderr)
        result = asyncio.run(run(sets, args.dump, args.wall_clock, llm))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for split, part in result.items():
        print(f"==== {split}")
        _print(part)
        for name, one in part.get("sets", {}).items():
            print(f"\n== {split} / {name}")
            _print(one)
        print()
    return 0


def _print(result: dict[str, Any]) -> None:
    for key, value in result.items():
        if key in ("sets", "calibration"):
            continue
        shown = f"{value:.3f}" if isinstance(value, float) else value
        print(f"{key:28} {shown}")
    print(calibration_table(result["calibration"]))


def calibration_table(table: dict[str, dict[str, Any]]) -> str:
    """The calibration table as aligned text."""
    def cell(v: Any) -> str:
        return "–" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = [f"{'confidence':12}{'answers':>9}{'share':>9}{'of answerable':>15}{'right':>9}"]
    for level, v in table.items():
        lines.append(f"{level:12}{cell(v['answers']):>9}{cell(v['share']):>9}{cell(v['share_answerable']):>15}"
                     f"{cell(v['right']):>9}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
