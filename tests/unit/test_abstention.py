"""When the writer says not found: each reason, in the order the checks run, and the not-found draft."""

from __future__ import annotations

import pytest

from sift.graph.models import NOT_FOUND, Evidence, Plan
from sift.graph.writer.abstention import (
    ABSENT_FROM_CORPUS,
    ABSENT_TERMS,
    PASSAGE_CHARS,
    Signals,
    decide,
    doubtful_yes,
    first_passage,
    language_terms,
    near_in_meaning,
    not_found,
    not_found_reason,
    signals,
)
from sift.graph.writer.selection import MODULE_CHANNEL
from sift.graph.writer.terms import CEILING_KEY
from sift.retrievers.question import question_shape


def ev(n: int, text: str, channels: tuple[str, ...] = ()) -> Evidence:
    return Evidence(id=n, path=f"pkg/m{n}.py", start_line=n, end_line=n, kind="function", name=f"f{n}", score=1.0,
                    text=text, channels=list(channels))


CSV = ev(1, "export rows to csv files")
MENTIONS = ev(2, "export rows; parquet and avro are planned")
WRITER = ev(3, "export and write rows")
LISTED = [ev(n, "export and write rows", (MODULE_CHANNEL,)) for n in (4, 5, 6)]
TS = Evidence(id=8, path="src/export.ts", start_line=1, end_line=2, kind="function", name="exportRows", score=1.0,
              text="export rows")
IDF = {CEILING_KEY: 9.0, "export": 2.0, "file": 1.0, "write": 1.0, "support": 1.0}


@pytest.mark.parametrize(("question", "evidence", "chosen", "idf", "expected"), [
    ("How do I export to Parquet files?", [], [], IDF, "no-evidence"),
    # coverage 3/12 and chosen nothing: parquet is in no chunk at all, no other round can find it
    ("How do I export to Parquet files?", [CSV], [], {**IDF, "parquet": 9.0}, ABSENT_FROM_CORPUS),
    # parquet is rare (idf 8 ≥ 9 - 1.7) but some chunk has it: keep looking
    ("How do I export to Parquet files?", [CSV], [], {**IDF, "parquet": 8.0}, "weak-evidence"),
    # two rare words missing from all the evidence and coverage 3/19 < 0.45: absent, whatever was chosen
    ("How do I export to Parquet or Avro files?", [CSV], [CSV], {**IDF, "parquet": 8.0, "avro": 8.0},
     "absent-terms"),
    # the evidence mentions both in passing; what would be cited lacks both and covers 3/19 < 0.4
    ("How does export write parquet and avro?", [MENTIONS, WRITER], [WRITER], {**IDF, "parquet": 8.0, "avro": 8.0},
     "absent-terms"),
    # ...unless it is a module's listing, which is chosen by its subject
    ("How does export write parquet and avro?", [MENTIONS, *LISTED], LISTED, {**IDF, "parquet": 8.0, "avro": 8.0},
     None),
    # a rare named thing the cited evidence never mentions
    ("Does export support Parquet?", [MENTIONS, CSV], [CSV], {**IDF, "parquet": 8.0}, "absent-terms"),
    ("Does export support Parquet?", [MENTIONS, CSV], [MENTIONS], {**IDF, "parquet": 8.0}, None),
    # a named thing that is common in the corpus is no reason to abstain
    ("Does export support Parquet?", [MENTIONS, CSV], [CSV], {**IDF, "parquet": 3.0}, None),
    ("How do I export rows to csv files?", [CSV], [CSV], {}, None),  # no idf: nothing is rare
    # the language the cited code is written in is no absent topic, though the sources never name it...
    ("Does export support Python files?", [CSV], [CSV], {**IDF, "python": 8.0}, None),
    ("Where is the JavaScript export?", [TS], [TS], {**IDF, "javascript": 8.0, "java": 8.0, "script": 8.0}, None),
    # ...but another language is
    ("Does export support Ruby files?", [CSV], [CSV], {**IDF, "ruby": 8.0}, "absent-terms"),
    ("Where is the Python export?", [TS], [TS], {**IDF, "python": 8.0}, "absent-terms"),
])
def test_reasons_with_two_absent_terms(question: str, evidence: list[Evidence], chosen: list[Evidence],
                                       idf: dict[str, float], expected: str | None) -> None:
    """Each check, with the evidence lacking two rare words counting as absent (``absent_terms=2``)."""
    assert decide(signals(Plan(standalone=question), evidence, chosen, idf), absent_terms=2) == expected


