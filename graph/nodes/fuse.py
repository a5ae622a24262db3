"""The fuse node: this round's branches fused, deduplicated, loaded as exact lines and numbered [1]…[n]; for a
list question, the module or family of classes it asks for joins the evidence."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from sift.graph.context import AskContext
from sift.graph.models import Evidence, Plan
from sift.graph.progress import emit, fused
from sift.graph.retrieval import (
    build_evidence,
    family_evidence,
    fuse_results,
    leading_hits,
    module_evidence,
    term_idf,
)
from sift.graph.state import AskState, reset
from sift.graph.writer import (
    MODULE_CHANNEL,
    TOP_RANKS,
    family_nouns,
    list_anchor,
    module_listing,
    top_channels,
    without_bases,
)
from sift.retrievers.search import COPY_DEPTH


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
    emit(runtime, fused(evidence))
    return {"evidence": reset(evidence), "idf": idf}


def with_family(ctx: AskContext, kb: str, tenant: str, plan: Plan, ev: list[Evidence]) -> list[Evidence]:
    """``ev`` with the family of classes a list question asks for (``selection.family_nouns``, the first noun
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
