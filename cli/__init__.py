"""The ``sift`` command line: thin — parses arguments, builds Settings once, calls the packages.

Each command lives in its own module under ``sift.cli`` exposing ``register(subparsers)``; the handler it sets
returns an exit code. Command modules import nothing heavy at the top: a command loads its models and indexes
only after its arguments, knowledge base and files have been checked, so a mistake is reported at once.

Exit codes (the README's table): 0 ok, 1 a user error (a ``SiftError``: unknown knowledge base, bad query, missing
file), 2 a usage error (bad options), 70 an internal error (a bug; the traceback is printed), 130 interrupted
(Ctrl-C), 141 stdout closed early (``sift search … | head``), the status a shell reports for a program that
SIGPIPE ended.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from sift.errors import SiftError

COMMAND_MODULES = ["ingest", "files", "kb", "search", "docql", "eval", "serve", "keys", "ask", "threads", "worker",
                   "mcp", "llm"]

EXIT_OK, EXIT_USER_ERROR, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 70, 130, 141


class UsageError(Exception):
    """A bad invocation that argparse cannot see (options that contradict each other): exit code 2."""


class _Version(argparse.Action):
    """``--version``: looks the installed version up only when asked (package metadata costs an import)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("sift")
        except PackageNotFoundError:
            v = "unknown (not installed)"
        sys.stdout.write(f"sift {v}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available command registered."""
    parser = argparse.ArgumentParser(
        prog="sift",
        description="Ask questions about a code base; answers cite the exact files and lines.",
    )
    parser.add_argument("--version", action=_Version)
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
    # Model loading draws its own tqdm bars ("Loading weights"); sift shows its own progress, on terminals only.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe surfaces here, inside the handler below, not at interpreter exit
        return code
    except BrokenPipeError:
        return _closed_stdout()
    except UsageError as exc:
        _error(args.command, str(exc))
        return EXIT_USAGE
    except SiftError as exc:
        from sift.errors import KbNotFound

        note = ""
        if isinstance(exc, KbNotFound):
            from sift.cli.common import kb_not_found_note

            note = kb_not_found_note(args)
        _error(args.command, exc.message + note)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug gets its own exit code and its traceback
        from sift.errors import from_environment

        if (failure := from_environment(exc)) is not None:  # disk full, permissions, a damaged database
            _error(args.command, failure.message)
            return EXIT_USER_ERROR
        traceback.print_exc()
        _error(args.command, "internal error (a bug in sift; the traceback above says where)")
        return EXIT_INTERNAL


def _error(command: str, message: str) -> None:
    from sift.cli.output import escape

    print(f"sift {command}: error: {escape(message, multiline=True)}", file=sys.stderr)


def _closed_stdout() -> int:
    """The reader went away (``| head``): stop quietly, as the Python docs recommend for SIGPIPE.

    Python flushes stdout again at exit; pointing it at /dev/null keeps that flush from raising a second time.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured by a test)
        pass
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
