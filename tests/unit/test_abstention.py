"""When the writer says not found: each reason, in the order the checks run, and the not-found draft."""

from __future__ import annotations

import pytest

from sift.graph.abstention import ABSENT_FROM_CORPUS, not_found, not_found_reason
from sift.graph.state import NOT_FOUND, Evidence, Plan
from sift.graph.support import MODULE_CHANNEL
from sift.graph.terms import CEILING_KEY


def ev(n: int, text: str, channels: tuple[str, ...] = ()) -> Evidence:
    return Evidence(id=n, path=f"pkg/m{n}.py", start_line=n, end_line=n, kind="function", name=f"f{n}", score=1.0,
                    text=text, channels=list(channels))


CSV = ev(1, "export rows to csv files")
MENTIONS = ev(2, "export rows; parquet and avro are planned")
WRITER = ev(3, "export and write rows")
LISTED = [ev(n, "export and write rows", (MODULE_CHANNEL,)) for n in (4, 5, 6)]
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
])
def test_not_found_reason(question: str, evidence: list[Evidence], chosen: list[Evidence],
                          idf: dict[str, float], expected: str | None) -> None:
    assert not_found_reason(Plan(standalone=question), evidence, chosen, idf) == expected


def test_not_found_names_the_closest_matches() -> None:
    assert not_found("no-evidence").text == NOT_FOUND
    draft = not_found("weak-evidence", [ev(n, "x") for n in (1, 2, 3, 4)])
    assert draft.not_found and draft.note == "weak-evidence" and not draft.citations
    assert draft.text == (f"{NOT_FOUND} The closest matches (pkg/m1.py:1, pkg/m2.py:2, pkg/m3.py:3) do not cover "
                          "the question.")
