"""Knowledge bases and their ingest jobs, as the API serves them: list, create, show, delete, re-ingest, a job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from sqlalchemy import Engine, select

from sift.api.auth import ingest_roots
from sift.api.jobs import JobRunner, confine_path
from sift.api.schemas import IngestRequest, Job, KbCreate, KbCreated, KbDetail, KbList, KbSummary
from sift.api.services.threads import ThreadService
from sift.api.settings import ApiSettings
from sift.catalog import get_kb
from sift.db.tables import KnowledgeBase
from sift.errors import Conflict
from sift.ingest.inspect import list_kbs, show_kb
from sift.ingest.jobs import delete_kb, job_view
from sift.retrievers.serving import ServingCache


class KbService:
    """The caller's knowledge bases over the app's database, job runner and index cache; an ingest is queued as a
    job (``api.jobs.JobRunner``), never run in the request."""

    def __init__(self, settings: ApiSettings, engine: Engine, jobs: JobRunner, cache: ServingCache[Any],
                 threads: ThreadService) -> None:
        self.settings = settings
        self.engine = engine
        self.jobs = jobs
        self.cache = cache
        self.threads = threads

    def list_kbs(self, tenant: str) -> KbList:
        """The tenant's knowledge bases with their serving generation's counts."""
        return KbList(kbs=[KbSummary.model_validate(k) for k in list_kbs(self.engine, tenant)])

    def create(self, tenant: str, data: KbCreate) -> KbCreated:
        """A new knowledge base from a directory under the tenant's allowed roots, its first ingest queued;
        Conflict when the name is taken."""
        roots = ingest_roots(self.engine, tenant, self.settings.allowed_roots)
        root = confine_path(data.path, roots)
        with self.engine.connect() as conn:
            exists = conn.execute(select(KnowledgeBase.id).where(
                KnowledgeBase.name == data.name, KnowledgeBase.tenant == tenant)).first()
        if exists is not None:
            raise Conflict(f"knowledge base {data.name!r} already exists; POST /v1/kbs/{data.name}/ingest "
                           "to update it", field="name")
        job_id = self.jobs.start(tenant, data.name, root, data.public, roots)
        return KbCreated(kb=data.name, job=self.job(tenant, job_id))

    def show(self, tenant: str, kb: str) -> KbDetail:
        """One knowledge base: counts, generations and its last ingest job."""
        return KbDetail.model_validate(show_kb(self.engine, self.settings, kb, tenant))

    async def delete(self, tenant: str, kb: str) -> None:
        """Delete a knowledge base with its files, indexes, jobs and threads (Conflict while an ingest runs)."""
        checkpoints = await anyio.to_thread.run_sync(self._delete, tenant, kb)
        await self.threads.forget_states(checkpoints)

    def _delete(self, tenant: str, kb: str) -> list[str]:
        deleted = delete_kb(self.engine, self.settings.data_dir, self.settings.resolved_index_dir(), tenant, kb)
        self.jobs.cancel(deleted.pending_jobs)
        self.cache.forget(kb, tenant)
        return deleted.checkpoints

    def ingest(self, tenant: str, kb: str, data: IngestRequest) -> Job:
        """Queue an ingest of the kb's directory (or ``data.path``), confined to the tenant's allowed roots."""
        roots = ingest_roots(self.engine, tenant, self.settings.allowed_roots)
        root = confine_path(get_kb(self.engine, kb, tenant).root_path if data.path is None else data.path, roots)
        job_id = self.jobs.start(tenant, kb, Path(root), data.public, roots)
        return self.job(tenant, job_id)

    def job(self, tenant: str, job_id: int) -> Job:
        """A job of the tenant's: queued, running (with progress), succeeded (with its result) or failed."""
        return Job.model_validate(job_view(self.engine, job_id, tenant, self.jobs.owned()))
