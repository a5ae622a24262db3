"""Run reports (JSON + Markdown) and the comparison of two runs, including the `sift eval compare` command.

The runs are produced by ``run_eval`` over scripted retrieve/answer callables: test inputs that return fixed
hits per question so each outcome is known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from sift.cli import main
from sift.errors import InvalidQuery, NotFound
from sift.eval.compare import RunsDiffer, compare, load_run, render_comparison
from sift.eval.format import EvalQuestion, GoldSpan
from sift.eval.report import render_markdown, run_to_dict, worst_questions, write_reports
from sift.eval.runner import EvalRun, run_eval

GOLD = GoldSpan(path="src/a.py", start_line=10, end_line=20)
QUESTIONS = [
    EvalQuestion(id=f"q{i}", query=f"question {i}", kind="locate" if i % 2 else "doc", gold_spans=[GOLD],
                 answer_contains=["alpha"])
    for i in range(1, 7)
] + [EvalQuestion(id="neg", query="absent | feature", kind="negative")]


@dataclass
class ScriptedHit:
    path: str
    start_line: int
    end_line: int
    score: float = 1.0
    kind: str = "function"
    name: str = "f"


@dataclass
class ScriptedAnswer:
    text: str
    citations: list
    grounded: bool
    rounds: int = 1
    fallbacks: int = 0
    tokens: int = 10


def retrieve_gold_at_rank(ranks: dict[str, int | None], failing: frozenset[str] = frozenset()):
    """Test input: a retrieve function putting the gold span at the given rank (None: not at all)."""
    def retrieve(question: EvalQuestion, k: int) -> list[ScriptedHit]:
        if question.id in failing:
            raise TimeoutError("channel timed out")
        hits = [ScriptedHit("src/other.py", 1 + 10 * i, 5 + 10 * i, score=1 / (i + 1)) for i in range(5)]
        rank = ranks.get(question.id)
        if rank is not None:
            hits.insert(rank - 1, ScriptedHit("src/a.py", 12, 14))
        return hits[:k]
    return retrieve


def _run(ranks: dict[str, int | None], failing: frozenset[str] = frozenset()) -> EvalRun:
    return run_eval(QUESTIONS, mode="retrieval", retrieve=retrieve_gold_at_rank(ranks, failing), concurrency=2,
                    config={"kb": "demo", "kb_generation": 3})


RANKS_A = {"q1": 1, "q2": 2, "q3": 5, "q4": None, "q5": 1, "q6": 3}
RANKS_B = {"q1": 1, "q2": 4, "q3": 2, "q4": None, "q5": 1, "q6": 3}


def test_write_reports_json_holds_every_question_and_config(tmp_path: Path) -> None:
    run = _run(RANKS_A, failing=frozenset({"q6"}))
    json_path, md_path = write_reports(run, tmp_path / "runs", "base")
    assert (json_path.name, md_path.name) == ("base.json", "base.md")
    report = load_run(json_path)
    assert report["name"] == "base" and report["mode"] == "retrieval"
    assert report["config"]["kb_generation"] == 3 and report["config"]["k"] == 10
    assert report["versions"]["numpy"] and report["versions"]["python"]
    by_id = {q["id"]: q for q in report["questions"]}
    assert set(by_id) == {q.id for q in QUESTIONS}
    assert by_id["q2"]["metrics"]["span_mrr"] == 0.5
    assert by_id["q2"]["hits"][1] == {"path": "src/a.py", "start_line": 12, "end_line": 14, "score": 1.0,
                                      "kind": "function", "name": "f"}
    assert by_id["q6"]["error"] == "TimeoutError: channel timed out"
    assert by_id["q1"]["gold_spans"] == [{"path": "src/a.py", "start_line": 10, "end_line": 20}]
    assert report["aggregate"]["errors"] == 1 and set(report["by_kind"]) == {"doc", "locate", "negative"}


def test_worst_questions_errors_first_then_lowest_mrr() -> None:
    run = _run(RANKS_A, failing=frozenset({"q6"}))
    assert [r.id for r in worst_questions(run)] == ["q6", "q4", "q3", "q2", "q1"]


def test_render_markdown_has_tables_and_worst_questions() -> None:
    run = _run(RANKS_A, failing=frozenset({"q6"}))
    md = render_markdown(run, "base")
    assert md.startswith("# Evaluation run `base`")
    assert "| span_mrr | 0.540 |" in md  # (1 + 1/2 + 1/5 + 0 + 1) / 5
    assert "| locate | 3 | 0 |" in md and "| doc | 3 | 1 |" in md
    assert "### `q6` (doc)" in md and "**error:** `TimeoutError: channel timed out`" in md
    assert "| 1 | src/other.py:1-5 | function | f | 1.000 |" in md


def test_render_markdown_escapes_pipes_in_queries() -> None:
    run = run_eval(QUESTIONS[-1:], mode="retrieval", retrieve=retrieve_gold_at_rank({}))
    assert "absent \\| feature" in render_markdown(run, "neg")


def test_compare_reports_deltas_and_changed_outcomes(tmp_path: Path) -> None:
    a_json, _ = write_reports(_run(RANKS_A), tmp_path, "a")
    b_json, _ = write_reports(_run(RANKS_B, failing=frozenset({"q5"})), tmp_path, "b")
    result = compare(a_json, b_json)
    assert result["a"]["name"] == "a" and result["b"]["name"] == "b"
    span_hit = result["aggregate"]["span_hit@3"]
    # a: q1 q2 q5 q6 hit of 6 questions; b: q1 q3 q6 of 5 (q5 errors)
    assert span_hit["a"] == pytest.approx(4 / 6) and span_hit["b"] == pytest.approx(3 / 5)
    assert span_hit["delta"] == pytest.approx(3 / 5 - 4 / 6)
    assert result["aggregate"]["errors"] == {"a": 0, "b": 1, "delta": 1}
    changed = {(c["id"], c["outcome"]): c["change"] for c in result["changed"]}
    assert changed == {("q2", "span_hit@3"): "lost", ("q3", "span_hit@3"): "won", ("q5", "error"): "now errors"}
    # doc questions q2, q4, q6: span MRR 1/2, 0, 1/3 in a and 1/4, 0, 1/3 in b
    assert result["by_kind"]["doc"]["span_mrr"]["delta"] == pytest.approx((1 / 4 - 1 / 2) / 3)
    text = render_comparison(result)
    assert "questions that changed outcome: 3" in text
    assert "lost        span_hit@3         q2  (1.000 -> 0.000)" in text
    assert "errors" in text and "+1.000  worse" in text


def test_compare_pairs_the_questions_both_runs_scored(tmp_path: Path) -> None:
    a_json, _ = write_reports(_run(RANKS_A), tmp_path, "a")
    b_json, _ = write_reports(_run(RANKS_B, failing=frozenset({"q5"})), tmp_path, "b")
    paired = compare(a_json, b_json)["paired"]
    # q5 errors in b and the negative has no spans: five pairs. q2 lost its top-3 hit and q3 won one.
    assert paired["span_hit@3"]["questions"] == 5 and paired["span_hit@3"]["delta"] == 0.0
    assert paired["span_hit@3"]["low"] < 0.0 < paired["span_hit@3"]["high"]
    # span MRR: q2 1/2 -> 1/4, q3 1/5 -> 1/2, the others unchanged
    assert paired["span_mrr"]["delta"] == pytest.approx((1 / 4 - 1 / 2 + 1 / 2 - 1 / 5) / 5)
    assert "answer_hit" not in paired  # a retrieval run scores no answers
    text = render_comparison(compare(a_json, b_json))
    assert "paired over the questions both runs scored" in text
    assert "span_hit@3  +0.000 [" in text and "]  5 questions" in text


def test_compare_answer_hit_flip() -> None:
    def answer_with(text: str):
        def answer(question: EvalQuestion) -> ScriptedAnswer:
            return ScriptedAnswer(text, [("src/a.py", 12, 12, "1")], True)
        return answer

    a = run_eval(QUESTIONS[:1], mode="answer", answer=answer_with("Alpha it is [1]."))
    b = run_eval(QUESTIONS[:1], mode="answer", answer=answer_with("Beta [1]."))
    result = compare(run_to_dict(a, "a"), run_to_dict(b, "b"))
    assert {"id": "q1", "kind": "locate", "outcome": "answer_hit", "a": 1.0, "b": 0.0, "change": "lost"} in result["changed"]
    assert result["aggregate"]["answer_hit"]["delta"] == -1.0


@pytest.mark.parametrize(
    ("content", "error"),
    [(None, NotFound), ("{oops", InvalidQuery), ('{"questions": []}', InvalidQuery)],
)
def test_load_run_rejects_missing_or_foreign_files(tmp_path: Path, content: str | None, error: type) -> None:
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(error):
        load_run(path)


def test_cli_eval_compare_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_json, _ = write_reports(_run(RANKS_A), tmp_path, "a")
    b_json, _ = write_reports(_run(RANKS_B), tmp_path, "b")
    assert main(["eval", "compare", str(a_json), str(b_json)]) == 0
    assert "questions that changed outcome: 2" in capsys.readouterr().out
    assert main(["eval", "compare", str(a_json), str(b_json), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["id"] for c in data["changed"]} == {"q2", "q3"}
    assert main(["eval", "compare", str(a_json)]) == 2
    assert main(["eval", "compare", str(a_json), str(tmp_path / "missing.json")]) == 1


def _retrieval_run(questions: list[EvalQuestion]) -> dict:
    run = run_eval(questions, mode="retrieval", retrieve=retrieve_gold_at_rank(RANKS_A))
    return run_to_dict(run, "r")


def test_compare_refuses_runs_over_different_sets_or_modes_unless_forced(tmp_path: Path) -> None:
    full = _retrieval_run(QUESTIONS)
    fewer = _retrieval_run(QUESTIONS[:4])
    with pytest.raises(RunsDiffer, match=r"question sets differ \(3 only in A, 0 only in B, 0 changed\).*the 4 "):
        compare(full, fewer)
    answers = run_to_dict(run_eval(QUESTIONS, mode="answer", answer=lambda q: ScriptedAnswer(
        "alpha [1].", [("src/a.py", 12, 12, "1")], True)), "ans")
    with pytest.raises(RunsDiffer, match=r"modes differ \(retrieval vs answer\)"):
        compare(full, answers)
    edited = [q.model_copy(update={"query": "reworded"}) if q.id == "q1" else q for q in QUESTIONS]
    with pytest.raises(RunsDiffer, match="1 changed"):
        compare(full, _retrieval_run(edited))
    forced = compare(full, fewer, force=True)
    assert forced["compared"] == 4 and forced["differences"]
    # aggregates are recomputed over the shared questions: identical runs on them, so no delta but latency
    assert forced["aggregate"]["questions"] == {"a": 4, "b": 4, "delta": 0}
    assert full["aggregate"]["span_mrr"] != forced["aggregate"]["span_mrr"]["a"]
    assert all(v["delta"] in (0, None) for n, v in forced["aggregate"].items() if not n.startswith("latency"))
    assert "compared the 4 question(s) both runs share" in render_comparison(forced)
    assert compare(full, _retrieval_run(QUESTIONS))["compared"] == len(QUESTIONS)


def test_cli_eval_compare_refuses_mismatched_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_json, _ = write_reports(_run(RANKS_A), tmp_path, "a")
    short = run_eval(QUESTIONS[:3], mode="retrieval", retrieve=retrieve_gold_at_rank(RANKS_B))
    b_json, _ = write_reports(short, tmp_path, "b")
    assert main(["eval", "compare", str(a_json), str(b_json)]) == 1
    assert "pass --force to compare the 3 question(s)" in capsys.readouterr().err.lower()
    assert main(["eval", "compare", str(a_json), str(b_json), "--force"]) == 0
    out = capsys.readouterr().out
    assert "forced: question sets differ (4 only in A, 0 only in B, 0 changed)" in out
    assert "compared the 3 question(s) both runs share" in out


def test_report_shows_metadata_and_groups_by_a_metadata_key(tmp_path: Path) -> None:
    questions = [q.model_copy(update={"meta": {"difficulty": "hard" if i < 2 else "easy"}})
                 for i, q in enumerate(QUESTIONS[:4])]
    run = run_eval(questions, mode="retrieval", retrieve=retrieve_gold_at_rank(RANKS_A), by="difficulty")
    assert set(run.by_group) == {"easy", "hard"}
    assert run.by_group["hard"]["questions"] == 2 and run.by_group["hard"]["span_hit@3"] == 1.0
    json_path, md_path = write_reports(run, tmp_path, "meta")
    report = json.loads(json_path.read_text(encoding="utf-8"))
    assert report["by"] == "difficulty" and report["questions"][0]["meta"] == {"difficulty": "hard"}
    markdown = md_path.read_text(encoding="utf-8")
    assert "## By difficulty" in markdown and "| hard | 2 | 0 |" in markdown
    assert '- metadata: difficulty="easy"' in markdown


@dataclass
class RatedAnswer(ScriptedAnswer):
    confidence: str | None = None
    confidence_score: float | None = None


def test_report_tables_confidence_calibration(tmp_path: Path) -> None:
    def answer(question: EvalQuestion) -> RatedAnswer:
        if question.kind == "negative":
            return RatedAnswer("Not found in the indexed sources.", [], False, confidence="low", confidence_score=0.0)
        right = question.id in ("q1", "q2", "q3")
        text = "Alpha it is [1]." if right else "Beta [1]."
        level = "high" if question.id in ("q1", "q2", "q4") else "medium"
        return RatedAnswer(text, [("src/a.py", 12, 12, "1")], True, confidence=level, confidence_score=0.5)

    run = run_eval(QUESTIONS, mode="answer", answer=answer)
    assert [r.answer.confidence for r in run.results][:2] == ["high", "high"]
    doc = run_to_dict(run, "rated")
    high, medium, low = (doc["calibration"][k] for k in ("high", "medium", "low"))
    assert high == {"answers": 3, "share": pytest.approx(3 / 7), "share_answerable": 0.5,
                    "right": pytest.approx(2 / 3)}
    assert (medium["answers"], medium["right"]) == (3, pytest.approx(1 / 3))
    assert (low["answers"], low["share_answerable"], low["right"]) == (1, 0.0, 1.0)  # the negative, not found
    md = render_markdown(run, "rated")
    assert "## Confidence" in md and "| high | 3 | 0.429 | 0.500 | 0.667 |" in md


def test_report_without_confidence_has_no_calibration() -> None:
    run = run_eval(QUESTIONS[:1], mode="answer",
                   answer=lambda q: ScriptedAnswer("Alpha [1].", [("src/a.py", 12, 12, "1")], True))
    assert run_to_dict(run, "plain")["calibration"] is None and "## Confidence" not in render_markdown(run, "plain")
