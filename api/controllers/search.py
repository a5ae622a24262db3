"""Direct retrieval without an LLM: ``POST /v1/search``, ``POST /v1/docql``, ``GET /v1/kbs/{kb}/files/{path}``."""

from __future__ import annotations

import asyncio
from functools import partial

from litestar import Controller, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, Parameter

from sift.api.controllers.common import errors
from sift.api.schemas import KB_NAME, DocqlRequest, DocqlResponse, FileContent, SearchRequest, SearchResponse
from sift.models import Filters, SourceType
from sift.retrievers.docql import execute, resolve_kb
from sift.retrievers.files import read_file_lines


class SearchController(Controller):
    """Fused search and DocQL over one knowledge base of the caller's."""

    path = "/v1"
    tags = ["retrieval"]

    @post("/search", status_code=200, responses=errors(404, 503))
    async def search(self, state: State, tenant: NamedDependency[str], data: JSONBody[SearchRequest]) -> SearchResponse:
        """BM25, vector and smart keyword channels fused with RRF, grouped by file."""
        filters = Filters(kb=data.kb, tenant=tenant, path_glob=data.path_glob, language=data.language,
                          source_type=SourceType(data.source_type) if data.source_type else None)
        channels = data.channels if isinstance(data.channels, str) else tuple(dict.fromkeys(data.channels))
        if not channels:
            channels = "all"

        # A bounded number in flight (fewer while chat runs: api/limits.py), the rest queued in arrival order
        # (CapacityLimiter wakes waiters FIFO). It runs in the search threads: the event loop stays free for chat.
        search = partial(state.searcher.search, data.query, filters, k=data.k, channels=channels,
                         index_type=data.index)
        async with state.search_slots.limiter:
            result = await asyncio.get_running_loop().run_in_executor(state.search_pool, search)
        return SearchResponse.model_validate(result.as_dict())

    @post("/docql", status_code=200, sync_to_thread=True, responses=errors(404, 503))
    def docql(self, state: State, tenant: NamedDependency[str], data: JSONBody[DocqlRequest]) -> DocqlResponse:
        """A DocQL query; syntax errors are 400 with the 1-based ``position`` of the problem."""
        kb_id, generation = resolve_kb(state.engine, data.kb, tenant)
        return DocqlResponse.model_validate(execute(state.engine, kb_id, generation, data.query, limit=data.limit))

    @get("/kbs/{kb:str}/files/{file_path:path}", sync_to_thread=True, responses=errors(404, 503))
    def file(
        self,
        state: State,
        tenant: NamedDependency[str],
        file_path: FromPath[str],
        kb: str = Parameter(pattern=KB_NAME),
        start_line: int | None = Parameter(default=None, ge=1, le=10_000_000),
        end_line: int | None = Parameter(default=None, ge=1, le=10_000_000),
    ) -> FileContent:
        """Lines of an ingested file (serving generation), confined to the knowledge base."""
        lines = read_file_lines(state.engine, kb, file_path.removeprefix("/"), start_line, end_line, tenant=tenant)
        return FileContent(kb=kb, path=lines.path, start_line=lines.start_line, end_line=lines.end_line,
                           total_lines=lines.total_lines, lines=lines.lines)
