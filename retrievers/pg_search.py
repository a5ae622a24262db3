"""Query side of the PostgreSQL search backend: BM25, vector and smart channels as SQL over the serving generation.

The channels have the local ones' interface (``retrievers.channels``) and are chosen by ``Searcher`` when its cache
is a ``PgSearchCache``. A replica holds no index: each request resolves the serving generation (as ``IndexCache``
does) and queries it, so a published generation is searched at once, with no files and no reload. Filters (tenant
and knowledge base select ``kb_id``; source type, language and path glob go through ``files``; public through
``chunks``) are WHERE clauses of the ranking query itself, so the top k are the top k of the allowed chunks.
Tables and their invariants: ``sift.db.search_schema``; the write side: ``ingest.pg_index``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from sift.catalog import KbRef
from sift.db.search_schema import VECTOR_TABLES, VISIBLE, vector_literal
from sift.errors import IndexNotReady, InvalidQuery
from sift.models import Filters, Hit
from sift.retrievers.pg_sql import bm25_sql, filter_sql, smart_sql
from sift.retrievers.serving import ServingCache
from sift.retrievers.smart import CONTENT_WEIGHT, LEVEL_WEIGHT, NAME_WEIGHT, SmartResult, query_terms
from sift.tokenize import tokenize

if TYPE_CHECKING:  # the embedders load with the entry point
    from sift.embed import Embedder

# The chunk kinds of each index level (sift.models.index_level): type declarations are searched with functions.
INDEX_KINDS = {"file": ("file",), "function": ("function", "type"), "doc": ("doc",),
               "all": ("file", "function", "doc", "type")}
#: HNSW candidates per query (pgvector's hnsw.ef_search): at least this many, and twice k for deep lists.
EF_SEARCH = 128
MAX_EF_SEARCH = 1000  # pgvector's upper bound
#: BM25 parameters of the local index (sift.index.bm25.BM25Builder defaults, i.e. rank_bm25's).
K1, B, EPSILON = 1.5, 0.75, 0.25
#: SmartMatcher.search's default: narrow when a plan matches more than this many times k chunks.
TOO_MANY = 50
_HIT_COLS = "c.node_id, c.path, c.start_line, c.end_line, c.kind, c.name, c.symbol, c.part, c.module_code"


@dataclass
class PgKb:
    """The serving generation of one knowledge base and its search statistics (a few numbers, no index)."""

    kb: KbRef
    n_docs: int
    total_len: int
    n_terms: int
    idf_sum: float
    model_id: str
    dim: int
    vector_kind: str
    engine: Engine = field(repr=False)

    @property
    def avgdl(self) -> float:
        """Average document length in tokens, as the local index computes it."""
        return self.total_len / self.n_docs if self.n_docs else 0.0

    @property
    def idf_floor(self) -> float:
        """rank_bm25's floor for negative idf: epsilon × the mean idf over the vocabulary."""
        return EPSILON * (self.idf_sum / self.n_terms) if self.n_terms else 0.0

    def doc_freqs(self, tokens: list[str]) -> tuple[int, dict[str, int]]:
        """(N, {token: document frequency}) in this generation; absent tokens are left out."""
        if not tokens:
            return self.n_docs, {}
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT term, df FROM search_terms WHERE kb_id = :kb AND generation = :gen "
                                     "AND term = ANY(CAST(:terms AS text[]))"),
                                {"kb": self.kb.id, "gen": self.kb.generation, "terms": sorted(set(tokens))}).all()
        return self.n_docs, {r.term: int(r.df) for r in rows}

    def hits(self, rows: Sequence[Any], channel: str) -> list[Hit]:
        """Hits from ranked rows of (chunk_id, score) and the chunk columns of ``_HIT_COLS``."""
        return [_hit(r, float(r.score), channel, rank) for rank, r in enumerate(rows, 1)]

    def rebuild(self, ranked: Iterable[tuple[int, float, int]], channel: str) -> list[Hit]:
        """Hits for (chunk id, score, rank) triples, in one query; a chunk no longer in this generation is dropped."""
        ranked = list(ranked)
        if not ranked:
            return []
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                f"SELECT c.id AS chunk_id, {_HIT_COLS} FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.id = ANY(CAST(:ids AS integer[])) AND {VISIBLE}"),
                {"ids": sorted({cid for cid, _, _ in ranked}), "kb": self.kb.id, "gen": self.kb.generation}).all()
        by_id = {r.chunk_id: r for r in rows}
        return [_hit(by_id[cid], score, channel, rank) for cid, score, rank in ranked if cid in by_id]


