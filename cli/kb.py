"""`sift kb list` / `sift kb show NAME`: knowledge bases, their generations, counts, sizes and last job."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sift.cli.common import add_common, settings_from

EXAMPLE = "examples: sift kb list;  sift kb show myproject --json;  sift kb gc myproject"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the kb command group."""
    p = sub.add_parser("kb", help="list and inspect knowledge bases", description=__doc__, epilog=EXAMPLE)
    kb_sub = p.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    ls = kb_sub.add_parser("list", help="list knowledge bases")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_common(ls)
    ls.set_defaults(func=run_list)
    show = kb_sub.add_parser("show", help="show one knowledge base")
    show.add_argument("name")
    show.add_argument("--tenant", default=None)
    show.add_argument("--json", action="store_true", help="print JSON")
    add_common(show)
    show.set_defaults(func=run_show)
    gc = kb_sub.add_parser("gc", help="drop old generations no replica has used within the grace period")
    gc.add_argument("name")
    gc.add_argument("--tenant", default=None)
    add_common(gc)
    gc.set_defaults(func=run_gc)


def run_list(args: argparse.Namespace) -> int:
    """Print every knowledge base."""
    from sift.db import open_database
    from sift.ingest.inspect import list_kbs

    rows = list_kbs(open_database(settings_from(args)))
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    if not rows:
        print("no knowledge bases yet; create one with `sift ingest PATH --kb NAME`")
    for r in rows:
        print(f"{r['tenant']}/{r['name']}  generation {r['generation']}  {r['files']} files  {r['chunks']} chunks  {r['root_path']}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one knowledge base in detail."""
    from sift.db import open_database
    from sift.ingest.inspect import show_kb

    settings = settings_from(args)
    info = show_kb(open_database(settings), settings, args.name, args.tenant or settings.tenant)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        _print_show(info)
    return 0


def run_gc(args: argparse.Namespace) -> int:
    """Collect garbage for one knowledge base now (ingest runs it after every publish, too)."""
    from sift.catalog import get_kb
    from sift.db import open_database
    from sift.ingest.store import collect_garbage

    settings = settings_from(args)
    engine = open_database(settings)
    kb = get_kb(engine, args.name, args.tenant or settings.tenant)
    with engine.begin() as conn:
        dropped = collect_garbage(conn, kb.id, kb.generation, settings.resolved_index_dir(),
                                  settings.generation_grace_s)
    print(f"kb {kb.name}: dropped {dropped} old file versions; serving generation {kb.generation}")
    return 0


def _print_show(info: dict[str, Any]) -> None:
    print(f"{info['tenant']}/{info['name']}  root {info['root_path']}")
    print(f"serving generation {info['generation']}: {info['files']} files, {info['nodes']} nodes, "
          f"{info['chunks']} chunks ({', '.join(f'{k} {v}' for k, v in info['chunks_by_kind'].items())})")
    for g in info["generations"]:
        print(f"  generation {g['number']}: {g['status']}  index {g['index_bytes'] / 1e6:.1f} MB  {g['stats'] or ''}")
    job = info.get("last_job")
    if job:
        print(f"last job #{job['id']}: {job['status']} generation {job['generation']} {job['elapsed_s']}s "
              f"{job['error'] or ''}")
