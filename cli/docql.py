"""``sift docql QUERY --kb NAME``: run a DocQL query and print results grouped by file."""

from __future__ import annotations

import argparse
from typing import Any

from sift.cli.common import add_common, open_existing, settings_from
from sift.cli.output import add_format, echo, escape, first_line, grep_line, print_json, print_jsonl

EXAMPLES = """examples:
  sift docql '$.toc[?(@.level == 1)]' --kb myproj
  sift docql '$.code.class("AuthService")' --kb myproj --json
  sift docql '$.code.callers("validate_token")' --kb myproj --limit 20
  sift docql '$.content.grep("TODO")' --kb myproj --format grep     # path:line: text
"""


def register(subparsers: argparse._SubParsersAction) -> None:
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
    add_format(p)
    p.add_argument("--limit", type=int, default=50, help="maximum number of results (default 50)")
    add_common(p)
    p.set_defaults(func=handle)


def _format(result: dict[str, Any]) -> str:
    lines: list[str] = []
    for path, items in result["files"].items():
        lines.append(escape(path))
        for item in items:
            _format_item(item, lines, "  ")
    shown = sum(len(v) for v in result["files"].values())
    more = f" (showing {shown}; raise --limit for more)" if result["truncated"] else ""
    if result.get("deadline_exceeded"):
        more = f" (showing {shown}; cut at the time limit, so there may be more: narrow the pattern or the path)"
    lines.append(f"{result['total']} result(s){more}")
    return "\n".join(lines)


def _format_item(item: dict[str, Any], lines: list[str], indent: str) -> None:
    label = item.get("name") or item.get("text") or ""
    extra = f"  ({escape(item['caller'])})" if item.get("caller") else ""
    lines.append(f"{indent}L{item['start_line']}-{item['end_line']}  {item['type']}  {escape(label)}{extra}")
    text = _text(item)
    if text:
        lines.extend(f"{indent}  | {escape(t, multiline=True)}" for t in text.splitlines())
    for child in item.get("children", []):
        _format_item(child, lines, indent + "  ")


def _text(item: dict[str, Any]) -> str | None:
    """The source or section text an item carries (a grep match's text is its label already)."""
    text = item.get("source") if item["type"] != "match" else None
    return text or item.get("content")


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every top-level item with its path, in result order (one line each in jsonl and grep output)."""
    return [{"path": path, **item} for path, items in result["files"].items() for item in items]


def _print(result: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(result)
    elif fmt == "jsonl":
        print_jsonl(_rows(result))
    elif fmt == "grep":
        for row in _rows(result):
            text = row["text"] if row["type"] == "match" else first_line(_text(row)) or row.get("name") or ""
            echo(grep_line(row["path"], row["start_line"], text))
    else:
        echo(_format(result))


def handle(args: argparse.Namespace) -> int:
    """Run the query and print it (exit 1 with a pointed message on a bad query)."""
    from sift.retrievers.docql import execute, parse, resolve_kb

    parse(args.query)  # a syntax error is reported before the database is opened
    settings = settings_from(args)
    engine = open_existing(settings)
    try:
        kb_id, generation = resolve_kb(engine, args.kb, settings.tenant)
        result = execute(engine, kb_id, generation, args.query, limit=args.limit)
    finally:
        engine.dispose()
    _print(result, args.format)
    return 0
