"""``sift docql QUERY --kb NAME``: run a DocQL query and print results grouped by file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sift.cli.common import add_common, settings_from

EXAMPLES = """examples:
  sift docql '$.toc[?(@.level == 1)]' --kb myproj
  sift docql '$.code.class("AuthService")' --kb myproj --json
  sift docql '$.code.callers("validate_token")' --kb myproj --limit 20
"""


def register(subparsers: Any) -> None:
    """Add the ``docql`` command."""
    p = subparsers.add_parser(
        "docql",
        help="run a structured DocQL query over code and docs",
        description="Run a DocQL query (JSONPath-like) against an ingested knowledge base.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("query", help="the DocQL query, e.g. '$.code.class(\"AuthService\")'")
    p.add_argument("--kb", required=True, help="knowledge base name")
    p.add_argument("--json", action="store_true", help="print the docql_result as JSON")
    p.add_argument("--limit", type=int, default=50, help="maximum number of results (default 50)")
    add_common(p)
    p.set_defaults(func=handle)


def _format(result: dict[str, Any]) -> str:
    lines: list[str] = []
    for path, items in result["files"].items():
        lines.append(path)
        for item in items:
            _format_item(item, lines, "  ")
    shown = sum(len(v) for v in result["files"].values())
    more = f" (showing {shown}; raise --limit for more)" if result["truncated"] else ""
    lines.append(f"{result['total']} result(s){more}")
    return "\n".join(lines)


def _format_item(item: dict[str, Any], lines: list[str], indent: str) -> None:
    label = item.get("name") or item.get("text") or ""
    extra = f"  ({item['caller']})" if item.get("caller") else ""
    lines.append(f"{indent}L{item['start_line']}-{item['end_line']}  {item['type']}  {label}{extra}")
    text = item.get("source") if item["type"] != "match" else None
    text = text or item.get("content")
    if text:
        lines.extend(f"{indent}  | {t}" for t in text.splitlines())
    for child in item.get("children", []):
        _format_item(child, lines, indent + "  ")


def handle(args: argparse.Namespace) -> int:
    """Run the query and print it (exit 1 with a pointed message on a bad query)."""
    from sift.db import open_database
    from sift.retrievers.docql import execute, resolve_kb

    settings = settings_from(args)
    engine = open_database(settings)
    try:
        kb_id, generation = resolve_kb(engine, args.kb, settings.tenant)
        result = execute(engine, kb_id, generation, args.query, limit=args.limit)
    finally:
        engine.dispose()
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _format(result))
    return 0
