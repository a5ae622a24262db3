"""The ingestion job: walk → parse → chunk → write rows → publish the keyword index → embed → publish the vectors.

Streaming and batched: files are parsed one at a time and written ``ingest_batch_size`` at a time. Everything
is written as generation G+1 beside the serving generation G; only the final ``publish`` transaction switches
readers over, so a crash at any point leaves G serving (the next run discards the leftovers). With the local
search backend a run with new content publishes G+1 twice (``ingest.searchable``): with its BM25 index alone as
soon as the rows are written, then with its vectors; a crash while embedding leaves G+1 serving keyword search.

A run records its end on its job row whatever happens: ``succeeded``, or ``failed`` with the exception, or — for
SIGTERM/SIGINT, turned into :class:`Interrupted` by :func:`interrupt_on_signals` — with the signal's name. Only
SIGKILL leaves a ``running`` row behind; ``liveness.reap_dead_jobs`` recognises it by its recorded process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, func, select, update

from sift.catalog import KbRef, generation_dir, get_kb, index_dir_of, keyword_dir
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import Generation, IngestJob
from sift.errors import Conflict, OutsideRoot
from sift.ingest import store
from sift.ingest.chunk import CHUNKING, ChunkLimits
from sift.ingest.confine import confining_root
from sift.ingest.file_rows import add_file
from sift.ingest.job_rows import (
    JobCancelled,
    claim_job,
    finish_job,
    generation_stats,
    mark_job_failed,
    new_summary,
    record_failure,
    start_job,
)
from sift.ingest.listing import list_files, texts
from sift.ingest.liveness import (
    HEARTBEAT_S,
    Heartbeat,
    Interrupted,
    StopRequest,
    current_process,
    reap_dead_jobs,
)
from sift.ingest.locks import ingest_lock
from sift.ingest.parse_worker import ParseBounds, ParseLimitExceeded, ParseWorker, record_skip
from sift.ingest.parsers import ParserRegistry
from sift.ingest.parsers.llm import LLMParserOptions, make_llm_parser
from sift.ingest.searchable import drop_keyword_index, publish_keywords, publish_vectors, vector_source
from sift.ingest.walk import WalkedFile, WalkStats

if TYPE_CHECKING:  # the embedding module loads only when an index is built
    from sift.embed import Embedder

log = logging.getLogger(__name__)

#: progress(phase, done, total) — phase is "walk", "parse", "searchable" (once, when the keyword index is published),
#: "model", "embed" or "index"; total is None while walking (files found so far) and while the model loads.
Progress = Callable[[str, int, int | None], None]


def ingest(
    settings: Settings,
    root: Path,
    kb: str,
    *,
    tenant: str | None = None,
    public: bool = False,
    engine: Engine | None = None,
    embedder: Embedder | None = None,
    build_index: bool = True,
    progress: Progress | None = None,
    job_id: int | None = None,
    llm_parser: LLMParserOptions | None = None,
    heartbeat_s: float = HEARTBEAT_S,
    stop: StopRequest | None = None,
    claimed_by: str | None = None,
) -> dict[str, Any]:
    """Ingest the repository at ``root`` into knowledge base ``kb``; returns the run's summary.

    ``llm_parser`` says when the LLM boundary parser is used (default: for code without a grammar, when an LLM
    is configured). ``stop`` (from ``liveness.interrupt_on_signals``) is checked between files and batches, and
    while a file is parsed (``parse_worker``); a file whose parse goes past ``settings.parse_timeout_s`` or
    ``settings.parse_max_mb`` is skipped (``skipped["parse_limit"]``, with its reason in ``skipped_files``).

    A job queued with ``roots`` (an API ingest: the tenant's allowed roots) reads only inside them: the root's
    resolved path is checked when the run starts, and the walk opens everything beneath that root without
    following symlinks (OutsideRoot, recorded on the job, when it leads out).

    Raises FileNotFoundError/NotADirectoryError for a bad root, Conflict when the kb is already being ingested and
    JobCancelled when ``job_id`` is not this process's to run (its kb was deleted, it ended, another worker has it);
    ``claimed_by`` names the runner that claimed the job for this process.
    """
    root = Path(root).resolve()
    if not root.exists():
        raise FileNotFoundError(f"path {str(root)!r} does not exist")
    if not root.is_dir():
        raise NotADirectoryError(f"path {str(root)!r} is not a directory")
    tenant = tenant or settings.tenant
    engine = engine or open_database(settings)
    try:
        with ingest_lock(engine, settings.data_dir, tenant, kb):
            return _run(settings, engine, root, kb, tenant, public, embedder, build_index, progress, job_id,
                        llm_parser, heartbeat_s, stop or StopRequest(), claimed_by)
    except (Conflict, JobCancelled):
        raise  # the job is someone else's, or another run holds the kb: nothing to record on it here
    except Exception as exc:
        if job_id is not None:  # failed before the run recorded anything (a run's own failures are recorded)
            record_failure(engine, job_id, exc)
        raise


def _run(
    settings: Settings,
    engine: Engine,
    root: Path,
    kb_name: str,
    tenant: str,
    public: bool,
    embedder: Embedder | None,
    build_index: bool,
    progress: Progress | None,
    job_id: int | None,
    llm_parser: LLMParserOptions | None,
    heartbeat_s: float,
    stop: StopRequest,
    claimed_by: str | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    index_root = settings.resolved_index_dir()
    me = current_process()
    within = None
    try:
        with engine.begin() as conn:
            if job_id is not None:  # before ensure_kb: a cancelled job must not re-create its deleted kb
                within = confining_root(root, claim_job(conn, job_id, me, claimed_by).get("roots"))
            kb = store.ensure_kb(conn, kb_name, tenant, root, public)
    except OutsideRoot as exc:
        assert job_id is not None
        mark_job_failed(engine, job_id, exc.message)
        raise
    # We hold the kb's lock, so a job of this kb still marked running on this host died without a word.
    reap_dead_jobs(engine, kb_id=kb.id)
    with engine.begin() as conn:
        discarded = store.discard_unpublished(conn, kb, index_root)
        number = store.next_generation(conn, kb)
        previous = store.visible_files(conn, kb.id, kb.generation, CHUNKING) if kb.generation else {}
        job_id = start_job(conn, kb, root, number, job_id, me)
    if discarded:
        log.info("discarded %d file versions left by an interrupted run of kb %s", discarded, kb_name)
    try:
        with Heartbeat(engine, job_id, heartbeat_s):
            return _build(settings, engine, root, kb, number, previous, job_id, embedder, build_index,
                          _checked(progress, stop), llm_parser, started, stop, within)
    except Interrupted as exc:
        kb = get_kb(engine, kb.name, kb.tenant)  # a run stopped while embedding has published its keyword index
        serving = f"generation {kb.generation} keeps serving" if kb.generation else "nothing was published"
        mark_job_failed(engine, job_id, f"{exc}: the run stopped before it finished; {serving}")
        raise
    except BaseException as exc:
        record_failure(engine, job_id, exc)
        raise


def _checked(progress: Progress | None, stop: StopRequest) -> Progress:
    """``progress`` that first checks ``stop`` (called per file while parsing, per batch while embedding)."""

    def report(phase: str, done: int, total: int | None) -> None:
        stop.check()
        if progress:
            progress(phase, done, total)

    return report


def _build(
    settings: Settings,
    engine: Engine,
    root: Path,
    kb: KbRef,
    number: int,
    previous: dict[str, tuple[int, str]],
    job_id: int,
    embedder: Embedder | None,
    build_index: bool,
    progress: Progress,
    llm_parser: LLMParserOptions | None,
    started: float,
    stop: StopRequest,
    within: Path | None = None,
) -> dict[str, Any]:
    summary = new_summary(kb, number, job_id)
    registry = ParserRegistry(llm=make_llm_parser(settings, engine, llm_parser))
    walk_stats = WalkStats()
    t_parse = time.perf_counter()
    seen, replaced = _parse_files(settings, engine, root, kb, number, previous, job_id, registry, walk_stats,
                                  summary, progress, stop, within)
    deleted = [fid for path, (fid, _) in previous.items() if path not in seen]
    summary["deleted"] = len(deleted)
    summary["files"] = len(seen)
    summary["skipped"] = dict(sorted(walk_stats.skipped.items()))
    summary["parse_seconds"] = round(time.perf_counter() - t_parse, 3)
    if registry.llm is not None:
        summary["llm_parser"] = registry.llm.stats.as_dict()

    any_change = bool(replaced or deleted or summary["added"])
    if not any_change and kb.generation and (not build_index or _has_index(engine, kb, settings)):
        with engine.begin() as conn:
            store.drop_generation(conn, kb.id, number)
            summary.update(generation=kb.generation, status="unchanged", ready="complete" if build_index else None)
            finish_job(conn, job_id, summary, started)
        summary["seconds"] = round(time.perf_counter() - started, 3)
        return summary

    with engine.begin() as conn:
        store.close_files(conn, replaced + deleted, number)
    return _index_and_publish(settings, engine, kb, number, job_id, embedder, build_index, progress, summary,
                              started, any_change)


def _parse_files(
    settings: Settings,
    engine: Engine,
    root: Path,
    kb: KbRef,
    number: int,
    previous: dict[str, tuple[int, str]],
    job_id: int,
    registry: ParserRegistry,
    walk_stats: WalkStats,
    summary: dict[str, Any],
    progress: Progress,
    stop: StopRequest,
    within: Path | None,
) -> tuple[set[str], list[int]]:
    """Walk ``root`` and parse each new or changed file into generation ``number``'s rows, written
    ``settings.ingest_batch_size`` files at a time; returns the paths the generation keeps and the ids of the
    file versions it replaces."""
    limits = ChunkLimits(settings.doc_chunk_min_chars, settings.doc_chunk_max_chars,
                         settings.function_chunk_max_lines, settings.file_chunk_head_lines)
    seen, replaced, batch = set[str](), list[int](), store.new_batch()

    def changed(wf: WalkedFile) -> bool:
        return previous.get(wf.path, (0, None))[1] != wf.content_hash

    # Listed in full before parsing, so that parse progress has a total; texts kept within a budget (listing.py).
    listing = list_files(root, needs_text=changed, max_file_bytes=settings.max_file_bytes, stats=walk_stats,
                         within=within, progress=lambda n: progress("walk", n, None))
    files = registry.prefetch(texts(listing, root, max_file_bytes=settings.max_file_bytes, within=within), changed)
    bounds = ParseBounds(settings.parse_timeout_s, settings.parse_max_mb)
    with ParseWorker(limits, bounds, stop) as worker:
        for done, wf in enumerate(files, 1):
            total = max(len(listing.files), done)  # a file created since the listing is parsed too
            old = previous.get(wf.path)
            if old is not None and old[1] == wf.content_hash:
                seen.add(wf.path)
                summary["unchanged"] += 1
            else:
                try:
                    parsed = worker.parse_file(registry, wf.path, wf.text)
                except ParseLimitExceeded as exc:  # skipped like a file the walk leaves out: a stored copy goes
                    record_skip(walk_stats, summary, wf.path, str(exc))
                    progress("parse", done, total)
                    continue
                seen.add(wf.path)
                if old is not None:
                    replaced.append(old[0])
                    summary["changed"] += 1
                else:
                    summary["added"] += 1
                add_file(batch, parsed, kb, number, wf, summary)
                summary["lines"] += wf.text.count("\n") + 1
            if len(batch) >= settings.ingest_batch_size:
                _flush(engine, batch, summary, job_id)
                batch = store.new_batch()
            progress("parse", done, total)
    _flush(engine, batch, summary, job_id)
    return seen, replaced


def _index_and_publish(
    settings: Settings,
    engine: Engine,
    kb: KbRef,
    number: int,
    job_id: int,
    embedder: Embedder | None,
    build_index: bool,
    progress: Progress,
    summary: dict[str, Any],
    started: float,
    any_change: bool,
) -> dict[str, Any]:
    """Publish generation ``number``: keyword search first (local backend), then its vectors (when ``build_index``),
    then collect what it made garbage."""
    index_root = settings.resolved_index_dir()
    index_dir = None
    local = settings.search_backend != "postgres"
    if build_index and local and (any_change or not kb.generation):  # keyword search first, vectors after
        kb = publish_keywords(engine, kb, number, index_root, job_id, summary, started)
        progress("searchable", 1, 1)
    if build_index:
        if embedder is None:
            from sift.embed import make_embedder

            progress("model", 0, None)
            embedder = make_embedder(settings)
            progress("model", 1, 1)
        if not local:
            from sift.ingest.pg_index import build_pg_index

            summary["index"] = build_pg_index(
                engine, embedder, kb.id, number, kb.generation or None,
                vector_kind=settings.vector_index, progress=progress,
            )
        else:
            from sift.ingest.index import build_indexes

            index_dir = generation_dir(index_root, kb.id, number)
            summary["index"] = build_indexes(
                engine, embedder, kb.id, number, index_dir, previous_dir=vector_source(engine, kb, index_root),
                keyword_dir=keyword_dir(index_root, kb.id, number) if kb.generation == number else None,
                progress=progress, vector_kind=settings.vector_index,
            )
        summary["ready"] = "complete"
    summary.update(seconds=round(time.perf_counter() - started, 3), status="published")
    with engine.begin() as conn:
        if kb.generation == number:  # published keyword-only above: its vectors join it
            publish_vectors(conn, kb, index_dir, index_root, generation_stats(summary))
        else:
            # Stored relative to the index root: a moved or copied data directory reads its own files.
            stored = index_dir.relative_to(index_root) if index_dir is not None else None
            store.publish(conn, kb, number, stored, generation_stats(summary))
        finish_job(conn, job_id, summary, started)
    if kb.generation == number:
        drop_keyword_index(index_root, kb)
    with engine.begin() as conn:
        store.collect_garbage(conn, kb.id, number, index_root, settings.generation_grace_s)
    return summary


def _has_index(engine: Engine, kb: KbRef, settings: Settings) -> bool:
    if settings.search_backend == "postgres":
        from sift.ingest.pg_index import has_pg_index

        return has_pg_index(engine, kb.id, kb.generation)
    with engine.connect() as conn:
        path = conn.execute(
            select(Generation.index_path).where(Generation.kb_id == kb.id, Generation.number == kb.generation)
        ).scalar()
    if not path:
        return False
    from sift.index.generation import is_current  # FAISS loads with the index, not with the pipeline

    # An index of an older layout (one without windows), or a damaged one, is built again, reusing what it can.
    return is_current(index_dir_of(settings.resolved_index_dir(), kb.id, kb.generation, path))


def _flush(engine: Engine, batch: store.FileBatch, summary: dict[str, Any], job_id: int) -> None:
    if not batch.files:
        return
    with engine.begin() as conn:
        nodes, chunks = store.write_batch(conn, batch)
        summary["nodes"] += nodes
        summary["chunks"] += chunks
        conn.execute(
            update(IngestJob).where(IngestJob.id == job_id).values(
                heartbeat_at=func.now(),
                progress={"files": summary["added"] + summary["changed"] + summary["unchanged"],
                          "nodes": summary["nodes"], "chunks": summary["chunks"]},
            )
        )
