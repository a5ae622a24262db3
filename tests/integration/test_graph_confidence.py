"""Confidence, candidates and citation numbering in real graph runs over the DocQL fixture repository."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from sift.graph.checkpointer import open_checkpointer
from sift.graph.models import NOT_FOUND, Answer
from sift.graph.writer.confidence import FEATURES, ConfidenceModel
from sift.graph.writer.uncertain import UNCERTAIN
from tests.conftest import ingested_repo
from tests.graph_doubles import LimitedService, SlowSearcher

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docql_repo"
# Models that rate every answer alike, so that a test decides the level the signals would give.
SURE = ConfidenceModel(intercept=10.0, weights=(0.0,) * len(FEATURES), medium=0.3, high=0.6)
UNSURE = ConfidenceModel(intercept=0.0, weights=(0.0,) * len(FEATURES), medium=0.3, high=0.6)
DOUBTFUL = ConfidenceModel(intercept=-10.0, weights=(0.0,) * len(FEATURES), medium=0.3, high=0.6)
QUESTION = "How are tokens validated?"


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    files = {p.relative_to(FIXTURE).as_posix(): p.read_text() for p in FIXTURE.rglob("*") if p.is_file()}
    with ingested_repo(tmp_path_factory.mktemp("confidence"), files, "shop", local_embedder) as ready:
        yield ready


def _ask(env, question: str, model: ConfidenceModel, delay_ms: dict[str, int] | None = None,
         timeout_ms: int = 5000, max_rounds: int = 1) -> Answer:
    settings, engine, searcher = env
    if delay_ms:
        searcher = SlowSearcher(searcher, delay_ms)

    async def go() -> Answer:
        async with open_checkpointer(settings) as saver:
            service = LimitedService(settings, engine, searcher, saver, confidence=model,
                                     limits={"channel_timeout_ms": timeout_ms, "max_rounds": max_rounds})
            return await service.ask(question, "shop")

    return asyncio.run(go())


def _assert_numbered(answer: Answer) -> None:
    """Markers 1..n in order of first use, and [k] is citation k and evidence item k."""
    marks = list(dict.fromkeys(int(m) for m in re.findall(r"\[(\d+)\]", answer.text)))
    assert marks == list(range(1, len(marks) + 1))
    assert [c.evidence_id for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    assert set(marks) == {c.evidence_id for c in answer.citations}
    evidence = {e.id: e for e in answer.evidence}
    assert sorted(evidence) == list(range(1, len(evidence) + 1))
    for c in answer.citations:
        e = evidence[c.evidence_id]
        assert (e.path, e.start_line, e.end_line) == (c.path, c.start_line, c.end_line)
    for path, items in answer.files.items():
        for item in items:
            assert evidence[item.evidence_id].path == path


def test_confident_answer_is_high_and_plain(env) -> None:
    answer = _ask(env, QUESTION, SURE)
    assert answer.grounded and not answer.degraded
    assert answer.confidence == "high" and answer.confidence_score > 0.99
    assert set(answer.confidence_signals) == set(FEATURES)
    assert not answer.text.startswith(UNCERTAIN)
    assert any(c.path == "src/shop/auth.py" for c in answer.citations)
    _assert_numbered(answer)


def test_degraded_run_is_never_high(env) -> None:
    # The same question and a model that rates everything high; the vector branch runs out of time.
    answer = _ask(env, QUESTION, SURE, delay_ms={"vector": 3000}, timeout_ms=400)
    assert answer.degraded and any(r.startswith("vector (round 0): timed out") for r in answer.degraded_reasons)
    assert answer.grounded
    assert answer.confidence == "medium"
    assert answer.text.startswith(UNCERTAIN)
    _assert_numbered(answer)


def test_uncertain_answer_lists_checked_candidates(env) -> None:
    answer = _ask(env, QUESTION, UNSURE)
    assert answer.confidence == "medium" and answer.confidence_score == 0.5
    assert answer.grounded and answer.text.startswith(UNCERTAIN)
    lines = [ln for ln in answer.text.splitlines() if ln.startswith("- ")]
    assert 2 <= len(lines) <= 3
    for n, line in enumerate(lines, 1):
        place = re.match(r"- .+ in (\S+):(\d+)-(\d+) \[(\d+)\]: .+\.$", line)
        assert place, line
        path, start, end, mark = place.groups()
        cited = next(c for c in answer.citations if c.evidence_id == int(mark))
        assert cited.valid and (cited.path, cited.start_line, cited.end_line) == (path, int(start), int(end))
        assert int(mark) == n  # the candidates are the first citations, in order
    assert "found by" in lines[0] and "validate_token" in lines[0]
    _assert_numbered(answer)


def test_not_found_stays_not_found_and_low(env) -> None:
    answer = _ask(env, "How do I configure Kubernetes autoscaling for the GraphQL gateway?", UNSURE)
    assert answer.text.startswith(NOT_FOUND) and not answer.grounded
    assert (answer.confidence, answer.confidence_score) == ("low", 0.0)
    assert UNCERTAIN not in answer.text and not answer.citations


def test_a_doubtful_yes_is_a_not_found_and_ends_the_search(env) -> None:
    # Whether the project can do something, answered from evidence rated low: no guess, and no further rounds.
    answer = _ask(env, "Can the shop validate tokens?", DOUBTFUL, max_rounds=3)
    assert answer.text.startswith(NOT_FOUND) and not answer.grounded
    assert "The closest matches (" in answer.text and UNCERTAIN not in answer.text
    assert (answer.confidence, answer.confidence_score) == ("low", 0.0)
    assert answer.rounds == 1 and answer.fallbacks == 0


@pytest.mark.parametrize("question", ["How are tokens validated?", "Is a bearer token validated against the shared secret?"])
def test_other_questions_rated_low_still_get_candidates(env, question: str) -> None:
    answer = _ask(env, question, DOUBTFUL)
    assert answer.grounded and answer.confidence == "low"
    assert answer.text.startswith(UNCERTAIN) and answer.citations
