"""The planner's question types: a list question is asked by its phrasing, not by a list word in another clause."""

from __future__ import annotations

import pytest

from sift.graph.planner import question_type
from sift.retrievers.question import is_list_question


@pytest.mark.parametrize("question", [
    "Which stores are available?",
    "Which exception classes are defined in the package?",
    "What options can be passed to the dump function?",
    "What fields are there?",
    "What errors exist?",
    "What are all the supported formats?",
    "Which hooks does the plugin manager provide?",
    "What parsers does the library ship with?",
    "List the validators",
    "and list the commands",
    "What kinds of fields are there?",
    "Which types of tokens does the lexer emit?",
    "Show me all the commands",
    "Which backends are supported out of the box?",
    "Which encodings get detected for a file without any setup?",
    "What errors occur when the input is empty?",
    "What value types can options be converted to?",
])
def test_is_list_question_true_lists(question) -> None:
    assert is_list_question(question)
    assert question_type(question, False) == "list"


@pytest.mark.parametrize(("question", "expected"), [
    # "exist"/"exists"/"are" inside a conditional or negated clause: the question asks what something does
    ("What does load_config do when the file does not exist?", "explain"),
    ("What does the reader return if the path doesn't exist?", "explain"),
    ("What does dump do if a field exists but is None?", "explain"),
    ("What happens if the directory does not exist?", "explain"),
    ("What happens when the options are empty?", "explain"),
    ("What should I do if the config file does not exist?", "explain"),
    ("Which exception is raised when a key does not exist?", "explain"),
    ("Which function is called when handlers are registered?", "locate"),
    ("Does the cache exist on disk?", "explain"),
    ("How do I check whether a key exists?", "doc"),
    ("Why does the load fail when the file exists?", "doc"),
    # one thing asked for, not several
    ("Which exception does the parser raise when the input is empty?", "explain"),
    ("What does the registry provide?", "explain"),
    ("Which function shows wait times?", "locate"),  # a singular and its verb
    ("Which class keeps the state?", "locate"),
    ("What is the default when the key does not exist?", "explain"),
])
def test_question_type_not_list_for_clauses(question, expected) -> None:
    assert not is_list_question(question)
    assert question_type(question, False) == expected


@pytest.mark.parametrize("question", ["", "   ", "which", "what are", "list"])
def test_is_list_question_short_input(question) -> None:
    # Degenerate input neither fails nor loops: "list" alone is the list verb, "what are" asks for a list.
    assert is_list_question(question) == (question.strip() in ("what are", "list"))
