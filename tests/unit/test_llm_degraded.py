"""A failed model answer's stand-in: the extractive draft, its note kept, so the run's course is the extractive
mode's (``graph/agent.degraded``, ``graph/nodes/check.searched_enough``, ``graph/nodes/finish.degraded_reasons``)."""

from __future__ import annotations

from typing import Any

import pytest

from sift.graph import agent
from sift.graph.models import Draft, DraftNote, Plan
from sift.graph.nodes.check import searched_enough
from sift.graph.nodes.finish import degraded_reasons

REASON = "the model's answer failed the evidence check (no valid citation); extractive answer"


def _state(**more: Any) -> dict[str, Any]:
    return {"plan": Plan(standalone="How is the cache sized?"), "evidence": [], "idf": {}, "kb": "kb", **more}


@pytest.mark.parametrize("note", [DraftNote.ABSENT_FROM_CORPUS, DraftNote.WEAK_YES, DraftNote.ABSENT_TERMS, None])
def test_the_stand_in_keeps_the_extractive_note(monkeypatch, note: DraftNote | None) -> None:
    written = Draft(text="Not found in the indexed sources.", not_found=note is not None, note=note)
    monkeypatch.setattr(agent, "write_extractive", lambda *args: written)
    update = agent.degraded(_state(tokens=5), REASON, 7)
    draft = update["draft"]
    assert draft.note == note and draft.not_found == written.not_found and draft.text == written.text
    assert (draft.degraded, draft.tokens, update["llm_failed"], update["tokens"]) == (True, 7, REASON, 12)


@pytest.mark.parametrize(("note", "rounds"), [
    (DraftNote.ABSENT_FROM_CORPUS, 0),  # the corpus lacks a question word: the search is over at once
    (DraftNote.WEAK_YES, 0),
    (DraftNote.ABSENT_TERMS, 1),  # its distinctive words are missing still after a second round
])
def test_the_search_ends_as_the_extractive_run_would(monkeypatch, note: DraftNote, rounds: int) -> None:
    monkeypatch.setattr(agent, "write_extractive", lambda *args: Draft(text="Not found.", not_found=True, note=note))
    state = _state(rounds=rounds)
    state.update(agent.degraded(state, REASON, 0))
    assert searched_enough(state, max_rounds=3)  # type: ignore[arg-type]


def test_the_model_failure_is_the_reason_given() -> None:
    draft = Draft(text="x", degraded=True, note=DraftNote.ABSENT_TERMS)
    assert degraded_reasons(_state(llm_failed=REASON), draft) == [f"llm: {REASON}"]  # type: ignore[arg-type]
    assert degraded_reasons(_state(), draft) == ["llm: failed"]  # type: ignore[arg-type]
    assert degraded_reasons(_state(llm_failed=REASON), draft, model=False) == []  # type: ignore[arg-type]
