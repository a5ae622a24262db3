"""Evaluation metrics on hand-computed cases, and agreement with the ranx reference implementation."""

from __future__ import annotations

import math
import random
from typing import NamedTuple

import pytest
from ranx import Qrels, Run, evaluate

from sift.eval import metrics as m


class S(NamedTuple):
    path: str
    start_line: int
    end_line: int


A, B, C = "a.py", "b.py", "c.py"
IDCG2 = 1 + 1 / math.log2(3)  # two relevant items at ranks 1 and 2


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (S(A, 1, 10), S(A, 10, 20), True),  # touching end line
        (S(A, 1, 10), S(A, 11, 20), False),  # adjacent, not overlapping
        (S(A, 5, 5), S(A, 1, 10), True),  # contained
        (S(A, 1, 10), S(B, 1, 10), False),  # same lines, other file
    ],
)
def test_overlaps_same_path_and_intersecting_lines(a: S, b: S, expected: bool) -> None:
    assert m.overlaps(a, b) is expected
    assert m.overlaps(b, a) is expected


@pytest.mark.parametrize(
    ("hits", "gold", "k", "expected"),
    [
        ([S(A, 1, 2), S(B, 1, 2), S(A, 5, 6)], [A, C], 2, 0.5),
        ([S(A, 1, 2), S(A, 3, 4), S(A, 5, 6)], [A, B], 3, 0.5),  # duplicates count once
        ([S(C, 1, 2), S(A, 1, 2)], [A], 1, 0.0),  # gold file just past the cut
        ([S(C, 1, 2), S(A, 1, 2)], [A], 10, 1.0),  # k beyond the list
        ([], [A], 5, 0.0),  # nothing retrieved
        ([S(A, 1, 2)], [], 5, None),  # no gold: undefined
    ],
)
def test_file_recall_at_k_hand_computed(hits: list[S], gold: list[str], k: int, expected: float | None) -> None:
    assert m.file_recall_at_k(hits, gold, k) == expected


GOLD_AB = [S(A, 10, 20), S(B, 1, 5)]


@pytest.mark.parametrize(
    ("hits", "gold", "k", "expected"),
    [
        ([S(A, 15, 30), S(B, 6, 9), S(B, 5, 5)], GOLD_AB, 1, 0.5),
        ([S(A, 15, 30), S(B, 6, 9), S(B, 5, 5)], GOLD_AB, 2, 0.5),  # b:6-9 misses b:1-5
        ([S(A, 15, 30), S(B, 6, 9), S(B, 5, 5)], GOLD_AB, 3, 1.0),
        ([S(A, 1, 100)], [S(A, 1, 5), S(A, 10, 15)], 1, 1.0),  # one hit covers two gold spans
        ([S(A, 12, 12), S(A, 13, 13)], GOLD_AB, 10, 0.5),  # duplicate hits on one span
        ([], GOLD_AB, 3, 0.0),
        ([S(A, 1, 2)], [], 3, None),
    ],
)
def test_span_recall_at_k_hand_computed(hits: list[S], gold: list[S], k: int, expected: float | None) -> None:
    assert m.span_recall_at_k(hits, gold, k) == expected


@pytest.mark.parametrize(
    ("hits", "k", "expected"),
    [
        ([S(C, 1, 2), S(C, 3, 4), S(A, 11, 11)], 3, 1.0),
        ([S(C, 1, 2), S(C, 3, 4), S(A, 11, 11)], 2, 0.0),
        ([], 3, 0.0),
    ],
)
def test_span_hit_at_k_any_overlap_in_top_k(hits: list[S], k: int, expected: float) -> None:
    assert m.span_hit_at_k(hits, GOLD_AB, k) == expected


@pytest.mark.parametrize(
    ("hits", "expected_file", "expected_span"),
    [
        ([S(A, 10, 12), S(B, 1, 1)], 1.0, 1.0),
        ([S(C, 1, 2), S(A, 30, 40), S(A, 12, 12)], 0.5, 1 / 3),  # right file before right lines
        ([S(C, 1, 2), S(C, 3, 4)], 0.0, 0.0),
        ([], 0.0, 0.0),
    ],
)
def test_mrr_first_relevant_rank(hits: list[S], expected_file: float, expected_span: float) -> None:
    assert m.file_mrr(hits, [A, B]) == pytest.approx(expected_file)
    assert m.span_mrr(hits, GOLD_AB) == pytest.approx(expected_span)


