"""DocQL as a retrieval channel (query → ``Hit`` list) and as a tool an LLM agent can call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine

from sift.catalog import get_serving_kb
from sift.errors import InvalidQuery
from sift.models import Filters, Hit
from sift.retrievers.docql.executor import execute

CHANNEL = "docql"
SNIPPET_CHARS = 400


def resolve_kb(engine: Engine, name: str, tenant: str = "default") -> tuple[int, int]:
    """``(kb_id, current_generation)`` of a tenant's knowledge base; NotFound / IndexNotReady otherwise."""
    kb = get_serving_kb(engine, name, tenant)
    return kb.id, kb.generation


def result_hits(result: dict[str, Any], k: int) -> list[Hit]:
    """The first ``k`` items of a ``docql_result`` as ranked hits (rank 1 first, score 1/rank)."""
    hits: list[Hit] = []
    for path, items in result["files"].items():
        for item in items:
            if len(hits) >= k:
                return hits
            rank = len(hits) + 1
            text = (
                item.get("source") or item.get("content") or item.get("signature") or item.get("text") or ""
            )
            hits.append(
                Hit(
                    chunk_id=None,
                    node_id=item.get("node_id"),
                    path=path,
                    start_line=item["start_line"],
                    end_line=item["end_line"],
                    kind=item["type"],
                    name=str(item.get("name") or item.get("text") or path),
                    score=1.0 / rank,
                    channel=CHANNEL,
                    rank=rank,
                    snippet=text[:SNIPPET_CHARS],
                    channels=(CHANNEL,),
                )
            )
    return hits


class DocQLChannel:
    """Runs DocQL queries for the graph: ``search(query, filters, k)`` → hits in (path, line) order."""

    channel = CHANNEL

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def search(self, query: str, filters: Filters, k: int = 10) -> list[Hit]:
        """Hits for a DocQL ``query`` in the knowledge base named by ``filters`` (its metadata filters apply)."""
        kb_id, generation = resolve_kb(self.engine, filters.kb, filters.tenant or "default")
        result = execute(self.engine, kb_id, generation, query, limit=max(1, k), scope=filters)
        return result_hits(result, k)


def make_docql_tool(engine: Engine, kb_id: int, generation: int, *, limit: int = 20) -> Callable[[str], dict]:
    """A ``docql(query)`` function for an agent: returns a ``docql_result``, or a ``docql_error`` it can fix."""
    from sift.retrievers.docql.describe import DOCQL_TOOL_DESCRIPTION

    def docql(query: str) -> dict[str, Any]:
        try:
            return execute(engine, kb_id, generation, query, limit=limit)
        except InvalidQuery as exc:
            return {"type": "docql_error", "query": query, "message": exc.message, "position": exc.position}

    docql.__doc__ = DOCQL_TOOL_DESCRIPTION
    return docql
