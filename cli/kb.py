"""`sift kb list` / `sift kb show NAME`: knowledge bases, their generations, counts, sizes and last job."""

from __future__ import annotations

import argparse
from typing import Any

from sift.cli.common import add_common, settings_from
from sift.cli.output import echo, escape, print_json

EXAMPLE = "examples: sift kb list;  sift kb show myproject --json;  sift kb check myproject;  sift kb gc myproject"


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
    check = kb_sub.add_parser("check", help="hash every index file of the serving generation against its "
                                            "manifest and load it; exit 1 when one is damaged")
    check.add_argument("name")
    check.add_argument("--tenant", default=None)
    check.add_argument("--json", action="store_true", help="print JSON")
    add_common(check)
    check.set_defaults(func=run_check)
    gc = kb_sub.add_parser("gc", help="drop old generations no replica has used within the grace period, and "
                                             "what killed ingests left")
    gc.add_argument("name")
    gc.add_argument("--tenant", default=None)
    add_common(gc)
    gc.set_defaults(func=run_gc)


def run_list(args: argparse.Namespace) -> int:
    """Print every knowledge base."""
    from sift.cli.common import has_database, open_existing, where

    settings = settings_from(args)
    rows: list[dict[str, Any]] = []
    if has_database(settings):  # listing nothing creates nothing
        from sift.ingest.inspect import list_kbs

        rows = list_kbs(open_existing(settings))
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        echo(f"no knowledge bases in {escape(where(settings))} yet; create one with `sift ingest PATH --kb NAME`")
    for r in rows:
        echo(f"{escape(r['tenant'])}/{escape(r['name'])}  generation {r['generation']}  {r['files']} files  "
             f"{r['chunks']} chunks  {escape(r['root_path'])}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print one knowledge base in detail."""
    from sift.cli.common import open_existing
    from sift.ingest.inspect import show_kb

    settings = settings_from(args)
    info = show_kb(open_existing(settings), settings, args.name, args.tenant or settings.tenant)
    if args.json:
        print_json(info)
    else:
        _print_show(info)
    return 0


def run_check(args: argparse.Namespace) -> int:
    """Check one knowledge base's serving index files; 0 when intact, 1 when damaged."""
    from sift.cli.common import open_existing
    from sift.ingest.inspect import check_kb

    settings = settings_from(args)
    report = check_kb(open_existing(settings), settings, args.name, args.tenant or settings.tenant)
    if args.json:
        print_json(report)
    else:
        for f in report["files"]:
            echo(f"  {'ok ' if f['ok'] else 'BAD'}  {escape(f['name'])}" + ("" if f["ok"] else f": {escape(f['problem'])}"))
        state = "intact" if report["ok"] else f"damaged: {escape(report['problem'] or '')}"
        where = f" ({escape(report['directory'])})" if report["directory"] else ""
        echo(f"kb {escape(report['kb'])} generation {report['generation']}{where}: {state}")
        if report.get("note"):
            echo(escape(report["note"]))
        if not report["ok"] and report["generation"]:
            echo(f"rebuild it with `sift ingest PATH --kb {escape(report['kb'])}`")
    return 0 if report["ok"] else 1


def run_gc(args: argparse.Namespace) -> int:
    """Collect garbage for one knowledge base now (ingest runs it after every publish, too)."""
    from sift.cli.common import open_existing
    from sift.ingest.gc import collect_kb

    settings = settings_from(args)
    done = collect_kb(settings, open_existing(settings), args.name, args.tenant or settings.tenant)
    echo(f"kb {escape(done['kb'])}: dropped {done['dropped_file_versions']} old file versions, abandoned "
         f"{done['abandoned_building']} generations stuck in building, removed {done['removed_builder_dirs']} "
         f"half-built index folders; serving generation {done['serving']}, kept {done['kept']}")
    return 0


def _print_show(info: dict[str, Any]) -> None:
    kinds = ", ".join(f"{v} {k}" for k, v in info["chunks_by_kind"].items())
    echo(f"{escape(info['tenant'])}/{escape(info['name'])}  {'public' if info.get('public') else 'private'}")
    echo(f"  root        {escape(info['root_path'])}")
    echo(f"  serving     generation {info['generation']}: {info['files']} files, {info['nodes']} nodes, "
         f"{info['chunks']} chunks" + (f" ({kinds})" if kinds else ""))
    echo("  generations")
    for g in info["generations"]:
        echo(f"    {g['number']:>4}  {g['status']:<10} {_size(g['index_bytes']):>9} index  {_changes(g['stats'])}")
    job = info.get("last_job")
    if job:
        took = f" in {job['elapsed_s']:.1f} s" if job.get("elapsed_s") is not None else ""
        failures = f", {job['failures']} files failed to parse" if job.get("failures") else ""
        error = f": {escape(job['error'])}" if job.get("error") else ""
        ready = f" ({job['ready']})" if job.get("ready") else ""
        echo(f"  last job    #{job['id']} {job['status']}{ready}, generation {job['generation']}{took}{failures}{error}")


def _size(n: int | None) -> str:
    """Bytes as B, kB, MB or GB."""
    value = float(n or 0)
    for unit in ("B", "kB", "MB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def _changes(stats: dict[str, Any] | None) -> str:
    """A generation's file changes and counts in words (stats are the ingest summary's)."""
    if not stats:
        return ""
    changes = f"+{stats.get('added', 0)} ~{stats.get('changed', 0)} -{stats.get('deleted', 0)} files"
    took = f", {stats['seconds']:.1f} s" if stats.get("seconds") is not None else ""
    return f"{changes} ({stats.get('files', 0)} in all, {stats.get('chunks', 0)} chunks{took})"
