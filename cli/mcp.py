"""`sift mcp`: serve sift to coding agents over the Model Context Protocol (stdio, or streamable HTTP).

Tools: search, ask, docql, find_definition, find_callers, find_calls, read_file, list_kbs; resources
`sift://KB` (the file tree) and `sift://KB/PATH` (a file); the prompt `explain_codebase`. Models and
indexes load on the first tool call, so the server answers `initialize` at once.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from sift.cli.common import add_common

EXAMPLE = """examples:
  sift mcp --kb myproject                     # stdio, as an agent runs it: claude mcp add sift -- sift mcp --kb myproject
  sift mcp                                    # every tool takes `kb`; list_kbs names them
  sift mcp --http --port 8765                 # streamable HTTP at http://127.0.0.1:8765/mcp
  sift mcp --http --host 0.0.0.0 --port 8765  # auth on: Authorization: Bearer <key from `sift keys create`>
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the mcp command."""
    p = sub.add_parser("mcp", help="serve sift to coding agents over MCP (stdio or streamable HTTP)",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kb", default=None, help="serve only this knowledge base (the tools then take no `kb`)")
    p.add_argument("--http", action="store_true", help="streamable HTTP at /mcp instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="with --http: interface to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="with --http: port (default 8765)")
    p.add_argument("--auth", choices=["on", "off"], default=None,
                   help="with --http: require API keys (default: off on loopback, on elsewhere; $SIFT_AUTH)")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP)."""
    from sift.api.settings import ApiSettings
    from sift.cli import UsageError
    from sift.cli.serve import resolve_auth
    from sift.names import check_name

    if args.kb is not None:
        check_name(args.kb, "knowledge base")
    if not args.http and (args.auth is not None or args.host != "127.0.0.1" or args.port != 8765):
        raise UsageError("--host, --port and --auth go with --http")
    overrides: dict[str, Any] = {}
    if args.data_dir is not None:
        overrides["data_dir"] = args.data_dir.resolve()
    if args.http:
        overrides["auth"] = resolve_auth(args.host, args.auth, os.environ.get("SIFT_AUTH"))
        settings = ApiSettings(**overrides)
        from sift.api.mcp.http import serve_http

        serve_http(args.kb, settings, args.host, args.port)
        return 0
    settings = ApiSettings(auth=False, **overrides)
    import anyio

    anyio.run(_stdio, args.kb, settings)
    return 0


async def _stdio(kb: str | None, settings: Any) -> None:
    from sift.api.mcp.state import LazyState
    from sift.api.mcp.tools import build_server

    source = LazyState(settings)
    try:
        await build_server(source, kb).run_stdio_async()
    finally:
        await source.aclose()
