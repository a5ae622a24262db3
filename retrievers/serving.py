"""What both search backends' caches share: a knowledge base's serving generation, resolved, loaded once and leased.

``IndexCache`` (``retrievers.base``) loads a generation's files into a ``KbIndex``; ``PgSearchCache``
(``retrievers.pg_search``) reads its statistics into a ``PgKb``. Either way the bundle is keyed by (tenant, kb)
and matched on (kb id, generation), so a knowledge base deleted and made again under the same name is never
served its predecessor's bundle, and a newly published generation replaces the old one on the next request.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from typing import Generic, Protocol, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from sift.catalog import KbRef, get_serving_kb, touch_lease
from sift.models import Filters

log = logging.getLogger(__name__)


class Bundle(Protocol):
    """What a cache hands out: something loaded for one generation of one knowledge base."""

    @property
    def kb(self) -> KbRef:
        """The knowledge base and the generation the bundle was loaded for."""
        ...


B = TypeVar("B", bound=Bundle)


class ServingCache(Generic[B]):
    """Hands out the bundle of a knowledge base's serving generation, loading it only when the generation changes.

    The (tenant, kb) → serving generation lookup is remembered for ``ref_ttl_s`` (0: every call), so the asks of one
    search cost no database round trip; a newly published generation is picked up within that delay. Each cache is
    one replica: it leases the generations it serves (``generation_leases``), and garbage collection keeps a
    generation while a lease on it is fresh. Subclasses say how a generation is loaded (``_load``).
    """

    def __init__(self, engine: Engine, ref_ttl_s: float = 0.0, lease_refresh_s: float = 30.0) -> None:
        self.engine = engine
        self.ref_ttl_s = ref_ttl_s
        self.lease_refresh_s = lease_refresh_s
        self.replica = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._refs: dict[tuple[str, str], tuple[float, KbRef]] = {}
        self._loaded: dict[tuple[str, str], B] = {}
        self._leased: dict[tuple[int, int], float] = {}

    def _load(self, ref: KbRef) -> B:
        """Load the bundle of ``ref``'s generation (IndexNotReady when it has none)."""
        raise NotImplementedError

    def _outdated(self, bundle: B) -> bool:
        """Whether ``bundle``'s generation has since been given more to serve (a keyword-only generation its
        vectors); loaded again when so."""
        return False

    def _ref(self, kb: str, tenant: str) -> KbRef:
        """The knowledge base and its serving generation, remembered for ``ref_ttl_s``."""
        key, now = (tenant, kb), time.monotonic()
        hit = self._refs.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        ref = get_serving_kb(self.engine, kb, tenant)
        if self.ref_ttl_s > 0:
            self._refs[key] = (now + self.ref_ttl_s, ref)
        return ref

    def get(self, kb: str, tenant: str = "default") -> B:
        """The bundle of ``kb``'s serving generation (IndexNotReady while it has none)."""
        ref = self._ref(kb, tenant)
        key = (tenant, kb)
        bundle = self._loaded.get(key)
        if bundle is None or (bundle.kb.id, bundle.kb.generation) != (ref.id, ref.generation) or self._outdated(bundle):
            with self._lock:
                bundle = self._loaded.get(key)
                if (bundle is None or (bundle.kb.id, bundle.kb.generation) != (ref.id, ref.generation)
                        or self._outdated(bundle)):
                    bundle = self._load(ref)
                    self._loaded[key] = bundle
        self._lease(bundle.kb)
        return bundle

    def resolve(self, filters: Filters, bundle: B | None = None) -> B:
        """The bundle a search under ``filters`` reads: ``bundle`` when the caller resolved it already."""
        return bundle if bundle is not None else self.get(filters.kb, filters.tenant or "default")

    def _lease(self, kb: KbRef) -> None:
        """Tell garbage collection this replica serves ``kb``'s generation (at most every ``lease_refresh_s``)."""
        key, now = (kb.id, kb.generation), time.monotonic()
        if now - self._leased.get(key, -1e9) < self.lease_refresh_s:
            return
        self._leased[key] = now
        try:
            with self.engine.begin() as conn:
                touch_lease(conn, kb.id, kb.generation, self.replica)
        except SQLAlchemyError as exc:  # a missed lease only shortens the grace period; never fail a query
            log.warning("could not record the lease on kb %d generation %d: %s", kb.id, kb.generation, exc)

    def forget(self, kb: str, tenant: str = "default") -> None:
        """Drop what is remembered about ``kb`` (after it was deleted)."""
        with self._lock:
            self._loaded.pop((tenant, kb), None)
            self._refs.pop((tenant, kb), None)

    def loaded(self) -> int:
        """How many knowledge bases have a bundle in memory."""
        return len(self._loaded)
