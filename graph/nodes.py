"""The graph's nodes (async, returning partial state) and its routers (returning node names or ``Send``s)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send
from sqlalchemy import select

from sift.catalog import get_serving_kb
from sift.db import visible_in
from sift.db.tables import File
from sift.errors import SiftError, VectorsNotReady
from sift.graph import llm
from sift.graph.abstention import (
    ABSENT_FROM_CORPUS,
    LEXICAL_REASONS,
    PASSAGE_CHARS,
    WEAK_YES,
    doubtful_yes,
    first_passage,
    near_in_meaning,
    not_found,
)
from sift.graph.abstention import signals as abstention_signals
from sift.graph.agent import failed_check
from sift.graph.candidates import hedged, with_candidates
from sift.graph.checker import FileFacts, check_draft, cited_ids, strip_unsupported
from sift.graph.confidence import TOP_RANKS, ConfidenceModel, assess, no_retrieval, signals, top_channels
from sift.graph.context import AskContext
from sift.graph.extractive import write_extractive
from sift.graph.fallback import KEEPS_EVIDENCE, next_plan
from sift.graph.numbering import numbering, renumber_text
from sift.graph.planner import plan_question
from sift.graph.retrieval import (
    build_evidence,
    family_evidence,
    fuse_results,
    in_daemon_thread,
    leading_hits,
    module_evidence,
    plan_tasks,
    run_task,
    term_idf,
    timed_result,
)
from sift.graph.state import (
    NOT_FOUND,
    Answer,
    AskState,
    Citation,
    Confidence,
    Draft,
    Evidence,
    FileCitation,
    Plan,
    RetrieveTask,
    Verdict,
    reset,
)
from sift.graph.support import (
    MODULE_CHANNEL,
    family_nouns,
    list_anchor,
    module_listing,
    select_evidence,
    without_bases,
)
from sift.retrievers.search import COPY_DEPTH
from sift.text import split_lines

log = logging.getLogger(__name__)


async def planner(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Decide type, terms, channels, index level, DocQL, sub-queries, budget and K; reset per-question state."""
    ctx = runtime.context
    question, kb = state["question"].strip(), state["kb"]
    history = state.get("turns") or []
    rules = plan_question(question, kb, history, llm=ctx.chat_model is not None, shape=state.get("shape"))
    plan, tokens, failed = rules, 0, None
    if ctx.uses_llm("planner") and rules.need_retrieval:
        plan, tokens, failed = await llm.plan_with_llm(ctx, question, history, rules)
    if plan.need_retrieval and hasattr(ctx.searcher, "warm"):
        await _warm(ctx, kb, state.get("tenant") or "default", plan)
    return {"plan": plan, "results": reset(), "evidence": reset(), "draft": None, "verdict": None, "answer": None,
            "rounds": 0, "fallbacks": 0, "tokens": tokens, "tried": [], "idf": {}, "started": time.time(),
            "tenant": state.get("tenant") or "default", "llm_failed": failed, "tool_protocol": None,
            "agent_round": -1}


async def _warm(ctx: AskContext, kb: str, tenant: str, plan: Plan) -> None:
    """Load the kb's indexes and the query encoder before the branches' time budgets start.

    A cold process (the CLI) would otherwise spend a branch's budget loading, lose the vector channel and answer
    differently from a warm server. Errors are left to the branches, which report them per channel.
    """
    with contextlib.suppress(SiftError):
        await asyncio.to_thread(ctx.searcher.warm, kb, tenant, vector="vector" in plan.channels)


def route_retrieve(state: AskState) -> list[Send] | Literal["generate"]:
    """Fan out one ``retrieve`` task per channel × sub-query (plus DocQL / file reads); none → ``generate``."""
    plan = state["plan"]
    if not plan.need_retrieval:
        return "generate"
    tasks = plan_tasks(plan, state["kb"], state.get("tenant") or "default", state.get("rounds", 0))
    if not tasks:
        return "generate"
    return [Send("retrieve", t) for t in tasks]


