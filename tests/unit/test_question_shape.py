"""The question's shape: what its wording asks, read once by a pure function, on tables of questions."""

from __future__ import annotations

import pytest

from sift.graph.planner import plan_question, question_type
from sift.graph.state import Plan
from sift.retrievers.question import QuestionShape, identifiers_in, list_subject, named_words, question_shape


@pytest.mark.parametrize(("question", "form"), [
    ("hi there!", "chit-chat"),
    ("thanks a lot", "chit-chat"),
    ("List the hooks a plugin can implement.", "list"),
    ("What kinds of serializers are there?", "list"),
    ("Which stores are available?", "list"),
    ("Which hooks does the plugin manager provide?", "list"),
    ("Where is the retry policy defined?", "locate"),
    ("Which module parses the config file?", "locate"),
    ("How does the cache decide what to evict?", "explain"),
    ("Explain the lifecycle of a request.", "explain"),
    ("How do I set a default timeout?", "doc"),
    ("Why does the parser reject tabs?", "doc"),
    ("What does the retry decorator return?", "explain"),  # no opening of its own: explain
    ("", "explain"),
])
def test_form(question: str, form: str) -> None:
    assert question_shape(question).form == form


@pytest.mark.parametrize(("question", "forms"), [
    ("How do I retry a request?", {"howto"}),
    ("is it possible to stream the body", {"howto"}),
    ("Where is the token validated?", {"where"}),
    ("Which function parses the header?", {"where"}),
    ("How do I find where the config file is read?", {"howto", "where"}),
    ("How does the cache decide what to evict?", set()),
    ("somewhere in the docs", set()),
])
def test_ranker_forms(question: str, forms: set[str]) -> None:
    shape = question_shape(question)
    assert shape.forms == frozenset(forms)
    assert (shape.howto, shape.where) == ("howto" in forms, "where" in forms)


@pytest.mark.parametrize(("question", "yes_no"), [
    ("Is there a way to retry failed requests?", True),
    ("Are there hooks for the end of a run?", True),
    ("Can it parse multipart bodies?", True),
    ("Does the scheduler keep jobs across restarts?", True),
    ("Is the generated HTML safe for untrusted input?", False),  # what a thing is like, not whether it is
    ("How do I retry failed requests?", False),
    ("Canonical names: where are they built?", False),  # "Can" only as a whole word
])
def test_yes_no(question: str, yes_no: bool) -> None:
    assert question_shape(question).yes_no is yes_no


@pytest.mark.parametrize(("question", "subject"), [
    ("What kinds of validators does the library provide?", ["validator"]),
    ("Which error types are raised by the client?", ["error", "type"]),
    ("List the hooks of a plugin.", ["hook"]),
    ("How do I list the hooks?", []),  # no list opening
    ("", []),
])
def test_list_subject(question: str, subject: list[str]) -> None:
    assert list_subject(question) == subject
    assert question_shape(question).list_subject == tuple(subject)


@pytest.mark.parametrize(("question", "identifiers"), [
    ("Where is `AuthService.validate` called?", ["AuthService", "validate"]),
    ("What does parse_header return for an empty value?", ["parse_header"]),
    ("How does getItem handle a missing key?", ["getItem"]),
    ("How does the Session retry?", []),  # a capitalised word is no identifier
])
def test_identifiers(question: str, identifiers: list[str]) -> None:
    assert identifiers_in(question) == identifiers
    assert question_shape(question).identifiers == tuple(identifiers)


@pytest.mark.parametrize(("question", "expected"), [
    ("Does it export to Protocol Buffers?", ["Protocol", "Buffers"]),
    ("Can I send the events to Kafka?", ["Kafka"]),
    ("Where is GitHub mentioned, and gRPC?", ["GitHub"]),  # "gRPC" does not start with a capital
    ("Schema is the first word", []),  # a sentence's first word is no name
    ("Is `Schema` a class?", []),  # code in backticks is not a named thing
    ("Can I do this?", []),  # "I" is no name
    ("", []),
])
def test_named_words(question: str, expected: list[str]) -> None:
    assert named_words(question) == expected


@pytest.mark.parametrize(("question", "refers_back"), [
    ("and what about the timeout?", True),
    ("Where is it defined?", True),
    ("How do I configure the retry policy for idempotent requests only in the client?", False),
    ("How do I configure the retry policy?", False),
])
def test_refers_back(question: str, refers_back: bool) -> None:
    assert question_shape(question).refers_back is refers_back


def test_overview_and_tests() -> None:
    assert question_shape("What is the purpose of this project?").overview
    assert not question_shape("What is the purpose of the timeout?").overview
    assert question_shape("How is the parser tested?").asks_tests
    assert not question_shape("How is the parser built?").asks_tests


def test_the_shape_is_frozen_and_a_plain_value() -> None:
    shape = question_shape("Which hooks does it provide?")
    with pytest.raises(ValueError):
        shape.form = "doc"  # type: ignore[misc]
    assert QuestionShape.model_validate(shape.model_dump()) == shape


def test_the_plan_carries_the_shape_of_its_standalone_question() -> None:
    asked = question_shape("Which hooks does the plugin manager provide?")
    plan = plan_question(asked.text, "kb", shape=asked)
    assert plan.question_shape is asked and plan.shape is asked
    assert plan.question_type == question_type(asked, False) == "list"
    # a follow-up is planned on its rewritten question, whose shape is read then
    follow = plan_question("and where is it defined?", "kb", [{"question": "What does `load_config` do?"}],
                           shape=question_shape("and where is it defined?"))
    assert follow.question_type == "follow-up"
    assert follow.shape.text == follow.standalone != "and where is it defined?"
    assert follow.shape.form == "locate"


def test_a_plan_without_its_shape_reads_its_standalone_question() -> None:
    """A plan checkpointed before plans carried the shape, or one whose standalone was set without it."""
    plan = Plan(standalone="Where is the retry policy defined?")
    assert plan.question_shape is None
    assert plan.shape.form == "locate"
    planned = plan_question("Where is the retry policy defined?", "kb")
    reworded = planned.model_copy(update={"standalone": "How do I retry?"})
    assert reworded.shape.text == "How do I retry?" and reworded.shape.howto


def test_the_checkpoint_serializer_gives_back_the_shape() -> None:
    """The shape rides in the state (``shape``) and on the plan, so the checkpointer's allow-list names it."""
    from sift.graph.checkpointer import make_serde

    serde = make_serde()
    plan = plan_question("Which hooks does it provide?", "kb")
    state = {"shape": plan.shape, "plan": plan}
    back = serde.loads_typed(serde.dumps_typed(state))
    assert back["shape"] == plan.shape and isinstance(back["shape"], QuestionShape)
    assert back["plan"].question_shape == plan.shape
