"""Retrieve branches and fusion for the graph: tasks from a plan, one time-bounded channel run, numbered evidence.

``plan_tasks`` turns a plan into ``RetrieveTask``s (one per channel × sub-query, plus DocQL and file reads);
``run_task`` runs one of them synchronously; ``build_evidence`` fuses a round's results, loads the exact lines of
each file version and numbers the evidence ``[1]…[n]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, func, select

from sift.catalog import get_serving_kb
from sift.db import visible_in
from sift.db.tables import File, Node
from sift.errors import SiftError
from sift.graph.callers import callers as find_callers
from sift.graph.models import ChannelResult, Evidence, Plan, RankedChunk, RetrieveTask
from sift.graph.writer import CEILING_KEY, MAX_MODULE_ITEMS, MODULE_CHANNEL, family_member, open_fence
from sift.index.bm25 import idf_plus_one
from sift.models import Filters, Hit, SourceType
from sift.retrievers.base import KbIndex
from sift.retrievers.docql import DocQLChannel
from sift.retrievers.fusion import dedup_overlaps, fuse, sort_hits
from sift.retrievers.paths import is_stub_path, is_test_path
from sift.retrievers.question import QuestionShape
from sift.retrievers.search import Searcher
from sift.text import split_lines
from sift.tokenize import prefix_variants, tokenize

if TYPE_CHECKING:  # the PostgreSQL channels load only with that backend
    from sift.retrievers.pg_search import PgKb

# An evidence item's text: its whole chunk (a function chunk is at most 120 lines), so that the writer can quote any
# line of the range it cites; the LLM sees the first 1,500 characters of each (tools.evidence_block).
MAX_EVIDENCE_CHARS = 12000
CHANNEL_DEPTH = 100  # candidates per channel: fusion's ranker re-orders deep lists (bench/retrieval.py)


def plan_tasks(plan: Plan, kb: str, tenant: str, round_no: int) -> list[RetrieveTask]:
    """One task per channel × sub-query, then one per DocQL query and per file to read."""
    tasks: list[RetrieveTask] = []
    queries = plan.subqueries or [plan.standalone]
    for query in queries:
        for channel in plan.channels:
            tasks.append(RetrieveTask(channel=channel, query=query, kb=kb, tenant=tenant, index_type=plan.index_type,
                                      source_type=plan.source_type, k=CHANNEL_DEPTH, round=round_no))
    for q in plan.docql:
        tasks.append(RetrieveTask(channel="docql", query=q, kb=kb, tenant=tenant, k=10, round=round_no))
    for path in plan.read_files:
        tasks.append(RetrieveTask(channel="file", query=path, kb=kb, tenant=tenant, k=1, round=round_no))
    return tasks


def run_task(task: RetrieveTask, engine: Engine, searcher: Searcher) -> list[Hit]:
    """Run one branch and return its hits (an empty list is a result, not an error)."""
    filters = Filters(kb=task.kb, tenant=task.tenant,
                      source_type=SourceType(task.source_type) if task.source_type else None)
    if task.channel == "docql":
        hits = DocQLChannel(engine).search(task.query, filters, task.k)
    elif task.channel == "file":
        hits = [_whole_file_hit(engine, task)]
    else:
        hits = searcher.channel(task.channel, task.query, filters, task.k, task.index_type)
    return [h for h in hits if h is not None]


def _whole_file_hit(engine: Engine, task: RetrieveTask) -> Hit:
    kb = get_serving_kb(engine, task.kb, task.tenant)
    with engine.connect() as conn:
        row = conn.execute(select(File.line_count).where(
            File.kb_id == kb.id, File.path == task.query, visible_in(File, kb.generation))).first()
    if row is None:
        raise SiftError(f"{task.query} is not in knowledge base {task.kb}")
    return Hit(chunk_id=None, node_id=None, path=task.query, start_line=1, end_line=max(1, row.line_count),
               kind="file", name=task.query, score=0.0, channel="file", rank=1, channels=("file",))


T = TypeVar("T")


async def in_daemon_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a daemon thread of its own.

    A branch that runs out of time is abandoned, not stopped. On the loop's default executor it would still hold
    up ``asyncio.run`` and interpreter exit until it finished; a daemon thread holds up nothing.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():  # cancelled by the timeout
            setter(value)

    def work() -> None:
        try:
            result = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            outcome: tuple[Callable[[Any], None], Any] = (future.set_exception, exc)
        else:
            outcome = (future.set_result, result)
        with contextlib.suppress(RuntimeError):  # the loop closed while this branch was abandoned
            loop.call_soon_threadsafe(deliver, *outcome)

    threading.Thread(target=work, daemon=True, name="sift-retrieve").start()
    return await future


def timed_result(task: RetrieveTask, started: float, hits: Sequence[Hit], error: str | None) -> ChannelResult:
    """A ``ChannelResult`` stamped with wall-clock start and finish; chunk hits are kept as ids and scores."""
    finished = time.time()
    ranked = [RankedChunk(chunk_id=h.chunk_id, rank=h.rank, score=h.score) for h in hits if h.chunk_id is not None]
    spans = [h.model_dump(mode="json") for h in hits if h.chunk_id is None]
    return ChannelResult(channel=task.channel, query=task.query, round=task.round, ranked=ranked, spans=spans,
                         started=started, finished=finished, elapsed_ms=round((finished - started) * 1000, 2),
                         error=error)


def result_hits(result: ChannelResult, index: KbIndex | PgKb | None) -> list[Hit]:
    """The branch's hits again: chunks rebuilt from the generation's index (one no longer in it is dropped)."""
    hits = [Hit(**h) for h in result.spans]
    if result.ranked and index is not None:
        hits = index.rebuild(((r.chunk_id, r.score, r.rank) for r in result.ranked), result.channel) + hits
    return hits


def leading_hits(results: Sequence[ChannelResult], index: KbIndex | PgKb | None,
                 top: int = 3) -> list[tuple[str, list[Hit]]]:
    """Each search branch's first ``top`` hits, rebuilt from the index: which places the channels agree lead."""
    if index is None:
        return []
    return [(r.channel, index.rebuild(((x.chunk_id, x.score, x.rank) for x in r.ranked if x.rank <= top),
                                      r.channel)) for r in results if r.ranked]


