"""`sift search QUERY --kb NAME`: fused BM25 + vector + smart keyword search, grouped by file."""

from __future__ import annotations

import argparse
import json

from sift.cli.common import add_common, settings_from

EXAMPLE = 'example: sift search "where is the auth token validated" --kb myproject --path "src/**" -k 5'


def register(sub: argparse._SubParsersAction) -> None:
    """Add the search command."""
    p = sub.add_parser("search", help="search a knowledge base (no LLM)", description=__doc__, epilog=EXAMPLE)
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
    p.add_argument("--json", action="store_true", help="print the search_result JSON")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Search and print results."""
    from sift.db import open_database
    from sift.embed import make_embedder
    from sift.models import Filters
    from sift.retrievers.base import IndexCache
    from sift.retrievers.search import Searcher

    settings = settings_from(args)
    engine = open_database(settings)
    cache = IndexCache(engine, settings.resolved_index_dir())
    tenant = args.tenant or settings.tenant
    filters = Filters(kb=args.kb, tenant=tenant, path_glob=args.path, language=args.lang, source_type=args.source)
    cache.get(args.kb, tenant)  # a clear error before the model loads
    embedder = make_embedder(settings) if args.channel in ("vector", "all") else None
    searcher = Searcher(engine, cache, embedder)
    try:
        result = searcher.search(args.query, filters, k=args.k, channels=args.channel, index_type=args.index)
    finally:
        searcher.close()
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return 0
    if not result.hits:
        print("no results")
    for path, entries in result.as_dict()["files"].items():
        print(path)
        for e in entries:
            print(f"  {path}:{e['start_line']}-{e['end_line']}  {e['type']} {e['name']}  {e['score']:.4f}  "
                  f"[{','.join(e['channels'])}]")
    return 0
