"""The ranker: features of pooled candidates, and the score they give, on hand-computed tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sift.models import Hit, display_name
from sift.retrievers.question import question_shape
from sift.retrievers.ranker import (
    FEATURES,
    HAND_WEIGHTS,
    RankerWeights,
    features,
    name_parts,
    pool,
    scores,
    weights_in,
)

HAND = RankerWeights(HAND_WEIGHTS)


def hit(cid, path="a.py", start=1, end=5, score=1.0, kind="function", name="f", channel="bm25", part=None):
    return Hit(chunk_id=cid, node_id=None, path=path, start_line=start, end_line=end, kind=kind,
               name=display_name(name, part), symbol=name, part=part, score=score, channel=channel, rank=0,
               channels=(channel,))


def row(matrix: np.ndarray, i: int = 0) -> dict[str, float]:
    return dict(zip(FEATURES, matrix[i].tolist(), strict=True))


def hand_score(h: Hit, tokens: set[str], idents: set[str]) -> float:
    """The hand-weighted score of ``h`` alone at rank 1 of one ranking, over its RRF score (1/61)."""
    return float(scores(features(pool([[h]]), tokens, idents), HAND)[0]) * 61


@pytest.mark.parametrize(
    ("kind", "name", "part", "tokens", "idents", "factor"),
    [
        ("doc", "Intro", None, set(), set(), 1.0),
        ("function", "helper", None, set(), set(), 1.25),
        ("file", "a.py", None, set(), set(), 0.85),
        ("doc", "Authentication", None, {"authentication"}, set(), 1.3),  # heading names a query term
        ("function", "AuthService.validate_token", None, {"validate"}, {"validate_token"}, 1.25 * 1.6),  # definition
        ("function", "check", 2, {"check"}, set(), 1.25 * 1.3),  # "check (part 2)" is named check
        ("doc", "Options (beta)", None, {"beta"}, set(), 1.3),  # a heading's own parentheses count
    ],
)
def test_hand_weights_reproduce_the_composite_multipliers(kind, name, part, tokens, idents, factor):
    assert hand_score(hit(1, kind=kind, name=name, part=part), tokens, idents) == pytest.approx(factor)


@pytest.mark.parametrize(
    ("path", "words", "prior"),
    [
        ("src/attr/_make.py", set(), 1.0),
        ("tests/test_make.py", set(), 0.5),
        ("tests/test_make.py", {"test"}, 1.0),  # the query asks about tests
        ("pkg/foo_test.go", set(), 0.5),
        ("web/app.spec.ts", set(), 0.5),
        ("src/testing_utils.py", set(), 1.0),
        ("CHANGELOG.md", set(), 0.6),
        ("changelog.d/123.change.md", {"release"}, 1.0),
        ("docs/changes.rst", set(), 0.6),
        ("src/attr/__init__.pyi", set(), 0.8),
        ("types/index.d.ts", set(), 0.8),  # TypeScript's stubs
        ("src/index.d.mts", set(), 0.8),
        ("src/index.ts", set(), 1.0),
    ],
)
def test_hand_weights_path_classes(path, words, prior):
    assert hand_score(hit(1, path=path, kind="doc", name="Intro"), words, set()) == pytest.approx(prior)


@pytest.mark.parametrize(
    ("symbol", "kind", "expected"),
    [
        ("Session.send", "function", ("send", "Session", frozenset({"session", "send"}))),
        ("Schema.Meta.fields", "function", ("fields", "Schema.Meta", frozenset({"schema", "meta", "field"}))),
        ("helper", "function", ("helper", "", frozenset({"helper"}))),
        ("Version 2.0", "doc", ("0", "", frozenset({"version", "2", "0"}))),  # a heading's dots name no container
        ("src/pkg/core.py", "file", ("py", "", frozenset({"src", "pkg", "core", "py"}))),
    ],
)
def test_name_parts_table(symbol, kind, expected):
    assert name_parts(symbol, kind) == expected


def test_pool_sums_rrf_over_rankings_and_keeps_each_channels_best_rank():
    sub1 = [hit(1, score=9.0), hit(2, score=3.0)]
    sub2 = [hit(2, score=8.0), hit(1, score=1.0)]  # a second sub-query of the same channel
    vec = [hit(2, channel="vector", score=0.7)]
    p = pool([sub1, sub2, vec])
    assert p.keys == [1, 2]
    assert p.rrf[1] == pytest.approx(1 / 61 + 1 / 62)
    assert p.rrf[2] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)
    assert p.ranks["bm25"] == {1: 1, 2: 1} and p.scores["bm25"] == {1: 9.0, 2: 8.0}
    assert p.channels[2] == {"bm25", "vector"}


def test_pool_names_override_and_duplicates_count_once():
    p = pool([[hit(1), hit(1, start=1, end=5), hit(2)]], names=["smart"])
    assert p.rrf[1] == pytest.approx(1 / 61) and p.rrf[2] == pytest.approx(1 / 63)  # ranks are positions
    assert p.ranks == {"smart": {1: 1, 2: 3}}


def test_features_of_channels_scores_and_structure():
    cls = hit(1, name="Session", kind="function", score=4.0)
    method = hit(2, name="Session._send", start=2, end=3, score=2.0)
    section = hit(3, path="docs/a.md", name="Timeouts", kind="doc", channel="vector", score=0.5)
    p = pool([[cls, method], [section]])
    m = features(p, {"timeouts", "session"}, set())
    c, meth, doc = row(m, 0), row(m, 1), row(m, 2)
    assert c["rr_bm25"] == pytest.approx(60 / 61) and c["rr_vector"] == 0.0 and c["bm25_rel"] == 1.0
    assert meth["bm25_rel"] == pytest.approx(0.5) and meth["private"] == 1.0 and meth["member"] == 1.0
    assert c["container"] == 1.0 and c["member"] == 0.0 and c["name_match"] == 1.0
    assert c["name_cover"] == pytest.approx(0.5)
    assert doc["doc"] == 1.0 and doc["vector_cos"] == pytest.approx(0.5) and doc["rr_vector"] == pytest.approx(60 / 61)
    assert doc["log_rrf"] == pytest.approx(math.log(1 / 61)) and doc["member"] == doc["container"] == 0.0


@pytest.mark.parametrize(
    ("start", "end", "lines"),
    [
        (10, 10, 0.0),  # one line: log(1)
        (1, 20, math.log(20)),
        (5, 7, math.log(3)),
    ],
)
def test_log_lines(start, end, lines):
    assert row(features(pool([[hit(1, start=start, end=end)]]), {"f"}, set()))["log_lines"] == pytest.approx(lines)


def test_containment_is_within_one_file():
    cls = hit(1, path="a.py", name="Session")
    method_elsewhere = hit(2, path="b.py", name="Session.send")
    m = features(pool([[cls, method_elsewhere]]), set(), set())
    assert row(m, 0)["container"] == 0.0 and row(m, 1)["member"] == 0.0


def test_query_asking_for_tests_and_changes():
    t = hit(1, path="tests/test_a.py", kind="function", name="test_a")
    c = hit(2, path="CHANGES.rst", kind="doc", name="1.0")
    asked = features(pool([[t, c]]), {"test", "change"}, set())
    unasked = features(pool([[t, c]]), {"parse"}, set())
    assert row(asked, 0)["test_asked"] == 1.0 and row(asked, 0)["test_unasked"] == 0.0
    assert row(asked, 1)["notes_asked"] == 1.0 and row(unasked, 1)["notes_unasked"] == 1.0
    assert row(unasked, 0)["test_unasked"] == 1.0


@pytest.mark.parametrize(("path", "query", "unasked", "asked"), [
    ("PKG-INFO", {"parse"}, 1.0, 0.0),  # a package's metadata repeats its README: a note, not an explanation
    ("CONTRIBUTING.md", {"parse"}, 1.0, 0.0),
    ("CONTRIBUTING.md", {"contributing", "tests"}, 0.0, 1.0),  # asked for by name
    ("docs/usage.md", {"parse"}, 0.0, 0.0),
])
def test_project_meta_files_are_notes(path: str, query: set[str], unasked: float, asked: float) -> None:
    m = features(pool([[hit(1, path=path, kind="doc", name="Intro")]]), query, set())
    assert (row(m, 0)["notes_unasked"], row(m, 0)["notes_asked"]) == (unasked, asked)


@pytest.mark.parametrize(
    ("question", "forms"),
    [
        ("How do I set a timeout for every request?", {"howto"}),
        ("how can we skip a field when loading", {"howto"}),
        ("How to register a custom type?", {"howto"}),
        ("Can I reuse one parser for many inputs?", {"howto"}),
        ("Is there a way to keep unknown keys?", {"howto"}),
        ("Is it possible to retry a failed job?", {"howto"}),
        ("Where is the token validated?", {"where"}),
        ("Which function parses the header?", {"where"}),
        ("which classes hold the connection pool", {"where"}),
        ("How do I find where the config file is read?", {"howto", "where"}),
        ("How does the cache decide what to evict?", set()),  # how it works, not how to do it
        ("What does the retry decorator return?", set()),
        ("Which options does the command accept?", set()),  # "which" alone asks for a list
        ("somewhere in the docs", set()),  # "where" only as a word of its own
        ("", set()),
    ],
)
def test_question_forms_table(question, forms):
    assert question_shape(question).forms == frozenset(forms)


def test_question_forms_mark_doc_sections_and_definitions():
    section = hit(1, path="docs/a.md", name="Timeouts", kind="doc")
    method = hit(2, name="Session.send", kind="method")
    whole = hit(3, path="b.py", name="b.py", kind="file")
    p = pool([[section, method, whole]])
    howto, where, plain = (features(p, {"timeout"}, set(), frozenset(f)) for f in ({"howto"}, {"where"}, set()))
    assert [row(howto, i)["doc_howto"] for i in range(3)] == [1.0, 0.0, 0.0]
    assert [row(where, i)["code_where"] for i in range(3)] == [0.0, 1.0, 0.0]
    assert all(row(plain, i)["doc_howto"] == row(plain, i)["code_where"] == 0.0 for i in range(3))
    assert row(howto, 0)["code_where"] == 0.0 and row(where, 1)["doc_howto"] == 0.0


def test_type_declarations_are_code_that_implements_nothing():
    """A type-only declaration (chunk kind ``type``) is a definition (``code``), marked like a stub, and no answer to
    a question asking where something is done; a function beside it keeps both."""
    declaration = hit(1, path="src/options.ts", name="RetryOptions", kind="type")
    method = hit(2, path="src/client.ts", name="Client.pause", kind="function")
    where = features(pool([[declaration, method]]), {"pause"}, set(), frozenset({"where"}))
    assert {k: row(where, 0)[k] for k in ("code", "stub", "code_where")} == {"code": 1.0, "stub": 1.0,
                                                                             "code_where": 0.0}
    assert {k: row(where, 1)[k] for k in ("code", "stub", "code_where")} == {"code": 1.0, "stub": 0.0,
                                                                             "code_where": 1.0}
    assert hand_score(declaration, set(), set()) == pytest.approx(1.25 * 0.8)


def test_scores_are_positive_and_follow_the_weights():
    m = np.array([[0.0] * len(FEATURES), [1.0] * len(FEATURES)])
    got = scores(m, RankerWeights({"code": 2.0}))
    assert got[0] == pytest.approx(1.0) and got[1] == pytest.approx(math.e ** 2)


@pytest.mark.parametrize(
    ("doc", "source"),
    [
        (None, "hand"),
        ({"use": "hand", "weights": {"code": 9.0}}, "hand"),  # a fit that lost is kept, not used
        ({"use": "fitted", "source": "lab/fit/ranker.py", "weights": {"code": 9.0}}, "lab/fit/ranker.py"),
    ],
)
def test_weights_in_uses_a_fit_only_when_told(doc, source):
    w = weights_in(doc)
    assert w.source == source
    assert w.weights == (HAND_WEIGHTS if source == "hand" else {"code": 9.0})
