"""Retrieval without an LLM as the API serves it: fused search, DocQL and a stored file's lines."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from sqlalchemy import Engine

from sift.api.limits import SearchSlots
from sift.api.schemas import DocqlRequest, DocqlResponse, FileContent, SearchRequest, SearchResponse
from sift.models import Filters, SourceType
from sift.retrievers.docql import execute, resolve_kb
from sift.retrievers.files import read_file_lines
from sift.retrievers.search import Searcher, SearchResult


class SearchService:
    """Searches over the app's searcher, a bounded number computing at once in their own threads."""

    def __init__(self, engine: Engine, searcher: Searcher, slots: SearchSlots, pool: ThreadPoolExecutor) -> None:
        self.engine = engine
        self.searcher = searcher
        self.slots = slots
        self.pool = pool

    async def run(self, query: str, filters: Filters, *, k: int, channels: tuple[str, ...] | str,
                  index_type: str = "all") -> SearchResult:
        """``Searcher.search`` in a search slot and thread.

        A bounded number in flight (fewer while chat runs: api/limits.py), the rest queued in arrival order
        (CapacityLimiter wakes waiters FIFO). It runs in the search threads: the event loop stays free for chat."""
        search = partial(self.searcher.search, query, filters, k=k, channels=channels, index_type=index_type)
        async with self.slots.limiter:
            return await asyncio.get_running_loop().run_in_executor(self.pool, search)

    async def search(self, tenant: str, data: SearchRequest) -> SearchResponse:
        """BM25, vector and smart keyword channels fused, grouped by file."""
        filters = Filters(kb=data.kb, tenant=tenant, path_glob=data.path_glob, language=data.language,
                          source_type=SourceType(data.source_type) if data.source_type else None)
        channels = data.channels if isinstance(data.channels, str) else tuple(dict.fromkeys(data.channels))
        if not channels:
            channels = "all"
        result = await self.run(data.query, filters, k=data.k, channels=channels, index_type=data.index)
        return SearchResponse.model_validate(result.as_dict())

    def docql(self, tenant: str, data: DocqlRequest) -> DocqlResponse:
        """A DocQL query over the kb's serving generation."""
        kb_id, generation = resolve_kb(self.engine, data.kb, tenant)
        return DocqlResponse.model_validate(execute(self.engine, kb_id, generation, data.query, limit=data.limit))

    def file(self, tenant: str, kb: str, path: str, start_line: int | None, end_line: int | None) -> FileContent:
        """Lines of an ingested file (serving generation), confined to the knowledge base."""
        lines = read_file_lines(self.engine, kb, path, start_line, end_line, tenant=tenant)
        return FileContent(kb=kb, path=lines.path, start_line=lines.start_line, end_line=lines.end_line,
                           total_lines=lines.total_lines, lines=lines.lines)
