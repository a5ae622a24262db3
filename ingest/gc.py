"""`sift kb gc`: garbage collection of one knowledge base, under its ingest lock.

Ingest collects after every publish (``store.collect_garbage``). Run by hand, collection also clears what killed
runs left: generations stuck in ``building`` and the ``.gN.building-PID`` folders of their index builders. Holding
the kb's lock proves those builders are dead (an ingest that is alive holds it), so nothing a live run needs goes.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, select

from sift.config import Settings
from sift.db.tables import Generation
from sift.ingest import store
from sift.ingest.liveness import reap_dead_jobs
from sift.ingest.locks import ingest_lock


def collect_kb(settings: Settings, engine: Engine, name: str, tenant: str) -> dict[str, Any]:
    """Collect garbage of kb ``name`` now; Conflict while an ingest of it runs. Returns what was removed."""
    index_root = settings.resolved_index_dir()
    with ingest_lock(engine, settings.data_dir, tenant, name):
        kb = store.get_kb(engine, name, tenant)
        reap_dead_jobs(engine, kb_id=kb.id)
        builders = list(store.generation_dir(index_root, kb.id, 0).parent.glob(".g*.building-*"))
        with engine.begin() as conn:
            stuck = conn.execute(select(func.count()).where(
                Generation.kb_id == kb.id, Generation.number > kb.generation, Generation.status == "building")
            ).scalar_one()
            discarded = store.discard_unpublished(conn, kb, index_root)
            dropped = store.collect_garbage(conn, kb.id, kb.generation, index_root, settings.generation_grace_s)
            kept = conn.execute(select(Generation.number).where(Generation.kb_id == kb.id, Generation.status.in_(
                ("published", "retired"))).order_by(Generation.number)).scalars().all()
    return {"kb": kb.name, "serving": kb.generation, "kept": list(kept), "dropped_file_versions": dropped,
            "discarded_file_versions": discarded, "abandoned_building": stuck, "removed_builder_dirs": len(builders)}