async def retrieve(task: RetrieveTask, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """One channel over one query, bounded by the context's per-branch timeout; failures become empty results."""
    ctx = runtime.context
    t = task
    started = time.time()
    limit = ctx.limits.channel_timeout_ms / 1000 if ctx.limits.wall_clock else None
    try:
        hits = await asyncio.wait_for(in_daemon_thread(run_task, t, ctx.engine, ctx.searcher), timeout=limit)
        result = timed_result(t, started, hits, None)
    except TimeoutError:
        result = timed_result(t, started, [], f"timed out after {ctx.limits.channel_timeout_ms} ms")
        result = result.model_copy(update={"timed_out": True})
    except VectorsNotReady as exc:  # searchable by keyword only, for now: the answer says what it did without
        result = timed_result(t, started, [], exc.message).model_copy(update={"unavailable": True})
    except SiftError as exc:
        result = timed_result(t, started, [], exc.message)
    log.info("retrieve %s round %d: %d hits in %.0f ms", t.channel, t.round, result.size, result.elapsed_ms)
    return {"results": [result]}


async def fuse(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Fuse this round's branches, dedupe, load exact lines and number the evidence [1]…[n]."""
    ctx = runtime.context
    plan, rounds = state["plan"], state.get("rounds", 0)
    kb, tenant = state["kb"], state.get("tenant") or "default"
    results = [r for r in state.get("results") or [] if r.round == rounds]
    previous = state.get("evidence") or []
    limit = min(16, len(previous) + plan.top_k)

    def work() -> tuple[list[Evidence], dict[str, float]]:
        index = ctx.searcher.cache.get(kb, tenant) if any(r.ranked for r in results) else None
        hits = fuse_results(results, plan.shape, index)
        if index is not None:  # a definition's copies in other files are one place, cited where the package points
            depth = limit * COPY_DEPTH
            hits = ctx.searcher.fold_copies(hits[:depth], index) + hits[depth:]
        ev = build_evidence(ctx.engine, kb, tenant, hits, limit, previous)
        tops = leading_hits(results, index, TOP_RANKS)
        ev = [e.model_copy(update={"top_in": sorted({*e.top_in, *top_channels(e, tops)})}) for e in ev]
        idf = state.get("idf") or term_idf(ctx.searcher, kb, tenant, [plan.standalone, *plan.identifiers])
        anchor = list_anchor(plan, ev, idf)
        if anchor is not None:  # "which validators are there": the anchor's module lists them
            extra = module_evidence(ctx.engine, kb, tenant, anchor.path, ev)
            ev = with_listed(ev, extra, {id(e) for e in module_listing(plan, anchor, [*ev, *extra], idf)})
        else:  # "which exporters are there": the classes named after them (JsonExporter, CsvExporter …)
            ev = with_family(ctx, kb, tenant, plan, ev)
        return ev, idf

    evidence, idf = await asyncio.to_thread(work)
    return {"evidence": reset(evidence), "idf": idf}


def with_family(ctx: AskContext, kb: str, tenant: str, plan: Plan, ev: list[Evidence]) -> list[Evidence]:
    """``ev`` with the family of classes a list question asks for (``support.family_nouns``, the first noun
    that names one) marked for the writer and joined to the evidence; ``ev`` unchanged when none does."""
    for noun in family_nouns(plan, ev):
        found = family_evidence(ctx.engine, kb, tenant, noun, ev)
        if found is not None:
            whole, extra = found
            return with_listed(ev, extra, {id(e) for e in without_bases([*(e for e in ev if e.id in whole), *extra])})
    return ev


def with_listed(ev: list[Evidence], extra: list[Evidence], listed: set[int]) -> list[Evidence]:
    """``ev`` with its ``listed`` items (by object id) marked for the writer, and the listed ``extra`` items joined
    after it, numbered on from ``ev``'s last; the others never join the evidence (or the checkpoint)."""
    ev = [e.model_copy(update={"channels": [*e.channels, MODULE_CHANNEL]})
          if id(e) in listed and MODULE_CHANNEL not in e.channels else e for e in ev]
    return [*ev, *(e.model_copy(update={"id": len(ev) + i})
                   for i, e in enumerate((e for e in extra if id(e) in listed), 1))]


async def generate(state: AskState) -> dict[str, Any]:
    """Write the answer with the extractive writer (with a chat model, ``graph/agent.py`` writes it instead)."""
    plan, evidence = state["plan"], state.get("evidence") or []
    draft = write_extractive(plan, evidence, state.get("idf") or {}, state["kb"])
    return {"draft": draft}


def file_facts(ctx: AskContext, kb: str, tenant: str, paths: list[str]) -> dict[str, FileFacts]:
    """Line count, hash and lines of each path in the serving generation."""
    if not paths:
        return {}
    ref = get_serving_kb(ctx.engine, kb, tenant)
    with ctx.engine.connect() as conn:
        rows = conn.execute(select(File.path, File.line_count, File.content_hash, File.content).where(
            File.kb_id == ref.id, File.path.in_(paths), visible_in(File, ref.generation))).all()
    return {r.path: FileFacts(r.line_count, r.content_hash, tuple(split_lines(r.content))) for r in rows}


async def check(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Check the draft's citations; a passing draft becomes the grounded answer."""
    ctx = runtime.context
    plan, draft, evidence = state["plan"], state["draft"], state.get("evidence") or []
    assert draft is not None
    if draft.confidence is None:
        draft = await asyncio.to_thread(assessed, ctx.confidence, state, draft, ctx)
    paths = sorted({e.path for e in evidence})
    facts = await asyncio.to_thread(file_facts, ctx, state["kb"], state.get("tenant") or "default", paths) \
        if plan.need_retrieval else {}
    verdict = check_draft(draft, evidence, facts, plan.k_citations)
    update: dict[str, Any] = {}
    if draft.mode == "llm" and not verdict.ok:  # the extractive answer instead, and the model set aside
        failed = failed_check(state, verdict)
        state = {**state, **failed}  # type: ignore[typeddict-item]  # what finish() reports as degraded
        draft = await asyncio.to_thread(assessed, ctx.confidence, state, failed["draft"], ctx)
        verdict = check_draft(draft, evidence, facts, plan.k_citations)
        update["llm_failed"] = failed["llm_failed"]
    update.update({"verdict": verdict, "draft": draft})
    if verdict.ok:
        update.update(finish(state, draft, verdict.citations, grounded=True, model=ctx.confidence))
    return update


def route_check(state: AskState, runtime: Runtime[AskContext]) -> Literal["fallback", "summarize", "__end__"]:
    """Grounded → end; otherwise another round while rounds, budget and strategies last; then summarize."""
    verdict, plan = state["verdict"], state["plan"]
    if verdict is not None and verdict.ok:
        return "__end__"  # END, which LangGraph types as a plain str
    limits = runtime.context.limits
    over_budget = limits.wall_clock and (time.time() - state.get("started", time.time())) * 1000 >= plan.budget_ms
    if over_budget or _searched_enough(state, limits.max_rounds):
        return "summarize"
    return "fallback"


def _searched_enough(state: AskState, max_rounds: int) -> bool:
    """Whether the search is over whatever the time: rounds spent, or no strategy left that could help."""
    plan, draft = state["plan"], state["draft"]
    rounds = state.get("rounds", 0)
    if rounds >= max_rounds or not plan.need_retrieval:
        return True
    if draft is not None and draft.not_found and draft.note == "absent-terms" and rounds >= 1:
        return True  # the corpus lacks the question's distinctive words: more rounds will not add them
    if draft is not None and draft.not_found and draft.note in (ABSENT_FROM_CORPUS, WEAK_YES):
        return True  # the evidence is weak and a question word occurs nowhere in the corpus, or what was
        # found is too weak to say the project has what a question asks it has
    return next_plan(plan, state.get("evidence") or [], state.get("tried") or []) is None


async def fallback(state: AskState) -> dict[str, Any]:
    """Change the plan (widen, switch level, DocQL by name, read files, narrow domain) and retrieve again."""
    plan, evidence = state["plan"], state.get("evidence") or []
    tried = state.get("tried") or []
    new = next_plan(plan, evidence, tried)
    assert new is not None  # route_check only comes here when a strategy is left
    keep = evidence if new.strategy in KEEPS_EVIDENCE else []
    return {"plan": new, "rounds": state.get("rounds", 0) + 1, "fallbacks": state.get("fallbacks", 0) + 1,
            "tried": [*tried, new.strategy], "evidence": reset(keep), "draft": None, "verdict": None}


async def summarize(state: AskState, runtime: Runtime[AskContext]) -> dict[str, Any]:
    """Forced final answer, tools withdrawn: only the checked parts survive. Without a chat model, a not-found on
    the question's words alone whose first evidence item is close to it in meaning becomes an uncertain answer
    from that item (``near_answer``). Otherwise an honest not-found."""
    ctx = runtime.context
    draft, verdict = state.get("draft"), state.get("verdict")
    evidence = state.get("evidence") or []
    cut = None
    if draft is not None and not _searched_enough(state, ctx.limits.max_rounds):  # the time budget ended it
        cut = f"time budget: search stopped after round {state.get('rounds', 0) + 1} ({state['plan'].budget_ms} ms)"
        draft = draft.model_copy(update={"cut_short": cut})
    if ctx.uses_llm("writer") and not state.get("llm_failed") and state["plan"].need_retrieval and evidence:
        forced = await llm.summarize_with_llm(ctx, state)
        if forced is not None:
            facts = await asyncio.to_thread(file_facts, ctx, state["kb"], state.get("tenant") or "default",
                                            sorted({e.path for e in evidence}))
            v = check_draft(forced, evidence, facts, state["plan"].k_citations)
            draft, verdict = forced, v
    elif draft is not None and draft.not_found and state["plan"].need_retrieval and evidence:
        near = await asyncio.to_thread(near_answer, ctx, state, draft)
        if near is not None:
            return finish(state, near[0].model_copy(update={"cut_short": cut}), near[1].citations, grounded=True,
                          model=ctx.confidence)
    text, citations = NOT_FOUND, []
    if draft is not None and verdict is not None and verdict.valid and not draft.not_found:
        kept = strip_unsupported(draft.text, verdict.valid)
        if kept:
            text = kept + " (Parts of the answer that could not be checked against the sources were removed.)"
            citations = [c for c in verdict.citations if c.valid and f"[{c.evidence_id}]" in kept]
    elif draft is not None and draft.not_found:
        text = draft.text
    if not citations:
        text = text if text.startswith(NOT_FOUND) else NOT_FOUND
    base = draft or Draft(text=text)
    return finish(state, base.model_copy(update={"text": text}), citations, grounded=False, model=ctx.confidence)


def near_answer(ctx: AskContext, state: AskState, draft: Draft) -> tuple[Draft, Verdict] | None:
    """For a not-found of the extractive writer on the question's words alone: when the first evidence item is
    close in meaning to the question (``abstention.near_in_meaning``), the answer written from it, with its
    confidence (never high) and the candidates, once its citations check; else None."""
    plan, evidence, idf = state["plan"], state.get("evidence") or [], state.get("idf") or {}
    if draft.note not in LEXICAL_REASONS:
        return None
    near = ctx.closeness(plan.standalone, PASSAGE_CHARS)
    if near is None:
        return None
    found = abstention_signals(plan, evidence, select_evidence(plan, evidence, idf), idf)
    if not near_in_meaning(found, near([first_passage(evidence)])[0]):
        return None
    written = assessed(ctx.confidence, state, write_extractive(plan, evidence, idf, state["kb"], near=True), ctx)
    if written.confidence is not None and written.confidence.level == "high":
        written = written.model_copy(update={"confidence": written.confidence.model_copy(update={"level": "medium"})})
    facts = file_facts(ctx, state["kb"], state.get("tenant") or "default", sorted({e.path for e in evidence}))
    verdict = check_draft(written, evidence, facts, plan.k_citations)
    return (written, verdict) if verdict.ok and not written.not_found else None


def _cited(draft: Draft) -> list[int]:
    return list(dict.fromkeys([*cited_ids(draft.text), *(c.evidence_id for c in draft.citations)]))


def assessed(model: ConfidenceModel, state: AskState, draft: Draft, ctx: AskContext | None = None) -> Draft:
    """The draft with its confidence; one that is not high (and no not-found) says so and lists candidates
    (each with its sentence closest to the question, when ``ctx`` gives a ``closeness``). An extractive answer
    rated low to whether the project has or can do something becomes a not-found (``abstention.doubtful_yes``)."""
    plan, evidence, idf = state["plan"], state.get("evidence") or [], state.get("idf") or {}
    if not plan.need_retrieval:
        return draft.model_copy(update={"confidence": no_retrieval()})
    found = signals(plan, evidence, _cited(draft), idf)
    conf = assess(model, found, degraded=bool(_degraded_reasons(state, draft)), not_found=draft.not_found)
    if draft.mode == "extractive" and not draft.not_found and doubtful_yes(plan.shape, conf.level):
        draft = not_found(WEAK_YES, evidence)
        conf = assess(model, found, not_found=True)
    if conf.level != "high" and not draft.not_found:
        near = ctx.closeness(plan.standalone) if ctx is not None else None
        draft = with_candidates(draft, plan, evidence, idf, near)
    return draft.model_copy(update={"confidence": conf})


def _final_confidence(model: ConfidenceModel, state: AskState, draft: Draft, citations: list[Citation],
                      grounded: bool, degraded: bool) -> Confidence:
    """The answer's confidence: the draft's (or computed now), with the rules that hold whatever was fitted:
    a not-found is low, a degraded or partly removed answer at most medium."""
    plan = state["plan"]
    if not plan.need_retrieval:
        return no_retrieval()
    conf = draft.confidence or assess(model, signals(plan, state.get("evidence") or [],
                                                     [c.evidence_id for c in citations], state.get("idf") or {}))
    if draft.not_found or not citations:
        return assess(model, conf.signals, not_found=True)
    if conf.level == "high" and (degraded or not grounded):
        return conf.model_copy(update={"level": "medium"})
    return conf


def _files(citations: list[Citation], evidence: list[Evidence]) -> dict[str, list[FileCitation]]:
    by_id = {e.id: e for e in evidence}
    files: dict[str, list[FileCitation]] = {}
    for c in citations:
        e = by_id.get(c.evidence_id)
        files.setdefault(c.path, []).append(FileCitation(
            type=e.kind if e else "lines", name=e.name if e else c.path, line=c.start_line,
            start_line=c.start_line, end_line=c.end_line, evidence_id=c.evidence_id, snippet=c.snippet,
        ))
    return files


def _degraded_reasons(state: AskState, draft: Draft) -> list[str]:
    """Why the answer may differ from a full run: a channel not ready yet, retrieve branches that timed out, an
    LLM that failed."""
    results = state.get("results") or []
    reasons = [str(r.error) for r in results if r.unavailable]
    reasons += [f"{r.channel} (round {r.round}): {r.error}" for r in results if r.timed_out]
    if state.get("llm_failed"):
        reasons.append(f"llm: {state.get('llm_failed')}")
    elif draft.degraded:
        reasons.append(f"llm: {draft.note or 'failed'}")
    if draft.cut_short:
        reasons.append(draft.cut_short)
    return list(dict.fromkeys(reasons))


def finish(state: AskState, draft: Draft, citations: list[Citation], grounded: bool,
           model: ConfidenceModel) -> dict[str, Any]:
    """The final ``Answer`` (its confidence, citations numbered 1..n in order of use) and the thread turn it adds."""
    plan, evidence = state["plan"], state.get("evidence") or []
    citations = [c for c in citations if c.valid]
    by_id = {e.id: e for e in evidence}
    subject = next((by_id[c.evidence_id].symbol.rsplit(".", 1)[-1] for c in citations
                    if c.evidence_id in by_id and by_id[c.evidence_id].kind not in ("doc", "file")), None)
    subject = subject or (plan.identifiers[0] if plan.identifiers else "")
    reasons = _degraded_reasons(state, draft)
    conf = _final_confidence(model, state, draft, citations, grounded, bool(reasons))
    text = hedged(draft.text) if conf.level != "high" and citations and not draft.not_found else draft.text
    number = numbering(text, [c.evidence_id for c in citations], [e.id for e in evidence])
    text = renumber_text(text, number)
    citations = sorted((c.model_copy(update={"evidence_id": number[c.evidence_id]}) for c in citations),
                       key=lambda c: c.evidence_id)
    evidence = sorted((e.model_copy(update={"id": number[e.id]}) for e in evidence), key=lambda e: e.id)
    answer = Answer(
        text=text, citations=citations, files=_files(citations, evidence), grounded=grounded,
        rounds=state.get("rounds", 0) + (1 if plan.need_retrieval else 0), fallbacks=state.get("fallbacks", 0),
        plan=plan.summary(), tokens=state.get("tokens", 0),
        elapsed_ms=round((time.time() - state.get("started", time.time())) * 1000, 1), mode=draft.mode,
        degraded=bool(reasons), degraded_reasons=reasons,
        evidence=[e.item() for e in evidence],
        confidence=conf.level, confidence_score=conf.score, confidence_signals=conf.signals,
    )
    turn = {"question": state["question"], "standalone": plan.standalone, "answer": answer.text,
            "citations": [c.model_dump() for c in citations], "grounded": grounded, "subject": subject}
    return {"answer": answer, "turns": [turn]}