RARE = {**IDF, "parquet": 8.0, "avro": 8.0, "orc": 8.0, "feather": 8.0}


@pytest.mark.parametrize(("question", "evidence", "chosen", "expected"), [
    # two rare words missing are no longer enough: the writer answers from what it found
    ("How do I export to parquet or avro files?", [CSV], [CSV], None),
    ("How does export write parquet and avro?", [MENTIONS, WRITER], [WRITER], None),
    # ABSENT_TERMS of them are: the evidence is about something else
    ("How do I export to Parquet, Avro, ORC or Feather files?", [CSV], [CSV], "absent-terms"),
    # what would be cited lacks all four, though the evidence mentions them in passing
    ("How does export write parquet, avro, orc and feather?", [ev(7, "export rows; parquet avro orc feather"),
                                                               WRITER], [WRITER], "absent-terms"),
])
def test_not_found_reason_with_the_fitted_threshold(question: str, evidence: list[Evidence],
                                                    chosen: list[Evidence], expected: str | None) -> None:
    assert ABSENT_TERMS == 4
    assert not_found_reason(Plan(standalone=question), evidence, chosen, RARE) == expected


@pytest.mark.parametrize(("question", "path", "expected"), [
    ("Where is the JavaScript proxy made?", "src/proxy.ts", {"javascript", "java", "script"}),
    ("Why does TypeScript complain?", "src/proxy.ts", {"typescript", "type", "script"}),
    ("Why does TypeScript complain?", "lib/proxy.js", set()),  # JavaScript is no TypeScript
    ("Which Python versions work?", "pkg/m.py", {"python"}),
    ("What type is it?", "src/proxy.ts", set()),  # only a language the question names
])
def test_language_terms(question: str, path: str, expected: set[str]) -> None:
    e = Evidence(id=1, path=path, start_line=1, end_line=1, kind="function", name="f", score=1.0, text="")
    assert language_terms(question, [e]) == expected


def test_signals_of_a_draft() -> None:
    found = signals(Plan(standalone="How do I export to parquet or avro files?"), [CSV], [CSV], RARE)
    assert found is not None and found.missing == 2 and found.chosen and found.cited_missing == 2
    assert 0 < found.best == found.cited_best < 0.45 and not found.corpus_absent and not found.unnamed
    named = signals(Plan(standalone="How do I export to Parquet or Avro files?"), [CSV], [CSV], RARE)
    assert named is not None and named.unnamed  # named things the cited evidence never mentions
    assert signals(Plan(standalone="anything"), [], [], RARE) is None
    # a module's listing is chosen by its subject: its missing words do not count
    listed = signals(Plan(standalone="How does export write parquet and avro?"), [MENTIONS, *LISTED], LISTED, RARE)
    assert listed is not None and listed.cited_missing == 0


@pytest.mark.parametrize(("found", "absent_terms", "expected"), [
    (None, 4, "no-evidence"),
    (Signals(missing=4, best=0.44, chosen=True, corpus_absent=False), 4, "absent-terms"),
    (Signals(missing=4, best=0.45, chosen=True, corpus_absent=False), 4, None),  # covers enough of the question
    (Signals(missing=3, best=0.1, chosen=True, corpus_absent=False), 4, None),
    (Signals(missing=3, best=0.1, chosen=True, corpus_absent=False), 3, "absent-terms"),
    (Signals(missing=1, best=0.1, chosen=False, corpus_absent=True), 4, ABSENT_FROM_CORPUS),
    (Signals(missing=1, best=0.1, chosen=False, corpus_absent=False), 4, "weak-evidence"),
    (Signals(missing=0, best=0.9, chosen=True, corpus_absent=False, cited_missing=4, cited_best=0.39), 4,
     "absent-terms"),
    (Signals(missing=0, best=0.9, chosen=True, corpus_absent=False, cited_missing=4, cited_best=0.4), 4, None),
    (Signals(missing=0, best=0.9, chosen=True, corpus_absent=False, unnamed=True), 4, "absent-terms"),
])
def test_decide_table(found: Signals | None, absent_terms: int, expected: str | None) -> None:
    assert decide(found, absent_terms) == expected