def fuse_results(results: Sequence[ChannelResult], shape: QuestionShape, index: KbIndex | PgKb | None) -> list[Hit]:
    """RRF over every branch of the round (DocQL and file reads count as rankings too), deduplicated, ranked for
    the question of ``shape`` (its words, identifiers and forms).

    ``index`` is the knowledge base's serving bundle, to rebuild the search channels' hits from their ids.
    """
    branches = [(r.channel, result_hits(r, index)) for r in results]
    rankings = [hits for channel, hits in branches if hits and channel != "file"]
    fused = fuse(rankings, tokenize(shape.text), shape.identifiers, forms=shape.forms) if rankings else []
    reads = [h for channel, hits in branches if channel == "file" for h in hits]
    if reads:
        top = fused[0].score if fused else 1.0
        reads = [h.model_copy(update={"score": top * 0.5}) for h in reads]
        # A whole file is the least precise citation: keep it only where nothing narrower covers it.
        fused = dedup_overlaps(sort_hits([*fused, *reads]))
    return fused


def _file_rows(engine: Engine, kb_id: int, generation: int, paths: Sequence[str]) -> dict[str, Any]:
    with engine.connect() as conn:
        rows = conn.execute(select(File.id, File.path, File.content, File.content_hash, File.line_count).where(
            File.kb_id == kb_id, File.path.in_(list(set(paths))), visible_in(File, generation))).all()
    return {r.path: r for r in rows}


def _nodes(engine: Engine, ids: Sequence[int]) -> dict[int, Any]:
    if not ids:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(select(Node.id, Node.kind, Node.name, Node.qualified_name, Node.signature,
                                   Node.docstring, Node.start_line, Node.end_line, Node.file_id, Node.parent_id)
                            .where(Node.id.in_(list(set(ids))))).all()
    return {r.id: r for r in rows}


MAX_SUBSECTIONS = 50  # headings kept per section: the answer names the first few and counts the rest


def section_context(engine: Engine, nodes: Sequence[Any]) -> tuple[dict[int, str], dict[int, list[tuple[int, str]]]]:
    """For the heading nodes among ``nodes``: the name of the heading each sits under when its file repeats its
    own name, and the sections directly under each as ``(start line, heading)`` in file order (both by node id).

    A heading such as "Fixed", "Added" or "Options" that recurs in one file does not tell a reader which one is
    meant; its parent (the release "2.0.0") does. The sections under one say where a section that only introduces
    its parts ("Errors" over one section per error) goes on. One query on the headings of the cited files."""
    headings = [n for n in nodes if n.kind == "heading"]
    if not headings:
        return {}, {}
    with engine.connect() as conn:
        rows = conn.execute(select(Node.id, Node.file_id, Node.parent_id, Node.name, Node.start_line)
                            .where(Node.file_id.in_({n.file_id for n in headings}), Node.kind == "heading")
                            .order_by(Node.file_id, Node.start_line)).all()
    names = Counter((r.file_id, r.name) for r in rows)
    by_id = {r.id: r for r in rows}
    under: dict[int, list[tuple[int, str]]] = {}
    for r in rows:
        if r.parent_id is not None:
            under.setdefault(r.parent_id, []).append((r.start_line, r.name))
    parents = {n.id: by_id[n.parent_id].name for n in headings
               if names[(n.file_id, n.name)] > 1 and n.parent_id in by_id}
    return parents, {n.id: under[n.id] for n in headings if n.id in under}