def test_mrr_undefined_without_gold() -> None:
    assert m.file_mrr([S(A, 1, 2)], []) is None
    assert m.span_mrr([S(A, 1, 2)], []) is None


@pytest.mark.parametrize(
    ("hits", "spans", "files", "k", "expected"),
    [
        # gains [1, 0, 1]: (1 + 1/log2 4) / (1 + 1/log2 3)
        ([S(A, 12, 13), S(C, 1, 2), S(B, 3, 4)], GOLD_AB, [], 10, 1.5 / IDCG2),
        # second hit on the same gold span earns nothing: gains [1, 0]
        ([S(A, 10, 11), S(A, 19, 20)], GOLD_AB, [], 10, 1 / IDCG2),
        # one hit overlapping two gold spans claims only the first: gains [1]
        ([S(A, 1, 100)], [S(A, 1, 5), S(A, 10, 15)], [], 10, 1 / IDCG2),
        # only gold files: each gold file earns gain once, gains [1, 0, 1]
        ([S(A, 1, 2), S(A, 5, 6), S(B, 1, 1)], [], [A, B], 10, 1.5 / IDCG2),
        # the relevant hit is past the cut
        ([S(C, 1, 2), S(A, 12, 12)], GOLD_AB, [], 1, 0.0),
        # more gold than k: ideal DCG counts only k items
        ([S(A, 12, 12), S(B, 2, 2)], [*GOLD_AB, S(C, 1, 1)], [], 2, 1.0),
        ([], GOLD_AB, [], 10, 0.0),
        ([S(A, 1, 2)], [], [], 10, None),
    ],
)
def test_ndcg_at_k_hand_computed(
    hits: list[S], spans: list[S], files: list[str], k: int, expected: float | None
) -> None:
    result = m.ndcg_at_k(hits, spans, files, k)
    assert result == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("hits", "k", "expected"),
    [
        ([S(A, 1, 10), S(A, 5, 15), S(B, 1, 10), S(A, 20, 30)], None, 0.25),
        ([S(A, 1, 10), S(A, 1, 10), S(A, 1, 10)], None, 2 / 3),  # exact duplicates
        ([S(A, 1, 10), S(B, 1, 10), S(C, 1, 10)], None, 0.0),  # same lines, other files
        ([S(A, 1, 10), S(B, 1, 10), S(A, 2, 3)], 2, 0.0),  # the duplicate is past the cut
        ([], None, None),
    ],
)
def test_duplicate_rate_hand_computed(hits: list[S], k: int | None, expected: float | None) -> None:
    assert m.duplicate_rate(hits, k) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("citations", "spans", "files", "expected"),
    [
        ([S(A, 1, 2), S(A, 15, 15), S(C, 1, 1)], GOLD_AB, [A, B], 1 / 3),
        ([S(A, 15, 15), S(A, 15, 15)], GOLD_AB, [], 1.0),  # duplicate citations both count
        ([S(A, 100, 200), S(C, 1, 2)], [], [A], 0.5),  # only gold files: the file decides
        ([], GOLD_AB, [], None),  # nothing cited
        ([S(A, 1, 2)], [], [], None),  # no gold
    ],
)
def test_citation_precision_hand_computed(
    citations: list[S], spans: list[S], files: list[str], expected: float | None
) -> None:
    assert m.citation_precision(citations, spans, files) == (None if expected is None else pytest.approx(expected))


@pytest.mark.parametrize(
    ("text", "phrases", "expected"),
    [
        ("Use attr.EVOLVE() to copy.", ["evolve"], 1.0),
        ("Use evolve.", ["evolve", "asdict"], 0.0),  # every phrase is needed
        ("Die STRASSE", ["straße"], 1.0),  # casefold, not lower
        ("anything", [], None),
    ],
)
def test_answer_hit_case_insensitive_all_phrases(text: str, phrases: list[str], expected: float | None) -> None:
    assert m.answer_hit(text, phrases) == expected


class Cited(NamedTuple):
    path: str
    start_line: int
    end_line: int
    evidence_id: str


