"""Whole offline answers over a small fixture repository, compared with committed snapshots a person has read.

Each snapshot in ``tests/snapshots/answers/<name>.md`` holds one question and the complete answer the real graph
gives in extractive mode (real SQLite, FAISS, tree-sitter and the local MiniLM model, over
``tests/fixtures/answers_repo``): its text, citations and confidence. The run has no wall-clock limits
(``RunLimits(wall_clock=False)``), so a busy machine gives the same answer. A test fails on any difference and
prints a unified diff.

To accept changed answers, regenerate the files and read every diff before committing it::

    SIFT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/integration/test_answer_snapshots.py -n 0

The questions cover each question type the planner knows (locate, explain, doc, list, follow-up, chit-chat), docs
and code that agree, docstring field lists (reST, JSDoc), an uncertain answer with candidate places, a
"not found", and a question in words the sources never use that is answered, uncertainly, from a place close
to it in meaning.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from sift.graph.checkpointer import open_checkpointer
from sift.graph.context import RunLimits
from sift.graph.models import Answer
from sift.graph.service import AskService
from tests.conftest import ingested_repo

TESTS = Path(__file__).resolve().parents[1]
FIXTURE = TESTS / "fixtures" / "answers_repo"
SNAPSHOTS = TESTS / "snapshots" / "answers"
KB = "tally"
UPDATE = os.environ.get("SIFT_UPDATE_SNAPSHOTS") == "1"


@dataclass(frozen=True)
class Case:
    """One snapshot: its file name, the question, and the questions asked before it on the same thread."""

    name: str
    question: str
    before: tuple[str, ...] = ()


CASES = [
    Case("locate-refill", "Where is the token bucket refilled?"),
    Case("explain-empty-bucket", "What happens when the bucket is empty?"),
    Case("explain-jitter", "How is the jitter of backoff_delay applied?"),
    Case("doc-retry-delay", "How do I change the retry delay?"),
    Case("doc-share-processes", "How can I share one limit between worker processes?"),
    Case("list-stores", "Which stores are available?"),
    Case("follow-up-used", "Where is it used?", before=("What does backoff_delay compute?",)),
    Case("jsdoc-format-duration", "What does formatDuration return?"),
    Case("locate-vague-words", "Which function shows wait times?"),
    Case("not-found", "How do I export the limiter's metrics to Prometheus?"),
    # in words the sources never use, but the first place found says the same: uncertain, not "not found"
    Case("near-in-meaning", "Does the in-memory bucket state vanish when the interpreter quits?"),
    Case("chit-chat", "hello"),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    files = {p.relative_to(FIXTURE).as_posix(): p.read_text() for p in FIXTURE.rglob("*") if p.is_file()}
    with ingested_repo(tmp_path_factory.mktemp("answers"), files, KB, local_embedder) as ready:
        yield ready


def _ask(env, case: Case) -> Answer:
    settings, engine, searcher = env

    async def go() -> Answer:
        async with open_checkpointer(settings) as saver:
            service = AskService(settings, engine, searcher, saver, limits=RunLimits(wall_clock=False))
            thread = None
            for question in case.before:
                thread = (await service.ask(question, KB, thread_id=thread)).thread_id
            return await service.ask(case.question, KB, thread_id=thread)

    return asyncio.run(go())


def render(case: Case, answer: Answer) -> str:
    """The snapshot text: the question (and the turns before it), the answer, its citations and confidence."""
    plan = answer.plan.question_type if answer.plan else "?"
    lines = [f"# {case.name}", ""]
    lines += [f"Asked before on the thread: {q}" for q in case.before]
    lines += [f"Question: {case.question}", f"Planned as: {plan}", "", "## Answer", "", answer.text.strip(), ""]
    lines += ["## Citations", ""]
    lines += [f"[{c.evidence_id}] {c.path}:{c.start_line}-{c.end_line}" for c in answer.citations] or ["(none)"]
    lines += ["", f"Confidence: {answer.confidence}", f"Grounded: {'yes' if answer.grounded else 'no'}", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_answer_snapshot(env, case: Case) -> None:
    live = render(case, _ask(env, case))
    path = SNAPSHOTS / f"{case.name}.md"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(live)
        return
    assert path.exists(), f"no snapshot {path}; create it with SIFT_UPDATE_SNAPSHOTS=1 and read it"
    saved = path.read_text()
    if live != saved:
        diff = "".join(difflib.unified_diff(saved.splitlines(True), live.splitlines(True),
                                            f"{path.name} (committed)", f"{path.name} (live)"))
        pytest.fail(f"the answer differs from its snapshot:\n{diff}", pytrace=False)


def test_snapshots_have_no_strays() -> None:
    # A snapshot whose case was removed or renamed would never be compared again.
    assert {p.stem for p in SNAPSHOTS.glob("*.md")} == {c.name for c in CASES}
