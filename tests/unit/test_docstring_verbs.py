"""The docstring verb list: the rule that derives it from train summaries, and the committed data file."""

from __future__ import annotations

import pytest

from lab.fit.docstring_verbs import MIN_OBJECT_SHARE, MIN_OPENINGS, MIN_PACKAGES, _bases, derive
from sift import fitted
from sift.graph.writer.docstrings import third_person


def _rows(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return list(pairs)


@pytest.mark.parametrize(("rows", "expected"), [
    # both forms open summaries in two packages, followed by an object word: a verb, counted over both forms
    (_rows(("p", "Return the value."), ("q", "Returns a copy."), ("q", "Return True when set.")),
     {"return": ["returns", 3, 2]}),
    # a noun opening: never followed by an object word
    (_rows(("p", "Helper function for parsing."), ("q", "Helper class."), ("q", "Helpers for tests.")), {}),
    # no third person anywhere in the summaries ("Trues"): not a verb, however often it opens
    (_rows(("p", "True if set."), ("q", "True if the value is empty."), ("q", "True if any.")), {}),
    # one package's habit is not enough
    (_rows(("p", "Spread the load."), ("p", "Spreads a delay."), ("p", "Spread the jitter.")), {}),
    # too few openings
    (_rows(("p", "Merge the dicts."), ("q", "Merges a list.")), {}),
    # the third person only opens, the base form is said elsewhere: "matches" → "match"
    (_rows(("p", "Matches the name."), ("q", "Matches a prefix."), ("q", "Matches the path to match it.")),
     {"match": ["matches", 3, 2]}),
    ([], {}),
])
def test_derive(rows: list[tuple[str, str]], expected: dict) -> None:
    assert derive(rows) == expected


@pytest.mark.parametrize(("word", "bases"), [
    ("returns", ["return", "returns"]),
    # every candidate that conjugates to the word; the summaries' vocabulary decides which one is a word
    ("matches", ["matche", "match", "matches"]),
    ("applies", ["applie", "apply", "applies"]),
    ("uses", ["use", "us", "uses"]),
    ("return", ["return"]),
])
def test_bases(word: str, bases: list[str]) -> None:
    assert _bases(word) == bases


def test_committed_verbs_follow_the_rule() -> None:
    data = fitted.load(fitted.DOCSTRING_VERBS)
    assert (data["min_openings"], data["min_packages"], data["min_object_share"]) == \
        (MIN_OPENINGS, MIN_PACKAGES, MIN_OBJECT_SHARE)
    assert list(data["verbs"]) == sorted(data["verbs"]) and len(data["verbs"]) >= 50
    for verb, (third, openings, packages) in data["verbs"].items():
        assert third == third_person(verb) and openings >= MIN_OPENINGS and packages >= MIN_PACKAGES
