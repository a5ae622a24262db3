"""`sift threads list|show|rm`: the conversations of a tenant, as `sift ask --thread` and the API keep them."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from sift.cli.common import add_common, open_existing, settings_from
from sift.cli.output import echo, escape, print_json

if TYPE_CHECKING:
    from sift.config import Settings

EXAMPLE = """examples:
  sift threads list --kb myproject
  sift threads show slack-C024BE91L --json
  sift threads rm t1"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the threads command group."""
    p = sub.add_parser("threads", help="list, show and delete conversation threads", description=__doc__,
                       epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="threads_command", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="threads, most recent first", epilog="example: sift threads list --json")
    ls.add_argument("--kb", default=None, help="only threads on this knowledge base")
    ls.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    show = actions.add_parser("show", help="a thread's questions and answers",
                              epilog="example: sift threads show t1")
    show.add_argument("thread_id", metavar="ID")
    rm = actions.add_parser("rm", help="delete a thread and its checkpointed state (its records stay)",
                            epilog="example: sift threads rm t1")
    rm.add_argument("thread_id", metavar="ID")
    for action, func in ((ls, run_list), (show, run_show), (rm, run_rm)):
        action.add_argument("--tenant", default=None, help="whose threads (default $SIFT_TENANT)")
        action.add_argument("--json", action="store_true", help="print JSON")
        add_common(action)
        action.set_defaults(func=func)


def _open(args: argparse.Namespace) -> tuple[Settings, Any, str]:
    settings = settings_from(args)
    return settings, open_existing(settings), args.tenant or settings.tenant


def run_list(args: argparse.Namespace) -> int:
    """Print the tenant's threads."""
    from sift.cli import UsageError
    from sift.graph.threads import list_threads

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    _, engine, tenant = _open(args)
    rows = list_threads(engine, tenant, args.kb, args.limit)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        echo(f"no threads for tenant {escape(tenant)!r} yet; start one with `sift ask QUESTION --kb NAME --thread ID`")
    for r in rows:
        echo(f"{escape(r['thread_id'])}  {r['kb']}  {r['turns']} turn(s)  {r['updated_at']:%Y-%m-%d %H:%M}  "
             f"{escape(r['title'] or '')}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one thread with its turns."""
    from sift.graph.threads import get_thread

    _, engine, tenant = _open(args)
    thread = get_thread(engine, tenant, args.thread_id)
    if args.json:
        print_json(thread)
        return 0
    echo(f"{escape(thread['thread_id'])} on {thread['kb']}: {thread['turns']} turn(s)")
    for key, value in thread["metadata"].items():
        echo(f"  {escape(key)}: {escape(value)}")
    for turn in thread["messages"]:
        echo(f"\n> {turn['question']}")
        echo(turn["answer"] if turn["answer"] is not None else f"({turn['status']}: {turn['error'] or 'no answer'})")
        for c in turn["citations"]:
            echo(f"  [{c.get('evidence_id')}] {escape(c.get('path'))}:{c.get('start_line')}-{c.get('end_line')}")
    return 0


def run_rm(args: argparse.Namespace) -> int:
    """Delete a thread: its row in the store and its state in the checkpointer."""
    from sift.graph.threads import delete_thread

    settings, engine, tenant = _open(args)
    key = delete_thread(engine, tenant, args.thread_id)
    asyncio.run(_forget(settings, key))
    if args.json:
        print_json({"deleted": args.thread_id}, indent=None)
    else:
        echo(f"deleted thread {escape(args.thread_id)}")
    return 0


async def _forget(settings: Settings, key: str) -> None:
    """Drop a thread's checkpoints (the same checkpointer the API and `sift ask` write)."""
    from sift.graph.checkpointer import open_checkpointer

    async with open_checkpointer(settings) as saver:
        await saver.setup()
        await saver.adelete_thread(key)