def _hit(r: Any, score: float, channel: str, rank: int) -> Hit:
    return Hit(chunk_id=int(r.chunk_id), node_id=r.node_id, path=r.path, start_line=r.start_line,
               end_line=r.end_line, kind=r.kind, name=r.name, symbol=r.symbol, part=r.part or None,
               module_code=bool(r.module_code), score=score, channel=channel, rank=rank, channels=(channel,))


class PgSearchCache(ServingCache[PgKb]):
    """Resolves a knowledge base's serving generation to a ``PgKb``; what ``IndexCache`` is to the local backend.

    Only the generation's statistics row is remembered (per kb id and generation), and the (tenant, kb) →
    generation lookup for ``ref_ttl_s`` (0: every call). Like ``IndexCache`` it leases the generations it serves,
    so garbage collection keeps an old generation's rows while requests may still read them.
    """

    backend = "postgres"

    def _load(self, ref: KbRef) -> PgKb:
        try:
            with self.engine.connect() as conn:
                row = conn.execute(text("SELECT * FROM search_stats WHERE kb_id = :kb AND generation = :gen"),
                                   {"kb": ref.id, "gen": ref.generation}).first()
        except SQLAlchemyError as exc:  # the tables are missing: pgvector was never set up here
            raise IndexNotReady(f"knowledge base {ref.name!r} has no PostgreSQL search index (SIFT_SEARCH_BACKEND="
                                f"postgres needs pgvector); run `sift ingest {ref.root_path} --kb {ref.name}`") from exc
        if row is None:
            raise IndexNotReady(
                f"knowledge base {ref.name!r} generation {ref.generation} has no PostgreSQL search index; run "
                f"`sift ingest {ref.root_path} --kb {ref.name}` with SIFT_SEARCH_BACKEND=postgres")
        return PgKb(ref, int(row.n_docs), int(row.total_len), int(row.n_terms), float(row.idf_sum), row.model_id,
                    int(row.dim), row.vector_kind, self.engine)

    def warm(self) -> int:
        """Nothing to load: the indexes live in PostgreSQL (kept for the app's lifespan, which calls it)."""
        return self.loaded()


def _base_params(bundle: PgKb) -> dict[str, Any]:
    return {"kb": bundle.kb.id, "gen": bundle.kb.generation, "tenant": bundle.kb.tenant}


class PgBM25Channel:
    """Okapi BM25 in one SQL query over the postings, with the local index's k1, b and idf floor."""

    name = "bm25"

    def __init__(self, cache: PgSearchCache) -> None:
        self.cache = cache

    def search(self, query: str, filters: Filters, k: int, bundle: PgKb | None = None) -> list[Hit]:
        """Top ``k`` chunks by BM25 score; score desc, then chunk id asc."""
        bundle = self.cache.resolve(filters, bundle)
        terms = tokenize(query)
        if k <= 0 or not terms or not bundle.n_docs:
            return []
        sql, params = bm25_sql(filters, _HIT_COLS)
        params.update(_base_params(bundle), terms=terms, k=k, k1=K1, b=B, avgdl=bundle.avgdl,
                      n=float(bundle.n_docs), floor=bundle.idf_floor)
        with bundle.engine.connect() as conn:
            rows = conn.execute(text(sql), params).all()
        return bundle.hits(rows, self.name)


