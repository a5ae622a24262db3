"""The search backend in effect (``Settings.search_backend``): which cache the searcher's channels read."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from sift.config import Settings


def make_index_cache(settings: Settings, engine: Engine) -> Any:
    """``IndexCache`` over the generation files (``local``) or ``PgSearchCache`` over PostgreSQL (``postgres``)."""
    if settings.search_backend == "postgres":
        from sift.retrievers.pg_search import PgSearchCache

        return PgSearchCache(engine)
    from sift.retrievers.base import IndexCache

    return IndexCache(engine, settings.resolved_index_dir())
