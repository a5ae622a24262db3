"""Citation numbers in the final answer: 1..n in order of first use, no gaps, each once in a row."""

from __future__ import annotations

import pytest

from sift.graph.numbering import numbering, renumber_text


@pytest.mark.parametrize(("text", "cited", "evidence", "expected"), [
    ("a [3]. b [7]. c [3].", [3, 7], [1, 2, 3, 4, 5, 6, 7], {3: 1, 7: 2, 1: 3, 2: 4, 4: 5, 5: 6, 6: 7}),
    ("no markers", [2], [1, 2], {2: 1, 1: 2}),  # a cited id missing from the text follows the text's
    ("", [], [], {}),
    ("x [2] [1]", [1, 2], [1, 2], {2: 1, 1: 2}),
    ("dup [5][5]", [5], [5, 6], {5: 1, 6: 2}),
    ("code `x[0]` then [4]", [4], [3, 4], {4: 1, 3: 2}),  # [0] names no evidence: not numbered
])
def test_numbering_first_use_then_rest(text: str, cited: list[int], evidence: list[int],
                                       expected: dict[int, int]) -> None:
    got = numbering(text, cited, evidence)
    assert got == expected
    assert sorted(got.values()) == list(range(1, len(got) + 1))  # no gaps


@pytest.mark.parametrize(("text", "mapping", "expected"), [
    ("a [3]. b [7]. c [3].", {3: 1, 7: 2}, "a [1]. b [2]. c [1]."),
    ("twice [4] [4].", {4: 1}, "twice [1]."),
    ("glued [4][4][4].", {4: 2}, "glued [2]."),
    ("two [4] [5].", {4: 1, 5: 2}, "two [1] [2]."),
    ("unknown [9] kept", {4: 1}, "unknown [9] kept"),
    ("swap [1] then [2]", {1: 2, 2: 1}, "swap [2] then [1]"),  # simultaneous, not one after another
    ("line one [2]\n[2] next line", {2: 1}, "line one [1]\n[1] next line"),  # not across lines
])
def test_renumber_text(text: str, mapping: dict[int, int], expected: str) -> None:
    assert renumber_text(text, mapping) == expected
