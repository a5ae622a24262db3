"""The search backend in effect (``Settings.search_backend``): which cache the searcher's channels read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine

from sift.config import Settings

if TYPE_CHECKING:  # each backend's module loads only when it is the one in effect
    from sift.retrievers.base import IndexCache
    from sift.retrievers.pg_search import PgSearchCache


def make_index_cache(settings: Settings, engine: Engine) -> IndexCache | PgSearchCache:
    """``IndexCache`` over the generation files (``local``) or ``PgSearchCache`` over PostgreSQL (``postgres``)."""
    if settings.search_backend == "postgres":
        from sift.retrievers.pg_search import PgSearchCache

        return PgSearchCache(engine)
    from sift.retrievers.base import IndexCache

    return IndexCache(engine, settings.resolved_index_dir())
