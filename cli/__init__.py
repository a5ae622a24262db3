"""The ``sift`` command line: thin — parses arguments, builds Settings once, calls the packages.

Each command lives in its own module under ``sift.cli`` exposing ``register(subparsers)``; the handler it sets
returns an exit code. Exit codes: 0 ok, 1 a user error (a ``SiftError``), 2 a usage error.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from sift.errors import SiftError

COMMAND_MODULES = ["ingest", "files", "kb", "search", "docql", "eval", "serve", "keys", "ask", "threads", "worker"]

EXIT_OK, EXIT_USER_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad invocation (e.g. a path that does not exist): exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available command registered."""
    parser = argparse.ArgumentParser(
        prog="sift",
        description="Ask questions about a code base; answers cite the exact files and lines.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"sift.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"sift.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sift`` console script."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"sift {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SiftError as exc:
        print(f"sift {args.command}: error: {exc.message}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