GOLD_SPAN = S(A, 10, 20)
RIGHT, WRONG = Cited(A, 12, 14, "1"), Cited(B, 1, 9, "2")
WRONG_DOC = (
    "`field` (function) is defined in b.py at lines 1-9 [2]. Its signature is `def field(*, factory=None)` [2]. "
    "Does nothing unless the class is also decorated with attrs.define. [2]"
)


@pytest.mark.parametrize(
    ("text", "phrases", "citations", "expected"),
    [
        # a phrase only in a docstring quoted from the wrong function does not count
        (WRONG_DOC, ["attrs.define"], [WRONG], 0.0),
        # ... but the same quote from evidence on the gold span does
        (WRONG_DOC.replace("[2]", "[1]"), ["attrs.define"], [RIGHT], 1.0),
        # code the answer shows (a signature in backticks) counts, whichever item it comes from
        (WRONG_DOC, ["factory"], [WRONG], 1.0),
        # a fenced code block counts
        ("The section says [2]:\n```python\n@frozen\nclass C: ...\n```\nMore prose [2].", ["@frozen"], [WRONG], 1.0),
        # the answer's own sentence (no marker covers it) counts
        ("`field` is in b.py [2]. Use attrs.define for new code.", ["attrs.define"], [WRONG], 1.0),
        ("Use attrs.define for new code.\n`field` is in b.py [2].", ["attrs.define"], [WRONG], 1.0),
        # ... but a sentence of a run that quotes the wrong item, its marker after the run's last sentence, does not
        ("It says use attrs.define for new code. `field` is in b.py [2].", ["attrs.define"], [WRONG], 0.0),
        ("It says use attrs.define for new code. `field` is in b.py [1].", ["attrs.define"], [RIGHT], 1.0),
        # a list's items are cited by the line that introduces them
        ("The docs list [2]:\n- attrs.define for new code\n- attr.s for old", ["attrs.define"], [WRONG], 0.0),
        ("The docs list [1]:\n- attrs.define for new code\n- attr.s for old", ["attrs.define"], [RIGHT], 1.0),
        # the rest of a list item is the item's: a candidate line's sentences after its marker
        ("- a place [2]: `f`. It says attrs.define.", ["attrs.define"], [WRONG], 0.0),
        # a sentence citing the right and the wrong item counts
        ("It is attrs.define [1] [2].", ["attrs.define"], [RIGHT, WRONG], 1.0),
        # a marker that names no citation (uncited evidence) is not trusted
        ("It is attrs.define [3].", ["attrs.define"], [RIGHT], 0.0),
        # every phrase must count
        (WRONG_DOC + " Gold says evolve [1].", ["evolve", "attrs.define"], [RIGHT, WRONG], 0.0),
        # without gold spans or evidence ids the whole text counts, as before
        (WRONG_DOC, ["attrs.define"], [S(B, 1, 9)], 1.0),
    ],
    ids=["wrong-docstring", "right-docstring", "cited-code", "fenced-code", "own-sentence", "own-line",
         "run-of-wrong-quote", "run-of-right-quote", "list-of-wrong-quote", "list-of-right-quote",
         "rest-of-item", "mixed-markers",
         "uncited-marker", "all-phrases", "no-evidence-ids"],
)
def test_answer_hit_counts_own_sentences_and_code_not_quotes_of_wrong_items(
    text: str, phrases: list[str], citations: list, expected: float
) -> None:
    assert m.answer_hit(text, phrases, citations, [GOLD_SPAN]) == expected


def test_answer_hit_without_gold_spans_reads_the_whole_answer() -> None:
    assert m.answer_hit(WRONG_DOC, ["attrs.define"], [WRONG], []) == 1.0


@pytest.mark.parametrize(
    ("text", "grounded", "expected"),
    [
        ("This was not found in the indexed sources.", True, True),
        ("I could not find anything about an ORM.", True, True),
        ("Use `evolve` [1].", False, True),  # ungrounded counts as declining
        ("Use `evolve` [1].", True, False),
    ],
)
def test_says_not_found_words_or_ungrounded(text: str, grounded: bool, expected: bool) -> None:
    assert m.says_not_found(text, grounded) is expected


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([1, 2, 3, 4], 50, 2.5), ([1, 2, 3, 4], 95, 3.85), ([7], 95, 7.0), ([], 50, None)],
)
def test_percentile_linear_interpolation(values: list[float], q: float, expected: float | None) -> None:
    assert m.percentile(values, q) == (None if expected is None else pytest.approx(expected))


