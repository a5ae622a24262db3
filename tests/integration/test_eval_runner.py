"""The batch runner over a tiny question set in both modes, with malformed input and failing questions.

The retrieve and answer callables here are scripted test inputs for the runner (it takes any callable): each
returns fixed hits or answers per question id so the expected metrics can be computed by hand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sift.cli import main
from sift.eval.format import EvalQuestion, GoldSpan, load_questions
from sift.eval.report import write_reports
from sift.eval.runner import CitationRecord, HitRecord, run_eval, to_citation, to_hit
from sift.models import Hit

QUESTIONS = [
    EvalQuestion(id="find-evolve", query="copy with changes", kind="locate", gold_files=["src/make.py"],
                 gold_spans=[GoldSpan(path="src/make.py", start_line=10, end_line=20)], answer_contains=["evolve"]),
    EvalQuestion(id="doc-frozen", query="immutable classes", kind="doc",
                 gold_spans=[GoldSpan(path="docs/frozen.md", start_line=1, end_line=30),
                             GoldSpan(path="src/make.py", start_line=100, end_line=120)],
                 answer_contains=["frozen", "FrozenInstanceError"]),
    EvalQuestion(id="neg-orm", query="built-in ORM", kind="negative"),
    EvalQuestion(id="boom", query="this one raises", kind="locate", gold_files=["src/make.py"]),
]


def _hit(path: str, start: int, end: int, rank: int) -> Hit:
    return Hit(chunk_id=rank, node_id=None, path=path, start_line=start, end_line=end, kind="function",
               name=f"chunk{rank}", score=1.0 / rank, channel="scripted", rank=rank)


SCRIPTED_HITS = {
    "find-evolve": [("src/other.py", 1, 5), ("src/make.py", 12, 18), ("src/make.py", 14, 16)],
    "doc-frozen": [("docs/frozen.md", 5, 9), ("README.md", 1, 3), ("docs/other.md", 1, 2), ("src/make.py", 110, 111)],
    "neg-orm": [("README.md", 1, 3)],
}


def scripted_retrieve(question: EvalQuestion, k: int) -> list[Hit]:
    """Test input: the scripted hits of a question, or an error for the question meant to fail."""
    if question.id == "boom":
        raise RuntimeError("index file missing")
    return [_hit(p, s, e, rank) for rank, (p, s, e) in enumerate(SCRIPTED_HITS[question.id], start=1)][:k]


@dataclass
class ScriptedCitation:
    path: str
    start_line: int
    end_line: int
    evidence_id: str
    valid: bool


@dataclass
class ScriptedAnswer:
    text: str
    citations: list
    grounded: bool
    rounds: int = 1
    fallbacks: int = 0
    tokens: int = 0
    evidence: list = field(default_factory=list)


def scripted_answer(question: EvalQuestion) -> ScriptedAnswer:
    """Test input: a fixed answer per question id; ``boom`` raises."""
    evidence = scripted_retrieve(question, 10)
    if question.id == "find-evolve":
        return ScriptedAnswer("Use `evolve` [1].", [("src/make.py", 12, 18, "1")], True, evidence=evidence)
    if question.id == "doc-frozen":
        citations = [ScriptedCitation("docs/frozen.md", 5, 9, "1", True), ScriptedCitation("README.md", 1, 3, "2", False)]
        return ScriptedAnswer("Pass frozen=True [1][2].", citations, True, rounds=2, fallbacks=1, tokens=300,
                              evidence=evidence)
    return ScriptedAnswer("That is not found in the indexed sources.", [], False, rounds=3, fallbacks=2,
                          evidence=evidence)


def _by_id(run) -> dict:
    return {r.id: r for r in run.results}


def test_run_eval_retrieval_mode_scores_each_question() -> None:
    run = run_eval(QUESTIONS, mode="retrieval", retrieve=scripted_retrieve, k=10, concurrency=2)
    results = _by_id(run)
    assert [r.id for r in run.results] == [q.id for q in QUESTIONS]  # set order kept despite concurrency
    evolve = results["find-evolve"].metrics
    assert evolve["file_mrr"] == 0.5 and evolve["span_mrr"] == 0.5
    assert evolve["span_recall@1"] == 0.0 and evolve["span_recall@3"] == 1.0
    assert evolve["duplicate_rate"] == pytest.approx(1 / 3)
    frozen = results["doc-frozen"].metrics
    assert frozen["span_recall@3"] == 0.5 and frozen["span_recall@10"] == 1.0
    assert frozen["file_recall@1"] == 0.5  # gold files come from the gold spans
    assert results["neg-orm"].metrics["span_mrr"] is None  # no gold: undefined, not zero
    assert run.aggregate["questions"] == 4 and run.aggregate["errors"] == 1
    assert run.aggregate["span_mrr"] == pytest.approx((0.5 + 1.0) / 2)
    assert run.by_kind["locate"]["errors"] == 1 and run.by_kind["doc"]["span_recall@10"] == 1.0
    assert run.aggregate["latency_p95_ms"] >= run.aggregate["latency_p50_ms"] >= 0
    assert "answer_hit" not in run.aggregate


def test_run_eval_records_a_raising_question_and_goes_on() -> None:
    seen = []
    run = run_eval(QUESTIONS, mode="retrieval", retrieve=scripted_retrieve, concurrency=1, progress=seen.append)
    boom = _by_id(run)["boom"]
    assert boom.error == "RuntimeError: index file missing"
    assert boom.metrics == {} and boom.latency_ms is not None
    assert sorted(r.id for r in seen) == sorted(q.id for q in QUESTIONS)


def test_run_eval_answer_mode_scores_answers() -> None:
    run = run_eval(QUESTIONS, mode="answer", answer=scripted_answer, concurrency=3)
    results = _by_id(run)
    evolve, frozen, neg = (results[i].metrics for i in ("find-evolve", "doc-frozen", "neg-orm"))
    assert evolve["answer_hit"] == 1.0 and evolve["citation_precision"] == 1.0
    assert evolve["citation_validity"] is None  # tuple citations carry no checker verdict
    assert frozen["answer_hit"] == 0.0  # "FrozenInstanceError" is missing
    assert frozen["citation_precision"] == 0.5 and frozen["citation_validity"] == 0.5
    assert frozen["span_recall@10"] == 1.0  # retrieval metrics come from the answer's evidence
    assert neg["not_found_accuracy"] == 1.0 and neg["answer_hit"] is None
    assert run.aggregate["grounded"] == pytest.approx(2 / 3)
    assert run.aggregate["fallback"] == pytest.approx(2 / 3)
    assert run.aggregate["rounds"] == pytest.approx(2.0)
    assert run.aggregate["errors"] == 1
    assert results["find-evolve"].answer.citations[0].evidence_id == "1"


def test_run_eval_runs_questions_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=5)

    def retrieve_waiting_for_each_other(question: EvalQuestion, k: int) -> list[Hit]:
        barrier.wait()  # raises BrokenBarrierError unless both questions are in flight together
        return []

    run = run_eval(QUESTIONS[:2], mode="retrieval", retrieve=retrieve_waiting_for_each_other, concurrency=2)
    assert run.aggregate["errors"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "retrieval"}, "retrieve function"),
        ({"mode": "answer", "retrieve": scripted_retrieve}, "answer function"),
        ({"mode": "both", "retrieve": scripted_retrieve}, "mode must be"),
        ({"mode": "retrieval", "retrieve": scripted_retrieve, "k": 0}, "at least 1"),
    ],
)
def test_run_eval_rejects_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_eval(QUESTIONS, **kwargs)


@pytest.mark.parametrize(
    ("citation", "expected"),
    [
        (("a.py", 1, 2, 7), CitationRecord("a.py", 1, 2, "7", None)),
        ({"path": "a.py", "start_line": 1, "end_line": 2, "evidence_id": 3, "valid": False},
         CitationRecord("a.py", 1, 2, "3", False)),
        (ScriptedCitation("a.py", 1, 2, "1", True), CitationRecord("a.py", 1, 2, "1", True)),
    ],
)
def test_to_citation_accepts_tuples_mappings_and_objects(citation: object, expected: CitationRecord) -> None:
    assert to_citation(citation) == expected


def test_to_hit_accepts_evidence_mappings() -> None:
    evidence = {"id": 1, "path": "a.py", "start_line": 3, "end_line": 9, "kind": "doc", "name": "Intro", "score": 0.5}
    assert to_hit(evidence) == HitRecord("a.py", 3, 9, 0.5, "doc", "Intro")


MALFORMED = "\n".join([
    json.dumps({"id": "ok-1", "query": "copy with changes", "gold_files": ["src/make.py"]}),
    "{not json",
    json.dumps({"id": "bad-span", "query": "q", "gold_spans": [{"path": "a.py", "start_line": 9, "end_line": 2}]}),
    "",
    json.dumps({"id": "ok-2", "query": "immutable classes", "kind": "doc"}),
])


def test_malformed_set_reports_lines_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(MALFORMED, encoding="utf-8")
    questions, line_errors = load_questions(path)
    assert [q.id for q in questions] == ["ok-1", "ok-2"]
    assert [e.line for e in line_errors] == [2, 3]

    def retrieve_make_py(question: EvalQuestion, k: int) -> list[Hit]:
        return [_hit("src/make.py", 1, 5, 1)]

    run = run_eval(questions, mode="retrieval", retrieve=retrieve_make_py, line_errors=line_errors)
    json_path, md_path = write_reports(run, tmp_path / "out", "malformed")
    report = json.loads(json_path.read_text(encoding="utf-8"))
    assert [e["line"] for e in report["line_errors"]] == [2, 3]
    assert report["aggregate"]["file_mrr"] == 1.0
    assert "line 3: " in md_path.read_text(encoding="utf-8")


def test_cli_eval_strict_fails_on_the_first_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(MALFORMED, encoding="utf-8")
    code = main(["eval", str(path), "--kb", "demo", "--strict", "--data-dir", str(tmp_path / "data")])
    assert code == 1
    assert "line 2" in capsys.readouterr().err


def test_cli_eval_missing_set_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tmp_path / "nope.jsonl"), "--kb", "demo"]) == 1
    assert "does not exist" in capsys.readouterr().err


TINY_SET = "\n".join([
    json.dumps({"id": "tiny-token", "query": "How are bearer tokens validated?", "kind": "locate",
                "gold_spans": [{"path": "pkg/auth.py", "start_line": 12, "end_line": 14}]}),
    '{"id": "broken", "query": 3}',
    json.dumps({"id": "tiny-rotate", "query": "How often should the secret be rotated?", "kind": "doc",
                "gold_spans": [{"path": "docs/guide.md", "start_line": 13, "end_line": 15}]}),
    json.dumps({"id": "tiny-neg", "query": "Which database drivers are supported?", "kind": "negative"}),
])


@pytest.mark.slow
def test_cli_eval_retrieval_over_an_ingested_repo(
    tiny_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "data", tmp_path / "runs"
    assert main(["ingest", str(tiny_repo), "--kb", "tiny", "--data-dir", str(data)]) == 0
    set_path = tmp_path / "tiny.jsonl"
    set_path.write_text(TINY_SET, encoding="utf-8")
    capsys.readouterr()
    code = main(["eval", str(set_path), "--kb", "tiny", "--data-dir", str(data), "--out", str(out),
                 "--name", "tiny", "--concurrency", "2", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"{set_path}:2: skipped" in captured.err
    summary = json.loads(captured.out)
    assert summary["line_errors"] == 1 and summary["aggregate"]["questions"] == 3
    assert summary["aggregate"]["errors"] == 0
    report = json.loads((out / "tiny.json").read_text(encoding="utf-8"))
    assert report["config"]["kb_generation"] == 1
    by_id = {q["id"]: q for q in report["questions"]}
    # The tiny repository has a handful of chunks, so every gold file is somewhere in the top 10.
    assert by_id["tiny-token"]["metrics"]["file_recall@10"] == 1.0
    assert by_id["tiny-rotate"]["metrics"]["file_recall@10"] == 1.0
    assert all(h["path"] != "ignored.py" for q in report["questions"] for h in q["hits"])
    assert (out / "tiny.md").read_text(encoding="utf-8").startswith("# Evaluation run `tiny`")


def test_cli_eval_with_no_question_left_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join([json.dumps({"id": "a", "query": "q", "gold_span": []}),
                               json.dumps({"id": "b", "query": "q", "querry": "q"})]) + "\n", encoding="utf-8")
    code = main(["eval", str(path), "--kb", "demo", "--data-dir", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "did you mean 'gold_spans'" in err and "has no question to evaluate (2 line(s) skipped" in err
    path.write_text("\n\n", encoding="utf-8")
    assert main(["eval", str(path), "--kb", "demo", "--data-dir", str(tmp_path / "data")]) == 1
    assert "has no question to evaluate (0 line(s) skipped" in capsys.readouterr().err


def test_cli_eval_by_an_absent_key_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"id": "a", "query": "q", "notes": "n", "corpus": "attrs"}) + "\n", encoding="utf-8")
    assert main(["eval", str(path), "--kb", "demo", "--by", "difficulty", "--data-dir", str(tmp_path / "d")]) == 2
    assert "--by difficulty: no question has that key; use kind or one of corpus, notes" in capsys.readouterr().err


def test_cli_eval_non_utf8_set_is_a_user_error_naming_the_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.jsonl"
    first = json.dumps({"id": "a", "query": "q"}).encode() + b"\n"
    path.write_bytes(first + json.dumps({"id": "b", "query": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    code = main(["eval", str(path), "--kb", "demo", "--data-dir", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 1, err
    offset = len(first) + len(b'{"id": "b", "query": "caf')
    assert f"is not UTF-8: byte 0xe9 at offset {offset} (line 2)" in err
    assert "Traceback" not in err


def test_run_eval_ctrl_c_cancels_the_rest_and_returns_the_answered_as_partial(tmp_path: Path) -> None:
    questions = [EvalQuestion(id=f"q{i}", query=f"question {i}", kind="locate", gold_files=["src/make.py"])
                 for i in range(300)]
    started: list[str] = []
    lock = threading.Lock()

    def retrieve(question: EvalQuestion, k: int) -> list[Hit]:
        with lock:
            started.append(question.id)
            if len(started) == 10:
                os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered to the main thread
        time.sleep(0.01)
        return [_hit("src/make.py", 1, 5, 1)]

    run = run_eval(questions, mode="retrieval", retrieve=retrieve, concurrency=2)
    assert run.partial is True and run.set_size == 300
    # No question starts after the interrupt is handled; those already running finish and are kept.
    assert 10 <= len(started) <= 20, len(started)
    assert sorted(r.id for r in run.results) == sorted(started)
    assert all(r.error is None and r.metrics["file_mrr"] == 1.0 for r in run.results)
    json_path, md_path = write_reports(run, tmp_path, "cut")
    report = json.loads(json_path.read_text(encoding="utf-8"))
    assert (report["partial"], report["set_size"], report["aggregate"]["questions"]) == (True, 300, len(started))
    assert f"**Partial run**: interrupted after {len(started)} of 300 questions" in md_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_cli_eval_sigint_writes_a_partial_report_and_exits_130(tiny_repo: Path, tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "runs"
    assert main(["ingest", str(tiny_repo), "--kb", "tiny", "--data-dir", str(data)]) == 0
    set_path = tmp_path / "many.jsonl"
    set_path.write_text("".join(json.dumps({"id": f"q{i}", "query": f"how are bearer tokens validated {i}",
                                            "gold_files": ["pkg/auth.py"]}) + "\n" for i in range(20_000)))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("sift")), "-v", "eval", str(set_path), "--kb", "tiny", "--data-dir",
         str(data), "--out", str(out), "--name", "cut", "--concurrency", "2"],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:  # the runner logs the start of the timed run
        if "eval: 20000 questions" in line:
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "questions answered; the reports above are marked partial" in err
    report = json.loads((out / "cut.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["set_size"] == 20_000
    assert 0 < len(report["questions"]) < 20_000
    assert report["aggregate"]["errors"] == 0
    assert (out / "cut.md").read_text(encoding="utf-8").count("**Partial run**") == 1
