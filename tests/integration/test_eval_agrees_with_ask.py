"""`sift eval --mode answer --concurrency 4` answers exactly as `sift ask` does, over the fixture repository.

Eval runs questions side by side on a busy machine, so it runs without wall-clock bounds (a branch that ran out
of time would answer differently); `sift ask` keeps its branch timeout, `SIFT_BRANCH_TIMEOUT_MS`, and names a
branch that ran out of it in the answer's `degraded_reasons`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sift.cli import main
from sift.config import Settings
from sift.ingest.pipeline import ingest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "answers_repo"
KB = "tally"
QUESTIONS = [
    ("refill", "Where is the token bucket refilled?"),
    ("empty", "What happens when the bucket is empty?"),
    ("jitter", "How is the jitter of backoff_delay applied?"),
    ("stores", "Which stores are available?"),
    ("duration", "What does formatDuration return?"),
    ("prometheus", "How do I export the limiter's metrics to Prometheus?"),
]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, local_embedder) -> Path:
    base = tmp_path_factory.mktemp("agree")
    repo = base / "tally"
    shutil.copytree(FIXTURE, repo)
    settings = Settings(data_dir=base / "data")
    ingest(settings, repo, KB, embedder=local_embedder)
    return settings.data_dir


def _ask(data_dir: Path, question: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["ask", question, "--kb", KB, "--json", "--data-dir", str(data_dir)]) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_at_concurrency_4_answers_as_ask_does(data_dir, tmp_path, capsys, monkeypatch):
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"id": i, "query": q, "kb": KB}) + "\n" for i, q in QUESTIONS))
    assert main(["eval", str(qs), "--mode", "answer", "--concurrency", "4", "--out", str(tmp_path / "out"),
                 "--name", "run", "--format", "json", "--data-dir", str(data_dir)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["aggregate"]["errors"] == 0
    assert summary["aggregate"]["degraded_answers"] == 0
    report = json.loads((tmp_path / "out" / "run.json").read_text())
    evaluated = {q["id"]: q["answer"] for q in report["questions"]}

    # A generous branch timeout keeps `sift ask`'s wall clock on without it running out on a loaded machine.
    monkeypatch.setenv("SIFT_BRANCH_TIMEOUT_MS", "60000")
    for qid, question in QUESTIONS:
        asked = _ask(data_dir, question, capsys)
        assert asked["degraded_reasons"] == []
        got = evaluated[qid]
        assert got["text"] == asked["text"], qid
        assert [(c["path"], c["start_line"], c["end_line"], c["evidence_id"]) for c in got["citations"]] == \
            [(c["path"], c["start_line"], c["end_line"], str(c["evidence_id"])) for c in asked["citations"]], qid
        assert (got["grounded"], got["confidence"]) == (asked["grounded"], asked["confidence"]), qid
    # The set is not trivial: some answers cite places, one is a "not found".
    assert sum(bool(a["citations"]) for a in evaluated.values()) >= 4
    assert evaluated["prometheus"]["citations"] == []


def test_branch_timeout_is_a_setting_and_a_timed_out_branch_is_named(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("SIFT_BRANCH_TIMEOUT_MS", "1")
    asked = _ask(data_dir, "Where is the token bucket refilled?", capsys)
    assert asked["degraded"] is True
    assert any("timed out after 1 ms" in reason for reason in asked["degraded_reasons"])
    assert asked["confidence"] != "high"
