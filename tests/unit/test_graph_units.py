"""Pure parts of the graph: the evidence reducer, planning rules, the citation checker, fallback strategies."""

from __future__ import annotations

import pytest

from sift.graph.checker import FileFacts, check_draft, cited_ids, identifier_supported, strip_unsupported
from sift.graph.models import Citation, Draft, Evidence, Plan
from sift.graph.planner import plan_question, question_type, rewrite_follow_up, split_question
from sift.graph.state import merge_items, reset
from sift.graph.strategies import next_plan
from sift.graph.writer.doc_quotes import plain

EV = Evidence(id=1, path="pkg/auth.py", start_line=12, end_line=14, kind="method", name="AuthService.validate_token",
              score=1.0, text="    def validate_token(self, token: str) -> bool:\n        return hmac.compare_digest("
              "token, self.secret)", content_hash="h1")
FACTS = {"pkg/auth.py": FileFacts(21, "h1")}


@pytest.mark.parametrize(("current", "update", "expected"), [
    ([], [EV], [EV]),
    ([EV], [EV], [EV]),  # duplicates by key are dropped
    ([EV], reset(), []),
    ([EV], reset([EV.model_copy(update={"id": 2, "start_line": 1})]), [EV.model_copy(update={"id": 2, "start_line": 1})]),
    (None, None, []),
])
def test_merge_items_extends_or_resets(current, update, expected) -> None:
    assert merge_items(current, update) == expected


@pytest.mark.parametrize(("question", "history", "expected"), [
    ("hello!", False, "chit-chat"),
    ("thanks so much", False, "chit-chat"),
    ("Where is validate_token defined?", False, "locate"),
    ("How does the token check work?", False, "explain"),
    ("How do I rotate the secret?", False, "doc"),
    ("Which exception classes are defined in the package?", False, "list"),
    ("and where is it tested?", True, "follow-up"),
    ("and where is it tested?", False, "locate"),
])
def test_question_type_by_opening(question, history, expected) -> None:
    assert question_type(question, history) == expected


def test_rewrite_follow_up_uses_previous_subject() -> None:
    history = [{"question": "Where is validate_token defined?", "subject": "validate_token"}]
    assert rewrite_follow_up("and where is it tested?", history) == "where is validate_token tested?"


@pytest.mark.parametrize(("question", "parts"), [
    ("Where is login defined? How is the token checked?", 2),
    ("Where is login defined, and how is the token checked?", 2),
    ("Where is login defined?", 1),
])
def test_split_question_parts(question, parts) -> None:
    assert len(split_question(question)) == parts


def test_plan_names_docql_for_identifiers_and_function_level() -> None:
    plan = plan_question("Where is `validate_token` implemented?", "tiny")
    assert plan.docql == ['$.code.query("validate_token")']
    assert plan.index_type == "function" and plan.intent == "code"
    assert plan_question("What does this project do?", "tiny").index_type == "file"
    assert not plan_question("hi", "tiny").need_retrieval


@pytest.mark.parametrize(("text", "citations", "ok", "problem"), [
    ("`validate_token` checks tokens [1].", [], True, None),
    ("It checks tokens [2].", [], False, "names no evidence"),
    ("It checks tokens [1].", [Citation(evidence_id=1, path="pkg/auth.py", start_line=12, end_line=40)], False,
     "past the end"),
    ("`rotate_secret` rotates it [1].", [], False, "does not appear"),
    ("No citations at all.", [], False, "at least 1 required"),
])
def test_check_draft_cases(text, citations, ok, problem) -> None:
    verdict = check_draft(Draft(text=text, citations=citations), [EV], FACTS, k=1)
    assert verdict.ok is ok
    if problem:
        assert any(problem in p for p in verdict.problems)


def test_check_draft_rejects_changed_file_version() -> None:
    verdict = check_draft(Draft(text="It checks [1]."), [EV], {"pkg/auth.py": FileFacts(21, "other")}, k=1)
    assert not verdict.ok and "different version" in verdict.problems[0]


@pytest.mark.parametrize(("code", "cited", "expected"), [
    ("validate_token()", "def validate_token(self)", True),
    ("hmac.compare_digest", "return hmac.compare_digest(a, b)", True),
    ("compare", "return hmac.compare_digest(a, b)", False),
    ("", "anything", True),
])
def test_identifier_supported(code, cited, expected) -> None:
    assert identifier_supported(code, cited) is expected


def test_strip_unsupported_keeps_valid_sentences() -> None:
    assert strip_unsupported("Good [1]. Bad [2]. Uncited.", [1]) == "Good [1]."


@pytest.mark.parametrize(("text", "kept"), [
    ("First. Second [1]. Bad [2].", "First. Second [1]."),  # a run carries its marker once, after the last
    ("First. Bad [2]. Good [1].", "Good [1]."),
    ("Heading:\nSecond [1].", "Second [1]."),  # a marker covers its own line only
    ("It says [1]:\n- one\n- two\nUncited.", "It says [1]: - one - two"),  # ... and the list it introduces
    ("It says [2]:\n- one\n- two [1].\n- three", "- two [1]. - three"),  # an item's own marker covers the next
    ("- a place [1]: what it says. Names x. Shares y.", "- a place [1]: what it says. Names x. Shares y."),
    ("- a place [2]: what it says. Names x.", ""),  # ... and the rest of the item
])
def test_strip_unsupported_reads_a_runs_one_marker(text: str, kept: str) -> None:
    assert strip_unsupported(text, [1]) == kept


def test_a_runs_identifiers_are_checked_against_the_marker_after_them() -> None:
    ev = [Evidence(id=1, path="a.py", start_line=1, end_line=1, kind="function", name="load", score=1.0,
                   text="def load(): pass"),
          Evidence(id=2, path="b.py", start_line=1, end_line=1, kind="function", name="save", score=1.0,
                   text="def save(): pass")]
    files = {"a.py": FileFacts(line_count=1, content_hash=""), "b.py": FileFacts(line_count=1, content_hash="")}
    good = check_draft(Draft(text="It calls `load`. It reads the file [1]. It writes [2].", citations=[]), ev, files, 1)
    bad = check_draft(Draft(text="It calls `save`. It reads the file [1]. It writes [2].", citations=[]), ev, files, 1)
    assert good.ok and not bad.ok and 1 not in bad.valid
    assert cited_ids("a [2] b [1] c [2]") == [2, 1]


def test_plain_removes_roles_and_backticks() -> None:
    assert plain("see :func:`attrs.evolve <evolve>` and ``x``") == "see attrs.evolve and x"


def test_next_plan_walks_strategies_in_order() -> None:
    plan = Plan(standalone="how is the token validated", key_terms=["token", "validated"])
    tried: list[str] = []
    names = []
    while (new := next_plan(plan, [EV], tried)) is not None:
        names.append(new.strategy)
        tried.append(new.strategy)
    assert names == ["widen", "switch_level", "docql_by_name", "read_files", "narrow_domain", "other_domain"]


def test_keep_last_turns_bounds_a_thread_history() -> None:
    from sift.graph.state import MAX_TURNS, keep_last_turns

    turns: list[dict] = []
    for i in range(MAX_TURNS + 5):
        turns = keep_last_turns(turns, [{"question": str(i)}])
    assert len(turns) == MAX_TURNS and turns[0]["question"] == "5" and turns[-1]["question"] == str(MAX_TURNS + 4)
    assert keep_last_turns(None, None) == []
