"""`sift serve`: run the REST API under uvicorn (auth off by default only on a loopback host)."""

from __future__ import annotations

import argparse
import ipaddress
import os
from pathlib import Path
from typing import Any

from sift.cli import UsageError
from sift.cli.common import add_common

EXAMPLE = """examples:
  sift serve                                   # http://127.0.0.1:8000, no auth, docs at /schema
  sift serve --host 0.0.0.0 --workers 2 --allow-root /srv/repos   # auth on; keys from `sift keys create`
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the serve command."""
    p = sub.add_parser("serve", help="run the REST API", description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    p.add_argument("--auth", choices=["on", "off"], default=None,
                   help="require API keys (default: off on 127.0.0.1/::1/localhost, on elsewhere; $SIFT_AUTH)")
    p.add_argument("--allow-root", type=Path, action="append", default=None,
                   help="directory ingest jobs may read (repeatable; default $SIFT_ALLOWED_ROOTS)")
    add_common(p)
    p.set_defaults(func=run)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_auth(host: str, flag: str | None, env: str | None) -> bool:
    """Whether to require keys: explicit flag, then $SIFT_AUTH, then on unless the host is loopback.

    Turning auth off on a non-loopback host is refused: it would hand every tenant's data to the network.
    """
    choice = flag if flag is not None else env
    if choice is None:
        return not is_loopback(host)
    auth = choice.strip().lower() not in ("off", "0", "false", "no")
    if not auth and not is_loopback(host):
        raise UsageError(f"auth off is only allowed on a loopback host, not {host!r}; create keys with "
                         "`sift keys create --tenant NAME` instead")
    return auth


def run(args: argparse.Namespace) -> int:
    """Build the settings and run uvicorn."""
    from sift.api.settings import ApiSettings

    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    overrides: dict[str, Any] = {"auth": resolve_auth(args.host, args.auth, os.environ.get("SIFT_AUTH"))}
    if args.data_dir is not None:
        overrides["data_dir"] = args.data_dir.resolve()
    if args.allow_root:
        overrides["allowed_roots"] = [p.resolve() for p in args.allow_root]
    settings = ApiSettings(**overrides)
    from sift.embed import check_embedder

    check_embedder(settings)  # the app loads the query encoder at startup; a missing model is said here, in a line
    import uvicorn

    print(f"sift: serving on http://{args.host}:{args.port} (auth {'on' if settings.auth else 'off'}, "
          f"data {settings.data_dir}, docs /schema)")
    if args.workers == 1:
        from sift.api.app import create_app

        uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")
        return 0
    # workers import the app afresh: hand the settings over through the environment
    os.environ["SIFT_AUTH"] = "on" if settings.auth else "off"
    os.environ["SIFT_DATA_DIR"] = str(settings.data_dir)
    if args.allow_root:
        import json

        os.environ["SIFT_ALLOWED_ROOTS"] = json.dumps([str(p) for p in settings.allowed_roots])
    uvicorn.run("sift.api.app:create_app_from_env", factory=True, host=args.host, port=args.port,
                workers=args.workers, log_level="info")
    return 0
