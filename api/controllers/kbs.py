"""Knowledge bases and their ingest jobs: ``/v1/kbs``, ``/v1/kbs/{kb}/ingest``, ``/v1/jobs/{id}``."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter
from sqlalchemy import delete as sql_delete
from sqlalchemy import select

from sift.api.auth import ingest_roots
from sift.api.controllers.common import errors
from sift.api.jobs import confine_path, job_view
from sift.api.schemas import KB_NAME, IngestRequest, Job, KbCreate, KbCreated, KbDetail, KbList, KbSummary
from sift.catalog import get_kb, kb_index_dir
from sift.db.api_tables import Thread
from sift.db.tables import IngestJob, KnowledgeBase
from sift.errors import Conflict
from sift.ingest.inspect import list_kbs, show_kb
from sift.ingest.pipeline import kb_lock

KbParam = Parameter(pattern=KB_NAME, description="knowledge base name")


class KbController(Controller):
    """Create, list, show and delete knowledge bases; start ingests."""

    path = "/v1/kbs"
    tags = ["knowledge bases"]

    @get("/", sync_to_thread=True, responses=errors())
    def list(self, state: State, tenant: NamedDependency[str]) -> KbList:
        """The caller's knowledge bases with their serving generation's counts."""
        return KbList(kbs=[KbSummary.model_validate(k) for k in list_kbs(state.engine, tenant)])

    @post("/", status_code=202, sync_to_thread=True, responses=errors(409))
    def create(self, state: State, tenant: NamedDependency[str], data: JSONBody[KbCreate]) -> KbCreated:
        """Create a knowledge base from a directory under an allowed root and start its first ingest."""
        roots = ingest_roots(state.engine, tenant, state.settings.allowed_roots)
        root = confine_path(data.path, roots)
        with state.engine.connect() as conn:
            exists = conn.execute(select(KnowledgeBase.id).where(
                KnowledgeBase.name == data.name, KnowledgeBase.tenant == tenant)).first()
        if exists is not None:
            raise Conflict(f"knowledge base {data.name!r} already exists; POST /v1/kbs/{data.name}/ingest "
                           "to update it", field="name")
        job_id = state.jobs.start(tenant, data.name, root, data.public, roots)
        return KbCreated(kb=data.name, job=Job.model_validate(job_view(state.engine, job_id, tenant, state.jobs.owned())))

    @get("/{kb:str}", sync_to_thread=True, responses=errors(404))
    def show(self, state: State, tenant: NamedDependency[str], kb: str = KbParam) -> KbDetail:
        """One knowledge base: counts, generations and its last ingest job."""
        return KbDetail.model_validate(show_kb(state.engine, state.settings, kb, tenant))

    @delete("/{kb:str}", status_code=204, responses=errors(404, 409))
    async def remove(self, state: State, tenant: NamedDependency[str], kb: str = KbParam) -> None:
        """Delete a knowledge base with its files, indexes, jobs and threads (409 while an ingest runs)."""
        threads = await anyio.to_thread.run_sync(_delete_kb, state, tenant, kb)
        if state.ask is not None:
            for thread_id in threads:
                await state.ask.delete_thread(thread_id)

    @post("/{kb:str}/ingest", status_code=202, sync_to_thread=True, responses=errors(404, 409))
    def ingest(self, state: State, tenant: NamedDependency[str], data: JSONBody[IngestRequest], kb: str = KbParam) -> Job:
        """Queue an ingest job (a worker or the server's runner takes it); the previous generation keeps serving
        until it publishes."""
        roots = ingest_roots(state.engine, tenant, state.settings.allowed_roots)
        root = confine_path(get_kb(state.engine, kb, tenant).root_path if data.path is None else data.path, roots)
        job_id = state.jobs.start(tenant, kb, Path(root), data.public, roots)
        return Job.model_validate(job_view(state.engine, job_id, tenant, state.jobs.owned()))


class JobController(Controller):
    """Ingest job state, progress and result."""

    path = "/v1/jobs"
    tags = ["knowledge bases"]

    @get("/{job_id:int}", sync_to_thread=True, responses=errors(404))
    def show(self, state: State, tenant: NamedDependency[str], job_id: int = Parameter(ge=1, le=2**31 - 1)) -> Job:
        """A job of the caller's: queued, running (with progress), succeeded (with its result) or failed."""
        return Job.model_validate(job_view(state.engine, job_id, tenant, state.jobs.owned()))


def _delete_kb(state: State, tenant: NamedDependency[str], kb: str) -> list[str]:
    """Delete the rows and index files of a knowledge base; returns the ids of the threads that were on it."""
    ref = get_kb(state.engine, kb, tenant)
    with kb_lock(state.settings.data_dir, tenant, kb), state.engine.begin() as conn:
        threads = conn.execute(
            select(Thread.thread_id).where(Thread.tenant == tenant, Thread.kb == kb)
        ).scalars().all()
        # Queued jobs are cancelled: with their rows gone, a subprocess still starting stops before the kb.
        pending = conn.execute(select(IngestJob.id).where(
            IngestJob.kb_id == ref.id, IngestJob.status.in_(("queued", "running")))).scalars().all()
        conn.execute(sql_delete(IngestJob).where(IngestJob.kb_id == ref.id))
        conn.execute(sql_delete(Thread).where(Thread.tenant == tenant, Thread.kb == kb))
        conn.execute(sql_delete(KnowledgeBase).where(KnowledgeBase.id == ref.id))
    state.jobs.cancel(list(pending))
    state.cache.forget(kb, tenant)
    shutil.rmtree(kb_index_dir(state.settings.resolved_index_dir(), ref.id), ignore_errors=True)
    return list(threads)
