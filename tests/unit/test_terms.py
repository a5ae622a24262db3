"""The question's terms: weighted shares, word forms, hyphenated and named words, the identifiers it names."""

from __future__ import annotations

import pytest

from sift.graph.models import Evidence, Plan
from sift.graph.writer import terms
from sift.graph.writer.terms import (
    CEILING_KEY,
    has_term,
    is_generic,
    matched_terms,
    named_identifiers,
    query_tokens,
    stems_match,
    weighted_share,
)


def ev(path: str, name: str, text: str, signature: str | None = None) -> Evidence:
    return Evidence(id=1, path=path, start_line=1, end_line=1, kind="function", name=name, score=1.0, text=text,
                    signature=signature)


@pytest.mark.parametrize(("found", "tokens", "idf", "expected"), [
    ({"a"}, ["a", "b"], {}, 0.5),  # no idf: every term weighs 1
    ({"a"}, ["a", "b"], {"a": 3.0, "b": 1.0}, 0.75),
    ({"b"}, ["a", "b"], {"a": 3.0}, 0.25),  # a term without an idf weighs 1
    (set(), ["a"], {"a": 2.0}, 0.0),
    ({"a", "b"}, ["a", "b"], {"a": 2.0, "b": 5.0}, 1.0),
    ({"a"}, [], {}, 0.0),  # no terms: nothing shared, no division by zero
    ({"a"}, ["a", "a", "b"], {}, 0.5),  # a repeated term counts once
    ({"a"}, ["a", "b"], {"a": 0.0, "b": 0.0}, 0.0),  # all weights zero: the total falls back to 1
])
def test_weighted_share(found: set[str], tokens: list[str], idf: dict[str, float], expected: float) -> None:
    assert weighted_share(found, tokens, idf) == pytest.approx(expected)


@pytest.mark.parametrize(("words", "term", "expected"), [
    ({"compute"}, "compute", True),
    ({"comput"}, "recomput", True),  # "recomputed" is met by "compute" without its prefix
    ({"compute"}, "recomput", True),
    (set(), "compute", False),
    ({"zip"}, "unzip", False),  # "un" is no derivational prefix the tokenizer strips
    ({"token"}, "tok", False),  # a term is matched whole, not as a prefix of a word
])
def test_has_term(words: set[str], term: str, expected: bool) -> None:
    assert has_term(words, term) is expected


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("parse", "parsers", True),  # shorter word 5 letters: a shared prefix of 4 (max(4, 5 - 2)) suffices
    ("field", "fields", True),
    ("fields", "field", True),  # symmetric
    ("valid", "validators", True),
    ("format", "formal", True),  # "forma" shared, 6 - 2 = 4 needed: word forms are judged by spelling alone
    ("form", "format", True),  # the whole shorter word (4 letters) is the other's prefix
    ("field", "fiend", False),  # "fie": 3 shared letters, 4 needed
    ("form", "form", True),
    ("io", "io", True),  # under four letters: equal or not
    ("io", "ios", False),
    ("error", "errors", True),
    ("parse", "path", False),
    ("", "", True),
])
def test_stems_match(a: str, b: str, expected: bool) -> None:
    assert stems_match(a, b) is expected


@pytest.mark.parametrize(("identifiers", "expected"), [
    (["`Schema.Meta`", "load()", "@validates"], {"schema.meta", "load", "validates"}),
    ([], set()),
    (["Token", "token"], {"token"}),  # case folds, duplicates collapse
])
def test_named_identifiers(identifiers: list[str], expected: set[str]) -> None:
    assert named_identifiers(Plan(standalone="q", identifiers=identifiers)) == expected


@pytest.mark.parametrize(("evidence", "tokens", "expected"), [
    (ev("pkg/auth.py", "validate_token", "return check(token)"), ["token", "check", "session"], ["token", "check"]),
    (ev("pkg/auth.py", "f", "pass"), ["auth"], ["auth"]),  # the path counts
    (ev("a.py", "f", "pass", signature="def f(session)"), ["session"], ["session"]),  # the signature counts
    (ev("a.py", "f", "compute()"), ["recomput"], ["recomput"]),  # a prefixed form is met by the plain one
    (ev("a.py", "f", "pass"), [], []),
    (ev("a.py", "f", "token token"), ["token", "token"], ["token", "token"]),  # in the order given
])
def test_matched_terms(evidence: Evidence, tokens: list[str], expected: list[str]) -> None:
    assert matched_terms(evidence, tokens) == expected


def test_query_tokens_leave_an_unseen_compound_to_its_parts() -> None:
    plan = Plan(standalone="How does GitHub auth work?")
    assert "github" in query_tokens(plan)
    unseen = {CEILING_KEY: 9.0, "github": 9.0, "git": 2.0, "hub": 3.0}
    tokens = query_tokens(plan, unseen)
    assert "github" not in tokens and {"git", "hub"} <= set(tokens)
    assert "github" in query_tokens(plan, {CEILING_KEY: 9.0, "github": 4.0})  # some chunk has it: kept whole


@pytest.mark.parametrize(("measures", "cut", "expected"), [
    ((0.8, 0.1), (0.6, 0.75), True),  # spread over the packages, thinly over their chunks: phrasing
    ((0.6, 0.75), (0.6, 0.75), True),  # the cut-off is inclusive
    ((0.59, 0.1), (0.6, 0.75), False),  # held by a few packages: a topic of theirs
    ((0.8, 0.9), (0.6, 0.75), False),  # in bursts where it occurs: a content word
    ((0.8, 0.9), (0.5, 1.0), True),
    (None, (0.5, 1.0), False),  # not among the generic words at all
])
def test_is_generic(monkeypatch: pytest.MonkeyPatch, measures: tuple[float, float] | None,
                    cut: tuple[float, float], expected: bool) -> None:
    monkeypatch.setattr(terms, "_generic_measures", lambda: {"word": measures} if measures else {})
    assert is_generic("word", cut) is expected


def test_is_generic_off_without_a_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terms, "GENERIC_CUT", None)
    assert not is_generic("therefore")


def test_committed_generic_words_hold_phrasing_not_topics() -> None:
    """The committed table (lab/fit/generic_words.py) under the chosen cut: common phrasing is generic, the topics
    of some kinds of projects are not."""
    assert terms.GENERIC_CUT in terms.GENERIC_CUTS
    for word in ("suppose", "figure", "notice", "therefore"):
        assert is_generic(word), word
    for word in ("kafka", "protobuf", "oauth", "docker", "redis"):
        assert not is_generic(word), word


def test_query_tokens_leave_out_generic_words_the_corpus_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terms, "_generic_measures", lambda: {"suppose": (0.7, 0.1), "kafka": (0.3, 0.3)})
    monkeypatch.setattr(terms, "GENERIC_CUT", (0.6, 0.75))
    plan = Plan(standalone="Suppose it reads Kafka?")
    assert {"suppose", "kafka"} <= set(query_tokens(plan))  # without idf: every word
    absent = {CEILING_KEY: 9.0, "suppose": 9.0, "kafka": 9.0, "read": 2.0}
    tokens = query_tokens(plan, absent)
    assert "suppose" not in tokens and {"kafka", "read"} <= set(tokens)  # a topic the corpus lacks still counts
    assert "suppose" in query_tokens(plan, {**absent, "suppose": 5.0})  # the corpus has it: the project's word
