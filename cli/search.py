"""`sift search QUERY --kb NAME`: fused BM25 + vector + smart keyword search, grouped by file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sift.cli.common import add_common, open_existing, settings_from
from sift.cli.output import add_format, echo, escape, first_line, grep_line, print_json, print_jsonl

EXAMPLE = """examples:
  sift search "where is the auth token validated" --kb myproject --path "src/**" -k 5
  sift search "retry policy" --kb myproject --format grep     # path:line: text, for editors and grep users
  sift search "retry policy" --kb myproject --format jsonl | jq -r .path"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the search command."""
    p = sub.add_parser("search", help="search a knowledge base (no LLM)", description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("query")
    p.add_argument("--kb", required=True, help="knowledge base name")
    p.add_argument("--tenant", default=None)
    p.add_argument("--channel", default="all", choices=["bm25", "vector", "smart", "all"])
    p.add_argument("--index", default="all", choices=["file", "function", "doc", "all"],
                   help="vector index level (default all)")
    p.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--path", default=None, help="only paths matching this glob, e.g. 'src/**' or '*.md'")
    p.add_argument("--lang", default=None, help="only this language, e.g. python")
    p.add_argument("--source", default=None, choices=["code", "doc", "text"], help="only this source type")
    add_format(p)
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Search and print results."""
    from sift.retrievers.search import check_request

    # The query and the model's files (a look, not a load), then the knowledge base, then the indexes, and the
    # embedding model last: a mistake is reported before anything heavy loads.
    query, names = check_request(args.query, args.k, args.channel, args.index)
    settings = settings_from(args)
    if "vector" in names:
        from sift.embed import check_embedder

        check_embedder(settings)
    from sift.models import Filters
    from sift.retrievers.backend import make_index_cache
    from sift.retrievers.search import Searcher

    engine = open_existing(settings)
    cache = make_index_cache(settings, engine)
    tenant = args.tenant or settings.tenant
    filters = Filters(kb=args.kb, tenant=tenant, path_glob=args.path, language=args.lang, source_type=args.source)
    bundle = cache.get(args.kb, tenant)
    embedder = None
    if "vector" in names and getattr(bundle, "vectors_ready", True):  # keyword-only while it is embedded
        from sift.embed import make_embedder

        embedder = make_embedder(settings)
    searcher = Searcher(engine, cache, embedder)
    try:
        result = searcher.search(query, filters, k=args.k, channels=args.channel, index_type=args.index)
    finally:
        searcher.close()
    _print(result.as_dict(), args.format)
    return 0


def _hits_with_snippets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranked hits, each with its snippet (``files`` holds them grouped by path)."""
    snippets = {e["rank"]: e.get("snippet") or "" for entries in data["files"].values() for e in entries}
    return [{**h, "snippet": snippets.get(h["rank"], "")} for h in data["hits"]]


def _print(data: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(data)
        return
    if fmt == "jsonl":
        print_jsonl(_hits_with_snippets(data))
        return
    if fmt == "grep":
        for h in _hits_with_snippets(data):
            echo(grep_line(h["path"], h["start_line"], first_line(h["snippet"]) or h["name"]))
        return
    for reason in data.get("degraded_reasons") or []:
        echo(f"note: {escape(reason)}", file=sys.stderr)
    if not data["hits"]:
        echo("no results")
    for path, entries in data["files"].items():
        echo(escape(path))
        for e in entries:
            echo(f"  {escape(path)}:{e['start_line']}-{e['end_line']}  {e['type']} {escape(e['name'])}  "
                 f"{e['score']:.4f}  [{','.join(e['channels'])}]")
            if e.get("copies"):
                also = ", ".join(f"{escape(c['path'])}:{c['start_line']}-{c['end_line']}" for c in e["copies"])
                echo(f"    also in {also}")
