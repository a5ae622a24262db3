"""The agent's tools (``search``, ``list_file_content``, ``docql``): run one call, return text and hits."""

from __future__ import annotations

import json
from typing import Any

from sift.errors import SiftError
from sift.graph.context import AskContext
from sift.models import Filters, Hit
from sift.retrievers.docql import execute, resolve_kb, result_hits
from sift.retrievers.files import read_file_lines

TOOL_TEXT_CHARS = 6000  # what the model sees of one tool result


def run_tool(ctx: AskContext, kb: str, tenant: str, name: str, args: dict[str, Any]) -> tuple[str, list[Hit]]:
    """Execute one tool call; returns the text shown to the model and the hits that join the evidence."""
    try:
        if name == "search":
            result = ctx.searcher.search(str(args.get("question", "")), Filters(kb=kb, tenant=tenant),
                                         k=max(1, min(int(args.get("top_k") or 5), 10)),
                                         index_type=str(args.get("index_type") or "all"))
            return json.dumps(result.as_dict()["files"])[:TOOL_TEXT_CHARS], list(result.hits)
        if name == "list_file_content":
            lines = read_file_lines(ctx.engine, kb, str(args.get("file_path", "")), args.get("start_line"),
                                    args.get("end_line"), tenant=tenant)
            hit = Hit(chunk_id=None, node_id=None, path=lines.path, start_line=lines.start_line,
                      end_line=max(lines.start_line, lines.end_line), kind="lines", name=lines.path, score=0.0,
                      channel="file", rank=1, channels=("file",))
            return lines.numbered()[:TOOL_TEXT_CHARS], [hit]
        if name == "docql":
            kb_id, gen = resolve_kb(ctx.engine, kb, tenant)
            found = execute(ctx.engine, kb_id, gen, str(args.get("query", "")), limit=10)
            return json.dumps(found["files"])[:TOOL_TEXT_CHARS], result_hits(found, 10)
        return f"unknown tool {name!r}; the tools are search, list_file_content and docql", []
    except SiftError as exc:
        return f"error: {exc.message}", []
    except (TypeError, ValueError) as exc:  # arguments of the wrong type from the model
        return f"error: bad arguments for {name}: {exc}", []
