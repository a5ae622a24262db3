"""`sift worker`: claim queued ingest jobs from the database and run them, one at a time.

Run one or more per host beside the API replicas (all pointed at the same SIFT_DATABASE_URL and SIFT_INDEX_DIR).
Each finished job is printed as one JSON line (``"ready": "complete"`` once its vectors are published), and before
it, a line with ``"status": "running", "ready": "searchable"`` when its keyword index serves (embedding follows). SIGTERM/SIGINT let the current job finish, then exit.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from sift.cli.common import add_common, settings_from
from sift.cli.output import print_jsonl

EXAMPLE = "example: SIFT_DATABASE_URL=postgresql+psycopg://sift@db/sift sift worker --poll 2"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the worker command."""
    p = sub.add_parser("worker", help="run queued ingest jobs", description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--once", action="store_true", help="exit when no job is claimable instead of polling")
    p.add_argument("--poll", type=float, default=1.0, help="seconds between polls of an empty queue (default 1)")
    p.add_argument("--stale-after", type=float, default=None,
                   help="seconds without a heartbeat after which a running job counts as dead (default 120)")
    p.add_argument("--worker-id", default=None, help="name recorded on claimed jobs (default host:pid)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Claim and run jobs until stopped."""
    from sift.cli import UsageError
    from sift.db import open_database
    from sift.ingest.jobs import DEFAULT_STALE_AFTER_S, default_worker_id, work

    if args.poll <= 0 or (args.stale_after is not None and args.stale_after <= 0):
        raise UsageError("--poll and --stale-after must be positive")
    settings = settings_from(args)
    from sift.embed import check_embedder

    check_embedder(settings)  # the jobs build indexes: without the model every one would fail
    engine = open_database(settings)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    def report(result: dict[str, Any]) -> None:
        print_jsonl([result])
        sys.stdout.flush()

    work(settings, engine, args.worker_id or default_worker_id(), once=args.once, poll_s=args.poll,
         stale_after_s=args.stale_after or DEFAULT_STALE_AFTER_S, stop=stop, on_result=report)
    engine.dispose()
    return 0
