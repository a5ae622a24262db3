"""The Litestar app factory: ``create_app(settings)``; resources are opened once in the lifespan.

Nothing in process memory is the source of truth (threads, records, jobs and keys are in the database, chat state
in the checkpointer), so several workers can serve the same data directory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING

import anyio
from litestar import Litestar, Request
from litestar.datastructures import CacheControlHeader, State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from sift.api.auth import provide_tenant
from sift.api.batching import BatchingEmbedder
from sift.api.bodies import BoundedRequest
from sift.api.cache import ApiIndexCache, settle_heap
from sift.api.controllers.chat import ChatController
from sift.api.controllers.health import HealthController
from sift.api.controllers.kbs import JobController, KbController
from sift.api.controllers.search import SearchController
from sift.api.controllers.threads import ThreadController
from sift.api.datadir import DataDirWatch
from sift.api.errors import EXCEPTION_HANDLERS
from sift.api.jobs import JobRunner
from sift.api.limits import LimitedAskService, SearchSlots
from sift.api.mcp.mount import mcp_mount
from sift.api.openapi import SWAGGER_DIR, SWAGGER_URL, operation_id
from sift.api.services import (
    DEPENDENCIES,
    ChatService,
    HealthService,
    KbService,
    SearchService,
    Services,
    ThreadService,
)
from sift.api.settings import ApiSettings, api_settings
from sift.config import Settings
from sift.db import open_database
from sift.retrievers.pg_search import PgSearchCache
from sift.retrievers.search import Searcher

if TYPE_CHECKING:  # the embedder's and the graph's modules load in the lifespan
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from sqlalchemy import Engine

    from sift.embed import Embedder

log = logging.getLogger(__name__)


def make_service(settings: ApiSettings, engine: Engine, searcher: Searcher, checkpointer: BaseCheckpointSaver,
                 search: SearchSlots) -> LimitedAskService | None:
    """The chat service, or None when the graph package does not provide one."""
    try:
        from sift.chat import make_chat_model
        from sift.graph.service import AskService
    except ImportError as exc:
        log.warning("chat disabled: %s", exc)
        return None
    return LimitedAskService(AskService(settings, engine, searcher, checkpointer, make_chat_model(settings)),
                             settings.chat_concurrency, search)


@asynccontextmanager
async def open_state(state: State, settings: ApiSettings, embedder: Embedder | None = None, *,
                     warm: bool = True, run_jobs: bool = True) -> AsyncIterator[None]:
    """Open what requests run on into ``state`` (engine, query encoder, index cache, searcher, checkpointer, chat
    service, job runner, and the services over them) and close it on exit; ``warm`` loads every published knowledge base now (else each on
    first use); without ``run_jobs`` this process queues ingest jobs but never claims one."""
    from sift.embed import LocalEmbedder, make_embedder
    from sift.graph.checkpointer import open_checkpointer

    state.settings = settings
    state.engine = engine = await anyio.to_thread.run_sync(open_database, settings)
    loaded = embedder if embedder is not None else await anyio.to_thread.run_sync(make_embedder, settings)
    if isinstance(loaded, LocalEmbedder):
        loaded = loaded.with_query_threads(settings.embed_threads)
    state.embedder = batching = BatchingEmbedder(loaded)
    state.cache = cache = (PgSearchCache(engine, ref_ttl_s=0.5) if settings.search_backend == "postgres"
                           else ApiIndexCache(engine, settings.resolved_index_dir()))
    if warm:
        await anyio.to_thread.run_sync(cache.warm)
    # Search and chat each have their own searcher (its channel threads) over the same indexes, and searches run
    # in their own threads, so neither queues behind the other's work (api/limits.py).
    state.searcher = searcher = Searcher(engine, cache, state.embedder)
    chat_searcher = Searcher(engine, cache, state.embedder)
    state.search_pool = search_pool = ThreadPoolExecutor(settings.search_concurrency, thread_name_prefix="sift-search")
    await anyio.to_thread.run_sync(batching.embed_query, "warm up")  # builds the traced query encoder now
    settle_heap()
    state.search_slots = slots = SearchSlots(settings.search_concurrency)
    state.jobs = JobRunner(settings if run_jobs else settings.model_copy(update={"run_jobs": False}), engine)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    state.data_dir = DataDirWatch(settings)
    # SQLite in the data dir, or the PostgreSQL database every replica shares (threads move between them).
    async with open_checkpointer(settings) as saver:
        await saver.setup()
        state.checkpointer = saver
        state.ask = make_service(settings, engine, chat_searcher, saver, slots)
        state.services = make_services(state)
        log.info("ready: %d knowledge bases loaded, chat %s", cache.loaded(),
                 "on" if state.ask is not None else "off")
        try:
            yield
        finally:
            state.checkpointer = None
            await anyio.to_thread.run_sync(state.jobs.close)
            searcher.close()
            chat_searcher.close()
            search_pool.shutdown(wait=False, cancel_futures=True)
            batching.close()
            engine.dispose()


def make_services(state: State) -> Services:
    """The services the controllers and MCP tools call, over the resources ``open_state`` put in ``state``."""
    threads = ThreadService(state.engine, state.ask)
    return Services(
        kbs=KbService(state.settings, state.engine, state.jobs, state.cache, threads),
        threads=threads,
        chat=ChatService(state.settings, state.engine, state.ask),
        search=SearchService(state.engine, state.searcher, state.search_slots, state.search_pool),
        health=HealthService(state),
    )


def _lifespan(settings: ApiSettings,
              embedder: Embedder | None) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with open_state(app.state, settings, embedder):
            yield

    return lifespan


_READS = frozenset({"GET", "HEAD", "OPTIONS"})


async def _refuse_writes_without_data_dir(request: Request) -> None:
    """503 for every request that could change something once the data directory is gone (``api.datadir``)."""
    watch = request.app.state.data_dir
    if watch is not None and request.method not in _READS:
        watch.check()


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None,
               debug: bool = False) -> Litestar:
    """The REST app for ``settings`` (an already loaded ``embedder`` may be passed to skip loading one)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    settings = api_settings(settings or ApiSettings())
    state = State({"settings": settings, "engine": None, "embedder": None, "checkpointer": None, "ask": None,
                   "cache": None, "searcher": None, "search_slots": None, "search_pool": None, "jobs": None,
                   "data_dir": None, "services": None})
    # Swagger UI from files the package ships (api/static/swagger-ui), not a CDN: the docs render offline.
    swagger = SwaggerRenderPlugin(
        path=["/", "/swagger"], js_url=f"{SWAGGER_URL}/swagger-ui-bundle.js", css_url=f"{SWAGGER_URL}/swagger-ui.css",
        standalone_preset_js_url=f"{SWAGGER_URL}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{SWAGGER_URL}/favicon-32x32.png'>")
    openapi = OpenAPIConfig(
        title="sift", version="0.1.0", path="/schema",
        description="Answers about a code base with citations to exact files and lines.",
        render_plugins=[swagger], operation_id_creator=operation_id,
        components=Components(security_schemes={
            "BearerToken": SecurityScheme(type="http", scheme="bearer", description="`sift keys create`")}),
        security=[{"BearerToken": []}] if settings.auth else None,
    )
    static = create_static_files_router(path=SWAGGER_URL, directories=[SWAGGER_DIR], include_in_schema=False,
                                        cache_control=CacheControlHeader(max_age=86400), name="swagger-ui")
    # MCP (streamable HTTP) at /mcp on the same state and keys; its sessions run once the state is open.
    mcp, mcp_lifespan = mcp_mount(settings)
    return Litestar(
        route_handlers=[HealthController, KbController, JobController, SearchController, ChatController,
                        ThreadController, static, mcp],
        dependencies={"tenant": Provide(provide_tenant), **DEPENDENCIES},
        before_request=_refuse_writes_without_data_dir,
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[_lifespan(settings, embedder), mcp_lifespan],
        state=state,
        openapi_config=openapi,
        request_max_body_size=settings.max_body_bytes,
        request_class=BoundedRequest,
        debug=debug,
    )


def create_app_from_env() -> Litestar:
    """Factory for ``uvicorn --factory`` workers: settings from ``SIFT_*`` variables."""
    return create_app(ApiSettings())