def test_mean_skips_undefined() -> None:
    assert m.mean([1.0, None, 0.0]) == 0.5
    assert m.mean([None]) is None


# --- agreement with ranx -------------------------------------------------------------------------------------

def _cases() -> list[tuple[list[str], set[str]]]:
    """Ranked doc ids and relevant doc ids: fixed edge cases plus seeded random ones."""
    cases = [
        (["d1", "d2", "d3"], {"d1"}),
        (["d1", "d2", "d3"], {"d3"}),
        (["d4", "d5", "d6"], {"d1", "d2"}),  # nothing relevant retrieved
        (["d1", "d2", "d3", "d4"], {"d2", "d4", "d9"}),  # a relevant item never retrieved
        ([f"d{i}" for i in range(12)], {"d0", "d11"}),  # relevant item beyond k=10
    ]
    rng = random.Random(7)
    for _ in range(20):
        ranked = rng.sample([f"d{i}" for i in range(30)], rng.randint(1, 15))
        cases.append((ranked, set(rng.sample([f"d{i}" for i in range(30)], rng.randint(1, 6)))))
    return cases


def _as_spans(doc: str, layout: str) -> S:
    """A doc id as a span: its own file, or a disjoint line range of one shared file."""
    n = int(doc[1:])
    return S(f"{doc}.py", 1, 10) if layout == "files" else S("shared.py", 10 * n + 1, 10 * n + 5)


@pytest.mark.parametrize("layout", ["files", "shared-file"])
def test_metrics_agree_with_ranx(layout: str) -> None:
    cases = _cases()
    # ranx returns per-query scores in sorted query-id order, hence the zero padding.
    qrels = Qrels({f"q{i:03d}": {d: 1 for d in rel} for i, (_, rel) in enumerate(cases)})
    run = Run({f"q{i:03d}": {d: float(len(r) - j) for j, d in enumerate(r)} for i, (r, _) in enumerate(cases)})
    names = ["mrr", "ndcg@10", "ndcg@3", "recall@1", "recall@3", "recall@10"]
    reference = evaluate(qrels, run, names, return_mean=False)
    for i, (ranked, relevant) in enumerate(cases):
        hits = [_as_spans(d, layout) for d in ranked]
        gold = [_as_spans(d, layout) for d in sorted(relevant)]
        ours = {
            "mrr": m.span_mrr(hits, gold),
            "ndcg@10": m.ndcg_at_k(hits, gold, [], 10),
            "ndcg@3": m.ndcg_at_k(hits, gold, [], 3),
            "recall@1": m.span_recall_at_k(hits, gold, 1),
            "recall@3": m.span_recall_at_k(hits, gold, 3),
            "recall@10": m.span_recall_at_k(hits, gold, 10),
        }
        if layout == "files":  # one span per file: the file metrics are the same quantities
            files = [g.path for g in gold]
            ours_files = {"mrr": m.file_mrr(hits, files), "ndcg@10": m.ndcg_at_k(hits, [], files, 10),
                          "recall@3": m.file_recall_at_k(hits, files, 3)}
            for name, value in ours_files.items():
                assert value == pytest.approx(reference[name][i]), (name, ranked, relevant)
        for name, value in ours.items():
            assert value == pytest.approx(reference[name][i]), (name, ranked, relevant)


@pytest.mark.parametrize(("hit", "citations", "spans", "files", "not_found", "expected"), [
    (1.0, [S("a.py", 12, 14)], [S("a.py", 10, 20)], [], None, 1.0),
    (1.0, [S("b.py", 12, 14)], [S("a.py", 10, 20)], [], None, 0.0),  # the phrase, but cited elsewhere
    (0.0, [S("a.py", 12, 14)], [S("a.py", 10, 20)], [], None, 0.0),  # the place, but not the phrase
    (1.0, [], [S("a.py", 10, 20)], [], None, 0.0),  # nothing cited
    (1.0, [S("a.py", 1, 2)], [], ["a.py"], None, 1.0),  # only gold files
    (None, [S("a.py", 12, 14)], [S("a.py", 10, 20)], [], None, None),  # no phrases to judge
    (None, [], [], [], True, 1.0),  # a negative answered "not found"
    (None, [S("a.py", 1, 2)], [], [], False, 0.0),  # a negative answered anyway
])
def test_answer_right(hit, citations, spans, files, not_found, expected) -> None:
    assert m.answer_right(hit, citations, spans, files, not_found) == expected


