"""A failed model answer's stand-in: the extractive draft, its note kept, so the run's course is the extractive
mode's (``graph/agent.degraded``, ``graph/nodes/check.searched_enough``, ``graph/nodes/finish.degraded_reasons``)."""

from __future__ import annotations

from typing import Any

import pytest

from sift.graph import agent
from sift.graph.models import Draft, DraftNote, Plan, Verdict
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


@pytest.mark.parametrize(("ok", "extractive_found", "stands"), [
    (True, True, True),  # checked, and the evidence holds an answer: the model's words stand
    (True, False, False),  # checked, but the extractive writer abstains on the same evidence: not the model's call
    (False, True, False),  # failed the check
    (False, False, False),
])
def test_a_model_answer_stands_only_checked_and_where_the_evidence_holds_an_answer(
        monkeypatch, ok: bool, extractive_found: bool, stands: bool) -> None:
    written = Draft(text="x" if extractive_found else "Not found.", not_found=not extractive_found,
                    note=None if extractive_found else DraftNote.ABSENT_FROM_CORPUS)
    monkeypatch.setattr(agent, "write_extractive", lambda *args: written)
    verdict = Verdict(ok=ok, valid=[1] if ok else [], problems=[] if ok else ["[1] names no evidence"])
    update = agent.set_aside(_state(), verdict)  # type: ignore[arg-type]
    assert (update is None) is stands
    if update is not None:
        assert update["draft"].text == written.text and update["draft"].note == written.note
        assert ("failed the evidence check" in update["llm_failed"]) is (not ok)
