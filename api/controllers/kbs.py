"""Knowledge bases and their ingest jobs: ``/v1/kbs``, ``/v1/kbs/{kb}/ingest``, ``/v1/jobs/{id}``."""

from __future__ import annotations

from litestar import Controller, delete, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from sift.api.controllers.common import errors
from sift.api.schemas import KB_NAME, IngestRequest, Job, KbCreate, KbCreated, KbDetail, KbList
from sift.api.services import KbService

KbParam = Parameter(pattern=KB_NAME, description="knowledge base name")


class KbController(Controller):
    """Create, list, show and delete knowledge bases; start ingests."""

    path = "/v1/kbs"
    tags = ["knowledge bases"]

    @get("/", sync_to_thread=True, responses=errors())
    def list(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str]) -> KbList:
        """The caller's knowledge bases with their serving generation's counts."""
        return kb_service.list_kbs(tenant)

    @post("/", status_code=202, sync_to_thread=True, responses=errors(409))
    def create(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str],
               data: JSONBody[KbCreate]) -> KbCreated:
        """Create a knowledge base from a directory under an allowed root and start its first ingest."""
        return kb_service.create(tenant, data)

    @get("/{kb:str}", sync_to_thread=True, responses=errors(404))
    def show(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str],
             kb: str = KbParam) -> KbDetail:
        """One knowledge base: counts, generations and its last ingest job."""
        return kb_service.show(tenant, kb)

    @delete("/{kb:str}", status_code=204, responses=errors(404, 409))
    async def remove(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str],
                     kb: str = KbParam) -> None:
        """Delete a knowledge base with its files, indexes, jobs and threads (409 while an ingest runs)."""
        await kb_service.delete(tenant, kb)

    @post("/{kb:str}/ingest", status_code=202, sync_to_thread=True, responses=errors(404, 409))
    def ingest(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str],
               data: JSONBody[IngestRequest], kb: str = KbParam) -> Job:
        """Queue an ingest job (a worker or the server's runner takes it); the previous generation keeps serving
        until it publishes."""
        return kb_service.ingest(tenant, kb, data)


class JobController(Controller):
    """Ingest job state, progress and result."""

    path = "/v1/jobs"
    tags = ["knowledge bases"]

    @get("/{job_id:int}", sync_to_thread=True, responses=errors(404))
    def show(self, kb_service: NamedDependency[KbService], tenant: NamedDependency[str],
             job_id: int = Parameter(ge=1, le=2**31 - 1)) -> Job:
        """A job of the caller's: queued, running (with progress), succeeded (with its result) or failed."""
        return kb_service.job(tenant, job_id)
