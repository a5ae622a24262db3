"""`sift ask QUESTION --kb NAME`: answer a question with citations to exact files and lines."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from sift.cli.common import add_common, settings_from
from sift.cli.output import echo, escape, print_json

if TYPE_CHECKING:  # the graph loads once the question is valid
    from sift.config import Settings
    from sift.graph.models import Answer
    from sift.graph.service import OnEvent

EXAMPLE = 'example: sift ask "where is the auth token validated?" --kb myproject --thread t1 --show-steps'


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ask command."""
    p = sub.add_parser("ask", help="ask a question about a knowledge base", description=__doc__, epilog=EXAMPLE)
    p.add_argument("question")
    p.add_argument("--kb", required=True, help="knowledge base name")
    p.add_argument("--tenant", default=None, help="tenant whose thread and record this is (default $SIFT_TENANT)")
    p.add_argument("--thread", default=None,
                   help="conversation id, new or existing (the same threads as the API's): follow-ups resolve "
                        "against its earlier turns")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")
    p.add_argument("--show-steps", action="store_true", help="stream the graph's progress to stderr")
    add_common(p)
    p.set_defaults(func=run)


def _step(event: str, data: dict[str, Any]) -> None:
    if event == "plan":
        line = f"plan: {data['question_type']} · index {data['index_type']} · {data['standalone']}"
    elif event == "retrieve":
        err = f" ({data['error']})" if data.get("error") else ""
        line = f"retrieve[{data['round']}] {data['channel']}: {data['hits']} hits in {data['elapsed_ms']:.0f} ms{err}"
    elif event == "fuse":
        line = f"fuse: {data['evidence']} evidence items"
    elif event == "check":
        line = "check: ok" if data["ok"] else f"check: {'; '.join(data['problems'][:3])}"
    elif event == "fallback":
        line = f"fallback: round {data['round']} · {data['strategy']}"
    else:
        return
    echo(escape(line), file=sys.stderr)


def _ask(settings: Settings, question: str, kb: str, tenant: str, thread_id: str | None,
         on_event: OnEvent | None) -> Answer:
    """Answer in the tenant's thread ``thread_id`` (new when None, or when the id is unused), kept in the thread
    store the API reads, and record the question in ``qa_records`` as the API does."""
    from sift.catalog import get_serving_kb
    from sift.errors import SiftError
    from sift.graph.service import ask_sync, open_resources, validate_question
    from sift.graph.threads import check_thread_id, open_thread, record_turn
    from sift.graph.turns import TURN_WAIT_S, thread_turn_sync

    validate_question(question, kb)
    if thread_id is not None:
        check_thread_id(thread_id)
    from sift.cli.common import open_existing

    get_serving_kb(open_existing(settings), kb, tenant)  # an unknown kb is reported before the models load
    from sift.embed import check_embedder

    check_embedder(settings)
    engine, searcher = open_resources(settings)
    try:
        thread = open_thread(engine, tenant, kb, thread_id, question)
        started = time.perf_counter()
        with thread_turn_sync(engine, settings.data_dir, tenant, thread["checkpoint_id"], TURN_WAIT_S):
            try:
                answer = ask_sync(settings, question, kb, tenant, thread["checkpoint_id"], engine=engine,
                                  searcher=searcher, on_event=on_event)
            except SiftError as exc:
                record_turn(engine, tenant, kb, thread, question, None, status="error", error=exc.message)
                raise
            answer = answer.model_copy(update={"thread_id": thread["thread_id"]})
            record_turn(engine, tenant, kb, thread, question, answer.model_dump(mode="json"),
                        timings={"cli_ms": round((time.perf_counter() - started) * 1000, 1)})
        return answer
    finally:
        searcher.close()
        engine.dispose()


def run(args: argparse.Namespace) -> int:
    """Ask and print the answer with clickable path:line citations."""
    settings = settings_from(args)
    tenant = args.tenant or settings.tenant
    answer = _ask(settings, args.question, args.kb, tenant, args.thread, _step if args.show_steps else None)
    if args.json:
        print_json(answer.model_dump(mode="json"))
        return 0
    echo(answer.text)
    if answer.citations:
        echo()
        for c in answer.citations:
            echo(f"[{c.evidence_id}] {escape(c.path)}:{c.start_line}-{c.end_line}")
    flags = [f"confidence {answer.confidence} ({answer.confidence_score:.2f})",
             "grounded" if answer.grounded else "not grounded", f"{answer.rounds} round(s)", answer.mode]
    flags += [f"degraded: {escape(reason)}" for reason in answer.degraded_reasons]
    echo(f"\n({', '.join(flags)}, {answer.elapsed_ms:.0f} ms, thread {escape(answer.thread_id)})", file=sys.stderr)
    return 0
