"""BM25 formula functions and the sparse index on hand-computed cases."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from sift.index.bm25 import BM25Index, idf_okapi, idf_plus_one, term_scores

DOCS = {
    10: ["auth", "token", "token"],
    20: ["token", "secret"],
    30: ["guide", "intro"],
    40: ["auth", "token", "token"],  # identical to 10: an exact tie
}


def _index() -> BM25Index:
    return BM25Index.build(list(DOCS), list(DOCS.values()))


@pytest.mark.parametrize(
    ("n_docs", "doc_freqs", "epsilon", "expected"),
    [
        # log(4 - 1 + .5) - log(1 + .5) for a rare term
        (4, [1], 0.25, [math.log(3.5) - math.log(1.5)]),
        # n = N/2 gives exactly 0: not negative, so not floored
        (4, [2], 0.25, [0.0]),
        # a term in 3 of 4 docs is negative and floored to eps * mean idf over all terms
        (
            4,
            [1, 3],
            0.25,
            [
                math.log(3.5) - math.log(1.5),
                0.25 * ((math.log(3.5) - math.log(1.5)) + (math.log(1.5) - math.log(3.5))) / 2,
            ],
        ),
        (3, [], 0.25, []),
    ],
)
def test_idf_okapi_values(n_docs: int, doc_freqs: list[int], epsilon: float, expected: list[float]) -> None:
    np.testing.assert_allclose(idf_okapi(n_docs, doc_freqs, epsilon), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("tf", "dl", "avgdl", "idf", "expected"),
    [
        (1, 2, 2.0, 1.0, 1.0),  # dl == avgdl, tf 1: tf*(k1+1)/(tf+k1) = 1
        (2, 2, 2.0, 1.0, 2 * 2.5 / (2 + 1.5)),
        (1, 4, 2.0, 2.0, 2.0 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2))),
        (0, 3, 2.0, 5.0, 0.0),
    ],
)
def test_term_scores_values(tf: int, dl: int, avgdl: float, idf: float, expected: float) -> None:
    got = term_scores(np.array([tf]), np.array([dl]), avgdl, np.array([idf]), 1.5, 0.75)
    assert got[0] == pytest.approx(expected, rel=1e-12)


def test_bm25_search_matches_reference_scores() -> None:
    ref = BM25Okapi(list(DOCS.values()))
    got = dict(_index().search(["token", "secret"], k=10))
    expected = ref.get_scores(["token", "secret"])
    assert got == {10: expected[0], 20: expected[1], 40: expected[3]}


@pytest.mark.parametrize(
    ("query", "k", "allowed_ids", "expected_ids"),
    [
        (["auth", "token"], 10, None, [10, 40, 20]),  # tie between 10 and 40 broken by id
        (["auth", "token"], 1, None, [10]),  # the tie-break holds at the cut
        (["auth", "token"], 1, [20, 40], [40]),  # filtered before ranking
        (["token"], 2, [30], []),  # nothing allowed matches
        (["nothing"], 5, None, []),
        ([], 5, None, []),
        (["intro"], 0, None, []),
        (["intro", "intro"], 5, None, [30]),  # duplicate query tokens count twice
    ],
)
def test_bm25_search_ranking(
    query: list[str], k: int, allowed_ids: list[int] | None, expected_ids: list[int]
) -> None:
    index = _index()
    allowed = None if allowed_ids is None else index.mask_for(allowed_ids)
    assert [i for i, _ in index.search(query, k, allowed)] == expected_ids


def test_bm25_duplicate_query_tokens_add_twice() -> None:
    index = _index()
    (_, once), = index.search(["intro"], 1)
    (_, twice), = index.search(["intro", "intro"], 1)
    assert twice == 2 * once


def test_bm25_save_load_round_trip(tmp_path: Path) -> None:
    index = BM25Index.build([1, 2, 3], [["café", "x"], ["x", "y"], ["weird\nterm"]])
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert loaded.terms == index.terms
    assert loaded.params == index.params
    for q in (["x"], ["café"], ["weird\nterm", "y"]):
        assert loaded.search(q, 3) == index.search(q, 3)
    assert not list(tmp_path.glob("*.tmp"))


def test_bm25_empty_index() -> None:
    index = BM25Index.build([], [])
    assert len(index) == 0
    assert index.search(["x"], 5) == []


def test_bm25_sparse_and_dense_accumulation_agree_exactly():
    import random

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)]
    docs = [[rng.choice(vocab) for _ in range(rng.randint(3, 30))] for _ in range(2000)]
    index = BM25Index.build(list(range(100, 2100)), docs)
    for _ in range(50):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 4))]
        cand, sparse_scores = index._candidates(query)  # few postings: the sparse path
        dense, matched = index.scores(query)
        assert list(cand) == list(np.flatnonzero(matched))
        assert list(sparse_scores) == list(dense[cand])  # bit-identical floats


@pytest.mark.parametrize(
    ("n_docs", "doc_freq", "expected"),
    [
        (10, 0, math.log(10.5 / 0.5 + 1.0)),  # absent: the ceiling
        (10, 1, math.log(9.5 / 1.5 + 1.0)),
        (10, 10, math.log(0.5 / 10.5 + 1.0)),  # in every document: small but positive
    ],
)
def test_idf_plus_one_values(n_docs: int, doc_freq: int, expected: float) -> None:
    assert idf_plus_one(n_docs, doc_freq) == expected


def test_bm25_doc_freq_and_postings() -> None:
    index = BM25Index.build([7, 8, 9], [["a", "b"], ["b"], ["b", "c", "c"]])
    assert [index.doc_freq(t) for t in ("a", "b", "c", "zzz")] == [1, 3, 1, 0]
    assert index.ids[index.postings("c")].tolist() == [9]
    assert index.postings("zzz").tolist() == []


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 20])
def test_finish_in_blocks_scores_as_rank_bm25_does(monkeypatch, block):
    """Scored a few postings at a time, the matrix is the same, bit for bit, as ``BM25Okapi``'s scores."""
    import sift.index.bm25 as bm25

    monkeypatch.setattr(bm25, "FINISH_BLOCK", block)
    index = _index()
    reference = BM25Okapi(list(DOCS.values()))
    for query in (["token"], ["auth", "secret"], ["guide", "token", "token"]):
        scores, _ = index.scores(query)
        assert scores.tolist() == reference.get_scores(query).tolist()
    assert index.matrix.has_canonical_format and index.vocab == {t: i for i, t in enumerate(index.terms)}
