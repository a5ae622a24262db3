"""LangChain interop: plug a sift knowledge base into a LangChain chain.

- ``SiftRetriever`` is a ``BaseRetriever`` over the fused search (or any single channel); it returns
  ``Document``s whose metadata carries path, lines, kind, name, score and channels.
- ``langchain_faiss`` exposes a generation's FAISS index as a ``langchain_community`` ``FAISS`` vector store
  (sharing the loaded index, not copying it), for chains that expect a vector store.
- ``LangChainEmbeddings`` adapts a sift embedder to LangChain's ``Embeddings`` interface.
These sit beside the hot path; the service itself calls the channels directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict
from sqlalchemy import select

from sift.db.tables import Chunk
from sift.errors import InvalidQuery
from sift.models import Filters
from sift.retrievers.search import Searcher

if TYPE_CHECKING:  # langchain_community loads only when a FAISS store is asked for
    from langchain_community.vectorstores import FAISS

    from sift.embed import Embedder


class LangChainEmbeddings(Embeddings):
    """A sift ``Embedder`` as LangChain ``Embeddings``."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (normalised vectors)."""
        return self.embedder.embed_documents(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self.embedder.embed_query(text).tolist()


class SiftRetriever(BaseRetriever):
    """Fused sift search as a LangChain retriever."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    searcher: Searcher
    filters: Filters
    k: int = 10
    channels: str | tuple[str, ...] = "all"
    index_type: str = "all"

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = self.searcher.search(query, self.filters, k=self.k, channels=self.channels,
                                      index_type=self.index_type)
        docs = []
        for h in result.hits:
            docs.append(Document(
                page_content=result.snippets.get(h.chunk_id, h.snippet) if h.chunk_id is not None else h.snippet,
                metadata={"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "kind": h.kind,
                          "name": h.name, "score": h.score, "rank": h.rank, "channels": list(h.channels),
                          "chunk_id": h.chunk_id, "node_id": h.node_id, "kb": self.filters.kb},
            ))
        return docs


def langchain_faiss(searcher: Searcher, kb: str, index_type: str = "function", tenant: str = "default") -> FAISS:
    """The ``index_type`` FAISS index of ``kb``'s serving generation as a LangChain ``FAISS`` vector store."""
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy

    bundle = searcher.cache.get(kb, tenant)
    if not hasattr(bundle, "indexes"):
        raise InvalidQuery("a LangChain FAISS store needs the local search backend's index files; with "
                           "SIFT_SEARCH_BACKEND=postgres use SiftRetriever instead")
    if not getattr(bundle, "vectors_ready", True):  # keyword-only while its embeddings are computed
        from sift.errors import VectorsNotReady
        from sift.retrievers.channels import vectors_not_ready

        raise VectorsNotReady(vectors_not_ready(bundle.kb))
    index = bundle.indexes.vectors[index_type]
    ids = [int(i) for i in index.ids]
    with searcher.engine.connect() as conn:
        rows = conn.execute(select(Chunk.id, Chunk.text, Chunk.path, Chunk.start_line, Chunk.end_line, Chunk.kind,
                                   Chunk.name).where(Chunk.id.in_(ids))).all() if ids else []
    docs = {
        str(r.id): Document(page_content=r.text, metadata={"path": r.path, "start_line": r.start_line,
                                                           "end_line": r.end_line, "kind": r.kind, "name": r.name,
                                                           "chunk_id": r.id})
        for r in rows
    }
    return FAISS(
        embedding_function=LangChainEmbeddings(searcher.query_embedder()), index=index.index,
        docstore=InMemoryDocstore(docs), index_to_docstore_id={i: str(i) for i in ids},
        distance_strategy=DistanceStrategy.MAX_INNER_PRODUCT,
    )