def test_calibration_per_level() -> None:
    rows = [("high", 1.0, True), ("high", 1.0, True), ("high", 0.0, True), ("medium", 0.0, True),
            ("low", 1.0, False), ("low", None, True), (None, 1.0, True)]  # no level: not counted
    table = m.calibration(rows)
    assert list(table) == ["high", "medium", "low"]
    assert table["high"] == {"answers": 3, "share": 0.5, "share_answerable": 0.6, "right": pytest.approx(2 / 3)}
    assert table["medium"] == {"answers": 1, "share": pytest.approx(1 / 6), "share_answerable": 0.2, "right": 0.0}
    assert table["low"]["answers"] == 2 and table["low"]["right"] == 1.0  # the unjudged row is skipped
    empty = m.calibration([])
    assert empty["high"] == {"answers": 0, "share": None, "share_answerable": None, "right": None}


@pytest.mark.parametrize(("rows", "answerable", "expected"), [
    # Ten answerable questions: the top 1, 2, 3 and 4 answers by score.
    ([(0.9, 1.0), (0.8, 0.0), (0.7, 1.0), (0.6, 1.0), (0.1, 0.0)], 10, {0.1: 1.0, 0.2: 0.5, 0.3: 2 / 3, 0.4: 0.75}),
    # Unsorted input, unjudged rows skipped; four answerable questions round a tenth to none.
    ([(0.2, 0.0), (0.5, None), (0.9, 1.0)], 4, {0.1: None, 0.2: 1.0, 0.3: 1.0, 0.4: 0.5}),
    # Fewer answers than the share asks for: not reachable, however right they are.
    ([(0.9, 1.0)], 10, {0.1: 1.0, 0.2: None, 0.3: None, 0.4: None}),
    ([], 0, {0.1: None, 0.2: None, 0.3: None, 0.4: None}),
])
def test_right_at_coverage(rows: list[tuple[float, float | None]], answerable: int,
                           expected: dict[float, float | None]) -> None:
    assert m.right_at_coverage(rows, answerable) == pytest.approx(expected)


@pytest.mark.parametrize(("a", "b", "expected"), [
    ([], [], (0.0, 0.0, 0.0)),
    ([1.0], [0.0], (1.0, 1.0, 1.0)),  # one question: no interval to estimate
    ([1.0, 0.0, 1.0], [0.0, -1.0, 0.0], (1.0, 1.0, 1.0)),  # the same difference everywhere: no spread
])
def test_paired_difference_degenerate(a: list[float], b: list[float], expected: tuple[float, float, float]) -> None:
    assert m.paired_difference(a, b) == expected


def test_paired_difference_interval_holds_the_mean_and_narrows_with_more_questions() -> None:
    rng = random.Random(3)
    few_a = [float(rng.random() < 0.6) for _ in range(30)]
    few_b = [float(rng.random() < 0.4) for _ in range(30)]
    diff, lo, hi = m.paired_difference(few_a, few_b)
    assert diff == pytest.approx(sum(few_a) / 30 - sum(few_b) / 30)
    assert lo < diff < hi
    many_diff, many_lo, many_hi = m.paired_difference(few_a * 10, few_b * 10)
    assert many_diff == pytest.approx(diff)
    assert many_hi - many_lo < (hi - lo) / 2  # ten times the questions: about a third of the width
    assert m.paired_difference(few_a, few_b) == (diff, lo, hi)  # seeded


def test_paired_difference_pairs_questions() -> None:
    # Every question gains exactly 0.25 but the questions differ widely: paired, the interval is the point;
    # compared as two independent samples it would be wide.
    b = [0.0, 0.5, 0.25, 0.75, 0.1, 0.6]
    diff, lo, hi = m.paired_difference([x + 0.25 for x in b], b)
    assert (diff, lo, hi) == pytest.approx((0.25, 0.25, 0.25))


def test_paired_difference_rejects_unpaired_values() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        m.paired_difference([1.0, 0.0], [1.0])
