"""Direct retrieval without an LLM: ``POST /v1/search``, ``POST /v1/docql``, ``GET /v1/kbs/{kb}/files/{path}``."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, Parameter

from sift.api.controllers.common import errors
from sift.api.schemas import KB_NAME, DocqlRequest, DocqlResponse, FileContent, SearchRequest, SearchResponse
from sift.api.services import SearchService


class SearchController(Controller):
    """Fused search and DocQL over one knowledge base of the caller's."""

    path = "/v1"
    tags = ["retrieval"]

    @post("/search", status_code=200, responses=errors(404, 503))
    async def search(self, search_service: NamedDependency[SearchService], tenant: NamedDependency[str],
                     data: JSONBody[SearchRequest]) -> SearchResponse:
        """BM25, vector and smart keyword channels fused with RRF, grouped by file."""
        return await search_service.search(tenant, data)

    @post("/docql", status_code=200, sync_to_thread=True, responses=errors(404, 503))
    def docql(self, search_service: NamedDependency[SearchService], tenant: NamedDependency[str],
              data: JSONBody[DocqlRequest]) -> DocqlResponse:
        """A DocQL query; syntax errors are 400 with the 1-based ``position`` of the problem."""
        return search_service.docql(tenant, data)

    @get("/kbs/{kb:str}/files/{file_path:path}", sync_to_thread=True, responses=errors(404, 503))
    def file(
        self,
        search_service: NamedDependency[SearchService],
        tenant: NamedDependency[str],
        file_path: FromPath[str],
        kb: str = Parameter(pattern=KB_NAME),
        start_line: int | None = Parameter(default=None, ge=1, le=10_000_000),
        end_line: int | None = Parameter(default=None, ge=1, le=10_000_000),
    ) -> FileContent:
        """Lines of an ingested file (serving generation), confined to the knowledge base."""
        return search_service.file(tenant, kb, file_path.removeprefix("/"), start_line, end_line)
