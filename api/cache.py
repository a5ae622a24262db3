"""The app's index cache: ``retrievers.base.IndexCache`` plus eviction and warm-up."""

from __future__ import annotations

import logging

from sqlalchemy import Engine, select

from retrievers.base import IndexCache, KbIndex
from sift.db.tables import KnowledgeBase
from sift.errors import SiftError

log = logging.getLogger(__name__)


class ApiIndexCache(IndexCache):
    """An IndexCache that also checks the knowledge base id, so a deleted and re-created name never reuses
    the old bundle, and that can be warmed at startup."""

    def get(self, kb: str, tenant: str = "default") -> KbIndex:
        """The serving bundle of ``kb`` (reloaded when the name now points at a different knowledge base)."""
        bundle = super().get(kb, tenant)
        live = bundle.kb
        current = self._current_id(kb, tenant)
        if current is not None and current != live.id:
            self.forget(kb, tenant)
            bundle = super().get(kb, tenant)
        return bundle

    def _current_id(self, kb: str, tenant: str) -> int | None:
        with self.engine.connect() as conn:
            return conn.execute(select(KnowledgeBase.id).where(
                KnowledgeBase.name == kb, KnowledgeBase.tenant == tenant)).scalar()

    def forget(self, kb: str, tenant: str = "default") -> None:
        """Drop the loaded bundle of ``kb`` (after it was deleted)."""
        with self._lock:
            self._loaded.pop((tenant, kb), None)

    def loaded(self) -> int:
        """How many knowledge bases have a bundle in memory."""
        return len(self._loaded)

    def warm(self, engine: Engine) -> int:
        """Load every published knowledge base's serving generation; returns how many loaded."""
        with engine.connect() as conn:
            rows = conn.execute(select(KnowledgeBase.name, KnowledgeBase.tenant)
                                .where(KnowledgeBase.current_generation > 0)).all()
        for name, tenant in rows:
            try:
                self.get(name, tenant)
            except SiftError as exc:
                log.warning("index of kb %s (tenant %s) not loaded: %s", name, tenant, exc.message)
        return self.loaded()
