"""`sift files --kb NAME PATH [--start N --end M]`: print stored lines of an ingested file."""

from __future__ import annotations

import argparse

from sift.cli.common import add_common, open_existing, settings_from
from sift.cli.output import echo

EXAMPLE = "example: sift files --kb myproject src/app/auth.py --start 10 --end 40"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the files command."""
    p = sub.add_parser("files", help="print stored lines of an ingested file", description=__doc__, epilog=EXAMPLE)
    p.add_argument("path", help="repository-relative path of the file")
    p.add_argument("--kb", required=True, help="knowledge base name")
    p.add_argument("--tenant", default=None, help="owning tenant (default: $SIFT_TENANT or 'default')")
    p.add_argument("--start", type=int, default=None, help="first line (1-based)")
    p.add_argument("--end", type=int, default=None, help="last line (inclusive)")
    p.add_argument("--no-numbers", action="store_true", help="print the lines without line numbers")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the requested lines."""
    from sift.retrievers.files import read_file_lines

    settings = settings_from(args)
    engine = open_existing(settings)
    result = read_file_lines(engine, args.kb, args.path, args.start, args.end, tenant=args.tenant or settings.tenant)
    width = len(str(result.end_line))
    for number, line in enumerate(result.lines, result.start_line):
        echo(line if args.no_numbers else f"{number:>{width}}  {line}")
    return 0