def test_not_found_names_the_closest_matches() -> None:
    assert not_found("no-evidence").text == NOT_FOUND
    draft = not_found("weak-evidence", [ev(n, "x") for n in (1, 2, 3, 4)])
    assert draft.not_found and draft.note == "weak-evidence" and not draft.citations
    assert draft.text == (f"{NOT_FOUND} The closest matches (f1 in pkg/m1.py:1; f2 in pkg/m2.py:2; f3 in pkg/m3.py:3) "
                          "do not cover the question.")
    # Each place by what it is: a method with its class, a section by its heading, a file by its path alone.
    method = Evidence(id=1, path="pkg/limits.py", start_line=12, end_line=20, kind="function", name="Limiter.take",
                      symbol="pkg.limits.Limiter.take", score=1.0, text="def take(self, n):\n    return n")
    section = Evidence(id=2, path="docs/usage.md", start_line=3, end_line=9, kind="doc", name="Usage",
                       heading_path="Guide > Usage", score=1.0, text="Call take() to spend tokens.")
    whole = Evidence(id=3, path="pkg/__init__.py", start_line=1, end_line=4, kind="file", name="__init__.py",
                     symbol="__init__.py", score=1.0, text="from .limits import Limiter")
    assert not_found("weak-evidence", [method, section, whole]).text == (
        f"{NOT_FOUND} The closest matches (Limiter's `take` in pkg/limits.py:12; the section \"Usage\" in "
        "docs/usage.md:3; pkg/__init__.py:1) do not cover the question.")


WEAK = Signals(missing=1, best=0.1, chosen=False, corpus_absent=False)  # "weak-evidence"
CORPUS_ABSENT = Signals(missing=1, best=0.1, chosen=False, corpus_absent=True)
FEW_WORDS = Signals(missing=4, best=0.2, chosen=True, corpus_absent=False)  # "absent-terms", lexical
UNNAMED = Signals(missing=0, best=0.9, chosen=True, corpus_absent=False, unnamed=True)


@pytest.mark.parametrize(("found", "similarity", "floor", "expected"), [
    (WEAK, 0.61, 0.6, True),
    (CORPUS_ABSENT, 0.6, 0.6, True),  # the floor itself is close enough
    (FEW_WORDS, 0.7, 0.6, True),
    (FEW_WORDS, 0.59, 0.6, False),  # not close enough in meaning
    (FEW_WORDS, 0.9, None, False),  # switched off
    (FEW_WORDS, None, 0.6, False),  # no local model to measure it
    (UNNAMED, 0.9, 0.6, False),  # a named thing the evidence never mentions is no matter of wording
    (None, 0.9, 0.6, False),  # no evidence at all
    (Signals(missing=0, best=0.9, chosen=True, corpus_absent=False), 0.9, 0.6, False),  # nothing to override
])
def test_near_in_meaning_table(found: Signals | None, similarity: float | None, floor: float | None,
                               expected: bool) -> None:
    assert near_in_meaning(found, similarity, 4, floor) is expected


def test_first_passage_is_the_first_items_name_and_text() -> None:
    assert first_passage([]) == ""
    assert first_passage([CSV, WRITER]) == "f1\nexport rows to csv files"
    long = ev(9, "word " * 1000)
    assert len(first_passage([long])) == PASSAGE_CHARS



@pytest.mark.parametrize(("question", "level", "expected"), [
    ("Is there a way to retry failed requests?", "low", True),
    ("Are there hooks for the end of a run?", "low", True),
    ("Can it parse multipart bodies?", "low", True),
    ("  can I set a default timeout?", "low", True),
    ("Could the cache be shared between processes?", "low", True),
    ("Does the scheduler keep jobs across restarts?", "low", True),
    ("Do nested schemas inherit their parent's options?", "low", True),
    ("Can it parse multipart bodies?", "medium", False),  # evidence good enough to show candidates
    ("Is there a way to retry failed requests?", "high", False),
    ("Is the generated HTML safe for untrusted input?", "low", False),  # what a thing is like, not whether it is
    ("Should I still use the old cancel API?", "low", False),
    ("How do I retry failed requests?", "low", False),
    ("Canonical names: where are they built?", "low", False),  # "Can" only as a whole word
])
def test_doubtful_yes(question: str, level: str, expected: bool) -> None:
    assert doubtful_yes(question_shape(question), level) is expected  # type: ignore[arg-type]