class PgVectorChannel:
    """Nearest chunks by inner product in pgvector: HNSW when the generation has it, else an exact scan."""

    name = "vector"

    def __init__(self, cache: PgSearchCache, embedder: Embedder, index_type: str = "all",
                 exact: bool | None = None) -> None:
        if index_type not in INDEX_KINDS:
            raise InvalidQuery(f"index_type must be one of {', '.join(INDEX_KINDS)}, got {index_type!r}",
                               field="index_type")
        self.cache = cache
        self.embedder = embedder
        self.index_type = index_type
        self.exact = exact  # None: as the generation was built (flat → exact, hnsw → approximate)

    def search(self, query: str, filters: Filters, k: int, query_vec: np.ndarray | None = None,
               bundle: PgKb | None = None) -> list[Hit]:
        """Top ``k`` chunks by cosine similarity (inner product of normalised vectors); ties by chunk id."""
        bundle = self.cache.resolve(filters, bundle)
        if k <= 0 or not bundle.n_docs:
            return []
        vec = self.embedder.embed_query(query) if query_vec is None else query_vec
        if len(vec) != bundle.dim:
            raise IndexNotReady(f"knowledge base {bundle.kb.name!r} was embedded with {bundle.model_id} "
                                f"({bundle.dim} dimensions); the query model gives {len(vec)}")
        where, params = filter_sql(filters, "v.chunk_id")
        params.update(_base_params(bundle), q=vector_literal(vec), model=bundle.model_id,
                      kinds=list(INDEX_KINDS[self.index_type]), k=k)
        exact = self.exact if self.exact is not None else bundle.vector_kind != "hnsw"
        if not exact:
            ef = min(MAX_EF_SEARCH, max(EF_SEARCH, 2 * k))
            rows = self._run(bundle, _hnsw_sql(bundle, where), {**params, "ef": ef}, ef)
            if len(rows) >= k:
                return bundle.hits(rows, self.name)
            # Filters removed too many of the graph's candidates: rank the allowed chunks exactly instead.
        rows = self._run(bundle, _exact_sql(where), params, None)
        return bundle.hits(rows, self.name)

    @staticmethod
    def _run(bundle: PgKb, sql: str, params: dict[str, Any], ef: int | None) -> Sequence[Any]:
        with bundle.engine.begin() as conn:
            if ef is not None:
                conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef)}"))
            return conn.execute(text(sql), params).all()


_VEC_WHERE = f"v.kb_id = :kb AND v.model_id = :model AND {VISIBLE} AND v.kind = ANY(CAST(:kinds AS text[]))"


def _exact_sql(filters: str) -> str:
    """Every allowed vector and window scored, a chunk by its best (ordering by the uncast column never uses an
    HNSW index)."""
    scored = " UNION ALL ".join(
        f"SELECT v.chunk_id, v.embedding <#> CAST(:q AS vector) AS dist FROM {table} v"
        f" JOIN files f ON f.id = v.file_id WHERE {_VEC_WHERE} {filters}" for table in VECTOR_TABLES)
    return (
        f"SELECT s.chunk_id, -s.dist AS score, {_HIT_COLS} FROM ("
        f"  SELECT u.chunk_id, min(u.dist) AS dist FROM ({scored}) u"
        "  GROUP BY u.chunk_id ORDER BY dist, u.chunk_id LIMIT :k"
        ") s JOIN chunks c ON c.id = s.chunk_id ORDER BY s.dist, s.chunk_id"
    )


def _hnsw_sql(bundle: PgKb, filters: str) -> str:
    """The graphs' ``ef`` nearest vectors and windows of the kb (partial indexes: kb id and width as literals),
    then the filters; a chunk by its best."""
    kb, dim = int(bundle.kb.id), int(bundle.dim)
    nearest = " UNION ALL ".join(
        f"(SELECT v.chunk_id, v.file_id, v.kind, v.model_id, v.kb_id, v.embedding::vector({dim}) <#> "
        f"CAST(:q AS vector({dim})) AS dist FROM {table} v WHERE v.kb_id = {kb} AND v.dim = {dim} "
        "ORDER BY dist LIMIT :ef)" for table in VECTOR_TABLES)
    return (
        f"SELECT s.chunk_id, -s.dist AS score, {_HIT_COLS} FROM ("
        f"  SELECT v.chunk_id, min(v.dist) AS dist FROM ({nearest}) v JOIN files f ON f.id = v.file_id"
        f"  WHERE {_VEC_WHERE} {filters} GROUP BY v.chunk_id ORDER BY dist, v.chunk_id LIMIT :k"
        ") s JOIN chunks c ON c.id = s.chunk_id ORDER BY s.dist, s.chunk_id"
    )