WHOLE_SECTION_LINES = 40  # a documentation section this short (or shorter) is read whole, whichever chunk was found


def whole_section(hit: Hit, node: Any) -> tuple[int, int]:
    """The lines a hit's evidence covers: a doc chunk of a section (its heading ``node``) of at most
    ``WHOLE_SECTION_LINES`` lines covers the whole section, so that what the section goes on to say (the options
    listed after "Usage:") is there to quote; any other hit, its own lines."""
    if hit.kind == "doc" and node is not None and node.kind == "heading" \
            and node.start_line <= hit.start_line and hit.end_line <= node.end_line \
            and node.end_line - node.start_line + 1 <= WHOLE_SECTION_LINES:
        return node.start_line, node.end_line
    return hit.start_line, hit.end_line


def build_evidence(engine: Engine, kb: str, tenant: str, hits: Sequence[Hit], limit: int,
                   previous: Sequence[Evidence] = ()) -> list[Evidence]:
    """The top ``limit`` hits (after ``previous``) as numbered evidence with their exact lines and metadata."""
    ref = get_serving_kb(engine, kb, tenant)
    keep = list(previous)
    seen = {e.key for e in keep}
    chosen = [h for h in hits if f"{h.path}:{h.start_line}-{h.end_line}" not in seen][: max(0, limit - len(keep))]
    files = _file_rows(engine, ref.id, ref.generation, [h.path for h in chosen])
    nodes = _nodes(engine, [h.node_id for h in chosen if h.node_id is not None])
    parents, children = section_context(engine, list(nodes.values()))
    out = [e.model_copy(update={"id": i}) for i, e in enumerate(keep, 1)]
    for h in chosen:
        row = files.get(h.path)
        if row is None:
            continue
        lines = split_lines(row.content)
        node = nodes.get(h.node_id) if h.node_id is not None else None
        start, end = whole_section(h, node)
        end = min(end, len(lines))
        while end > max(start, h.end_line) and not lines[end - 1].strip():
            end -= 1  # a section runs to the next heading: the blank lines before it are no part of it
        if start != h.start_line or end != h.end_line:
            if f"{h.path}:{start}-{end}" in seen:
                continue  # another chunk of this short section brought it already
            seen.add(f"{h.path}:{start}-{end}")
        text = "\n".join(lines[start - 1 : end])[:MAX_EVIDENCE_CHARS]
        callers: list[dict[str, Any]] = []
        if node is not None and node.kind in ("function", "method", "class"):
            callers = find_callers(engine, ref.id, ref.generation, node)
        out.append(Evidence(
            id=len(out) + 1, path=h.path, start_line=start, end_line=end, kind=h.kind, name=h.name,
            symbol=h.symbol, part=h.part, module_code=h.module_code, score=h.score, channels=list(h.channels or (h.channel,)), text=text,
            signature=node.signature if node is not None else None,
            docstring=node.docstring if node is not None else None,
            content_hash=row.content_hash, callers=callers,
            fence=open_fence(lines[: start - 1]) if h.kind == "doc" else None,
            parent_heading=parents.get(h.node_id) if h.node_id is not None else None,
            subsections=[name for line, name in children.get(h.node_id, []) if line > end][:MAX_SUBSECTIONS]
            if h.node_id is not None else [],
        ))
    return out


MAX_MODULE_DEFS = 500


def module_evidence(engine: Engine, kb: str, tenant: str, path: str, evidence: Sequence[Evidence]) -> list[Evidence]:
    """The public top-level classes and functions of one file as evidence numbered after ``evidence``.

    A list question ("which validators are there?") is answered by a module's definitions, most of which no
    retrieval channel ranks: the writer enumerates them from here. Definitions already in the evidence whole (same
    name and file, covering its lines) are not repeated; one retrieved only as the chunk of its header is.
    """
    ref = get_serving_kb(engine, kb, tenant)
    with engine.connect() as conn:
        row = conn.execute(select(File.id, File.content, File.content_hash).where(
            File.kb_id == ref.id, File.path == path, visible_in(File, ref.generation))).first()
        if row is None:
            return []
        top = select(Node.id).where(Node.file_id == row.id, Node.kind == "file").scalar_subquery()
        nodes = conn.execute(
            select(Node.kind, Node.name, Node.qualified_name, Node.start_line, Node.end_line, Node.signature,
                   Node.docstring)
            .where(Node.file_id == row.id, Node.parent_id == top, Node.kind.in_(("class", "function")))
            .order_by(Node.start_line).limit(MAX_MODULE_DEFS)
        ).all()
    lines = split_lines(row.content)
    out: list[Evidence] = []
    for n in nodes:
        # Retrieved whole already: not again (a chunk of only its header does not count: the listing cites it all).
        if not n.name.startswith("_") and not any(_holds(e, path, n) for e in evidence):
            out.append(_listed(len(evidence) + len(out) + 1, path, n, lines, row.content_hash))
    return out


