"""Read-only views of knowledge bases for `sift kb` and the API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from sift.catalog import get_kb, index_dir_of
from sift.config import Settings
from sift.db import visible_in
from sift.db.tables import Chunk, File, Generation, IngestJob, KnowledgeBase, Node


def _counts(conn: Connection, kb_id: int, generation: int) -> dict[str, Any]:
    files = conn.execute(
        select(func.count()).select_from(File).where(File.kb_id == kb_id, visible_in(File, generation))
    ).scalar()
    nodes = conn.execute(
        select(func.count()).select_from(Node).join(File, Node.file_id == File.id)
        .where(File.kb_id == kb_id, visible_in(File, generation))
    ).scalar()
    by_kind = dict(conn.execute(
        select(Chunk.kind, func.count()).join(File, Chunk.file_id == File.id)
        .where(File.kb_id == kb_id, visible_in(File, generation)).group_by(Chunk.kind)
    ).all())
    return {"files": files, "nodes": nodes, "chunks": sum(by_kind.values()), "chunks_by_kind": by_kind}


def list_kbs(engine: Engine, tenant: str | None = None) -> list[dict[str, Any]]:
    """Every knowledge base (of ``tenant`` when given) with its serving generation's counts."""
    with engine.connect() as conn:
        stmt = select(KnowledgeBase).order_by(KnowledgeBase.tenant, KnowledgeBase.name)
        if tenant is not None:
            stmt = stmt.where(KnowledgeBase.tenant == tenant)
        out = []
        for kb in conn.execute(stmt):
            row = {"name": kb.name, "tenant": kb.tenant, "root_path": kb.root_path, "public": kb.public,
                   "generation": kb.current_generation, "updated_at": kb.updated_at}
            row.update(_counts(conn, kb.id, kb.current_generation))
            out.append(row)
    return out


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def show_kb(engine: Engine, settings: Settings, name: str, tenant: str = "default") -> dict[str, Any]:
    """One knowledge base: counts, generations with index sizes, and its last ingest job."""
    kb = get_kb(engine, name, tenant)
    index_root = settings.resolved_index_dir()
    with engine.connect() as conn:
        info: dict[str, Any] = {"name": kb.name, "tenant": kb.tenant, "root_path": kb.root_path,
                                "public": kb.public, "generation": kb.generation}
        info.update(_counts(conn, kb.id, kb.generation))
        gens = conn.execute(
            select(Generation).where(Generation.kb_id == kb.id).order_by(Generation.number)
        ).all()
        info["generations"] = [
            {"number": g.number, "status": g.status, "created_at": g.created_at, "published_at": g.published_at,
             "stats": g.stats, "index_bytes": _dir_bytes(index_dir_of(index_root, kb.id, g.number, g.index_path))}
            for g in gens
        ]
        job = conn.execute(
            select(IngestJob).where(IngestJob.kb_id == kb.id).order_by(IngestJob.id.desc()).limit(1)
        ).first()
        info["last_job"] = None if job is None else {
            "id": job.id, "status": job.status, "ready": job.ready, "generation": job.generation,
            "created_at": job.created_at,
            "finished_at": job.finished_at, "elapsed_s": job.elapsed_s, "error": job.error,
            "failures": len(job.failures or []),
        }
    return info


def check_kb(engine: Engine, settings: Settings, name: str, tenant: str) -> dict[str, Any]:
    """Every index file of a kb's serving generation hashed against its manifest, then loaded: ``{"kb", "tenant",
    "generation", "directory", "ok", "files": [{"name", "ok", "problem"}], "problem"}``."""
    from sift.errors import IndexNotReady
    from sift.index.generation import has_vectors, load_indexes, read_manifest, verify_files

    kb = get_kb(engine, name, tenant)
    with engine.connect() as conn:
        stored = conn.execute(select(Generation.index_path).where(
            Generation.kb_id == kb.id, Generation.number == kb.generation)).scalar()
    directory = index_dir_of(settings.resolved_index_dir(), kb.id, kb.generation, stored)
    report: dict[str, Any] = {"kb": kb.name, "tenant": kb.tenant, "generation": kb.generation,
                              "directory": str(directory), "ok": False, "files": [], "problem": None}
    if kb.generation < 1:
        report["problem"] = "no generation is published yet"
        return report
    if settings.search_backend == "postgres":
        report.update(ok=True, directory=None, note="the index lives in PostgreSQL (SIFT_SEARCH_BACKEND=postgres): "
                                                    "there are no index files to check")
        return report
    try:
        manifest = read_manifest(directory)
        checked = verify_files(directory, manifest, full=True)
        report["files"] = [{"name": f, "ok": p is None, "problem": p} for f, p in sorted(checked.items())]
        bad = [p for p in checked.values() if p]
        if not checked:
            report["note"] = "this generation was built before index files had checksums; only loading is checked"
        if bad:
            report["problem"] = "; ".join(bad)
        else:
            load_indexes(directory)
            report["ok"] = True
            if not has_vectors(manifest):
                report["note"] = ("keyword-only: its vectors are still being computed (or the ingest that computed "
                                  "them stopped; `sift ingest` finishes them)")
    except IndexNotReady as exc:
        report["problem"] = exc.message
    return report