class PgSmartChannel:
    """The smart keyword channel (``retrievers.smart``) with its matches counted in SQL."""

    name = "smart"

    def __init__(self, cache: PgSearchCache) -> None:
        self.cache = cache

    def search(self, query: str, filters: Filters, k: int, bundle: PgKb | None = None) -> list[Hit]:
        """Top ``k`` chunks by expanded keyword matches."""
        return self.search_detailed(query, filters, k, bundle)[0]

    def search_detailed(self, query: str, filters: Filters, k: int,
                        bundle: PgKb | None = None) -> tuple[list[Hit], SmartResult]:
        """Hits plus the level and term requirement the search stopped at (``SmartMatcher.search``'s rules)."""
        bundle = self.cache.resolve(filters, bundle)
        terms = query_terms(query)
        n_terms = len(terms)
        if not terms or not bundle.n_docs:
            return [], SmartResult([], [], 0, 0, n_terms)
        ti, forms, levels, cw, nw = [], [], [], [], []
        for i, term in enumerate(terms):
            for lv in (1, 2, 3):
                for form in sorted(term.forms[lv] - (term.forms[lv - 1] if lv > 1 else frozenset())):
                    ti.append(i)
                    forms.append(form)
                    levels.append(lv)
                    cw.append(CONTENT_WEIGHT * LEVEL_WEIGHT[lv])  # the products SmartMatcher uses, to the bit
                    nw.append(NAME_WEIGHT * LEVEL_WEIGHT[lv])
        sql, params = smart_sql(filters, _HIT_COLS)
        plans = smart_plans(n_terms)
        params.update(_base_params(bundle), ti=ti, forms=forms, levels=levels, cw=cw, nw=nw, k=k, n_terms=n_terms,
                      too_many=TOO_MANY, plan_levels=[lv for lv, _ in plans], plan_required=[r for _, r in plans])
        with bundle.engine.connect() as conn:
            rows = conn.execute(text(sql), params).all()
        level, required = int(rows[0].level), int(rows[0].required)
        hits = bundle.hits([r for r in rows if r.chunk_id is not None], self.name)
        return hits, SmartResult([], [h.score for h in hits], level, required, n_terms)


def smart_plans(n_terms: int) -> list[tuple[int, int]]:
    """The (level, required terms) plans ``SmartMatcher.search`` tries, in order: all terms at levels 1–3, then
    fewer terms at level 3 down to a third of them."""
    plans = [(lv, n_terms) for lv in (1, 2, 3)]
    return plans + [(3, r) for r in range(n_terms - 1, max(1, math.ceil(n_terms / 3)) - 1, -1)]


def _smart_plan(histogram: Sequence[Any], n_terms: int, k: int, too_many: int = TOO_MANY) -> tuple[int, int]:
    """(level, required terms) that ``SmartMatcher.search`` would stop at, from counts of (m1, m2, m3) triples.

    The statement of the rule ``pg_sql.SMART_PLAN`` computes inside the query, which tests hold it to.
    """
    def count(level: int, required: int) -> int:
        return sum(int(r.n) for r in histogram if (r.m1, r.m2, r.m3)[level - 1] >= required)

    plans = smart_plans(n_terms)
    level, required = plans[-1]
    for level, required in plans:
        if count(level, required) >= k:
            break
    if count(level, required) > too_many * k and required < n_terms and count(level, required + 1) >= k:
        required += 1
    return level, required