def _holds(e: Evidence, path: str, node: Any) -> bool:
    """The evidence item is the definition ``node`` of ``path`` whole (its name, covering all its lines)."""
    return e.path == path and e.symbol == node.name and e.start_line <= node.start_line and node.end_line <= e.end_line


def _listed(n: int, path: str, node: Any, lines: Sequence[str], content_hash: str) -> Evidence:
    """The definition ``node`` (a row of ``nodes``) as evidence item ``n`` that the fuse node listed."""
    end = min(node.end_line, len(lines))
    return Evidence(id=n, path=path, start_line=node.start_line, end_line=end, kind=node.kind, name=node.name,
                    score=0.0, channels=[MODULE_CHANNEL], signature=node.signature, docstring=node.docstring,
                    text="\n".join(lines[node.start_line - 1 : end])[:MAX_EVIDENCE_CHARS], content_hash=content_hash)


FAMILY_MIN = 3  # classes named alike that make a family worth listing; more than MAX_MODULE_ITEMS are no list to show


def family_evidence(engine: Engine, kb: str, tenant: str, noun: str,
                    evidence: Sequence[Evidence]) -> tuple[set[int], list[Evidence]] | None:
    """The family of public top-level classes named after ``noun`` (``selection.family_member``: ``JsonExporter``,
    ``CsvExporter`` … for exporter) outside tests and type stubs: the ids of the evidence that holds a member
    whole, and the other members as evidence numbered after ``evidence``. None unless the family has
    ``FAMILY_MIN`` to ``MAX_MODULE_ITEMS`` members. One query on the kb's classes by name, then the members' files."""
    ref = get_serving_kb(engine, kb, tenant)
    pattern = f"%{noun[:max(4, len(noun) - 2)]}%"  # the stem that ``stems_match`` asks of the name's last word
    with engine.connect() as conn:
        rows = conn.execute(
            select(Node.file_id, Node.path, Node.kind, Node.name, Node.start_line, Node.end_line, Node.signature,
                   Node.docstring)
            .join(File, File.id == Node.file_id)
            .where(Node.kb_id == ref.id, Node.kind == "class", Node.level == 1, visible_in(File, ref.generation),
                   func.lower(Node.name).like(pattern))
            .order_by(Node.path, Node.start_line).limit(MAX_MODULE_DEFS)
        ).all()
        if len(rows) >= MAX_MODULE_DEFS:
            return None  # cut off: members may be missing, and a partial family is no list of them
        nodes = [n for n in rows if family_member(n.name, noun) and not is_test_path(n.path) and not is_stub_path(n.path)]
        if not FAMILY_MIN <= len(nodes) <= MAX_MODULE_ITEMS:
            return None
        whole = {e.id for e in evidence if any(_holds(e, n.path, n) for n in nodes)}
        wanted = [n for n in nodes if not any(_holds(e, n.path, n) for e in evidence)]
        files = {r.id: r for r in conn.execute(select(File.id, File.content, File.content_hash).where(
            File.id.in_({n.file_id for n in wanted})))} if wanted else {}
    out = [_listed(len(evidence) + i, n.path, n, split_lines(files[n.file_id].content), files[n.file_id].content_hash)
           for i, n in enumerate(wanted, 1)]
    return whole, out


def term_idf(searcher: Searcher, kb: str, tenant: str, terms: Sequence[str]) -> dict[str, float]:
    """Okapi idf of each query term in the kb's BM25 index (how distinctive it is); unknown terms get the max,
    unless the corpus has them without a derivational prefix (``prefix_variants``)."""
    try:
        bundle = searcher.cache.get(kb, tenant)
    except SiftError:
        return {}
    # Every form of every term in one lookup: on the PostgreSQL backend it is one query.
    wanted = [v for term in terms for tok in tokenize(term) for v in (tok, *prefix_variants(tok))]
    n, known = bundle.doc_freqs(wanted)
    n = max(1, n)
    out: dict[str, float] = {CEILING_KEY: idf_plus_one(n, 0)}
    for term in terms:
        for tok in tokenize(term):
            # A word the corpus only has without its prefix ("recomputed": "computed") counts as that word.
            count = known.get(tok) or next((c for c in map(known.get, prefix_variants(tok)) if c), 0)
            out[tok] = idf_plus_one(n, count)
    return out
