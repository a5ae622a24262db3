"""The app's index cache: ``retrievers.base.IndexCache`` with a short-lived kb lookup, eviction and warm-up."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

from sqlalchemy import Engine, select

from sift.catalog import KbRef
from sift.db.tables import KnowledgeBase
from sift.errors import SiftError
from sift.retrievers.base import IndexCache, KbIndex

log = logging.getLogger(__name__)


def settle_heap() -> None:
    """Collect once, then freeze what is alive (models, indexes) out of the garbage collector's sight.

    A server holds ~600k long-lived objects (the model, vocabularies, chunk tables); a full collection walks
    all of them and stops every thread for ~250 ms, which shows as periodic stalls in request latency.
    Frozen objects are still freed by reference counting; each swap to a new generation unfreezes, collects
    the previous one's cycles and freezes again (one pause per published generation, not one every few seconds).
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class ApiIndexCache(IndexCache):
    """An IndexCache for a busy server.

    A search asks for the bundle once per channel; the (tenant, kb) → serving generation lookup is remembered
    for ``ref_ttl_s`` so those asks cost no database round trip (``ServingCache``). Each newly loaded
    generation settles the heap, and ``warm`` loads every published knowledge base at start-up.
    """

    def __init__(self, engine: Engine, index_root: Path, ref_ttl_s: float = 0.5) -> None:
        super().__init__(engine, index_root, ref_ttl_s=ref_ttl_s)
        self._warming = False  # during warm() the caller settles the heap once, after every kb is loaded

    def _load(self, ref: KbRef) -> KbIndex:
        bundle = super()._load(ref)
        if not self._warming:
            settle_heap()
        return bundle

    def warm(self) -> int:
        """Load every published knowledge base's serving generation; returns how many loaded (the caller settles
        the heap afterwards: one collection for all of them, not one per kb)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(KnowledgeBase.name, KnowledgeBase.tenant)
                                .where(KnowledgeBase.current_generation > 0)).all()
        self._warming = True
        try:
            for name, tenant in rows:
                # One kb's damaged files never keep the others from serving: it answers 503 with the reason.
                try:
                    self.get(name, tenant)
                except SiftError as exc:
                    log.warning("index of kb %s (tenant %s) not loaded: %s", name, tenant, exc.message)
                except Exception:
                    log.exception("index of kb %s (tenant %s) not loaded", name, tenant)
        finally:
            self._warming = False
        return self.loaded()
