"""Fusion: RRF, overlap dedup and grouping, on hand-computed tables (the ranker's score: test_ranker.py)."""

from __future__ import annotations

import pytest

from sift.models import Hit, display_name
from sift.retrievers.fusion import (
    dedup_overlaps,
    duplicate_rate,
    fuse,
    group_by_file,
    later_parts_down,
    rrf,
    sort_hits,
)


def hit(cid, path="a.py", start=1, end=5, score=1.0, kind="function", name="f", channel="bm25", part=None):
    return Hit(chunk_id=cid, node_id=None, path=path, start_line=start, end_line=end, kind=kind,
               name=display_name(name, part), symbol=name, part=part, score=score, channel=channel, rank=0,
               channels=(channel,))


@pytest.mark.parametrize(
    ("rankings", "k", "expected"),
    [
        ([], 60, {}),
        ([[1, 2]], 60, {1: 1 / 61, 2: 1 / 62}),
        ([[1, 2], [2, 1]], 60, {1: 1 / 61 + 1 / 62, 2: 1 / 62 + 1 / 61}),  # tie
        ([[1], [2], [1]], 1, {1: 1.0, 2: 0.5}),
        ([[1, 1, 2]], 60, {1: 1 / 61, 2: 1 / 63}),  # a duplicate counts at its best rank; ranks are positions
    ],
)
def test_rrf_table(rankings, k, expected):
    got = rrf(rankings, k=k)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value)


def test_dedup_overlaps_keeps_tighter_better_span():
    cls = hit(1, start=1, end=50, score=1.0, kind="class", name="A")
    method = hit(2, start=10, end=20, score=0.8, name="A.m", channel="vector")
    weak_inner = hit(3, path="a.py", start=30, end=35, score=0.1, name="A.n")
    far_weaker_inside = hit(5, start=12, end=14, score=0.2, name="A.m.inner")
    other_file = hit(4, path="b.py", start=1, end=50, score=0.5)
    out = dedup_overlaps(sort_hits([cls, method, weak_inner, other_file, far_weaker_inside]))
    # The method replaces its class (tighter, and close in score); another method outside it stays distinct.
    assert [(h.chunk_id, h.score) for h in out] == [(2, 1.0), (4, 0.5), (3, 0.1)]
    assert out[0].channels == ("bm25", "vector")


def test_dedup_overlaps_whole_file_chunk_yields_to_any_span_inside():
    file_chunk = hit(1, start=1, end=400, score=1.0, kind="file", name="a.py")
    fn = hit(2, start=100, end=120, score=0.05)
    assert [h.chunk_id for h in dedup_overlaps([file_chunk, fn])] == [2]


def test_dedup_overlaps_adjacent_ranges_are_not_duplicates():
    out = dedup_overlaps([hit(1, start=1, end=10), hit(2, start=11, end=20, score=0.9)])
    assert [h.chunk_id for h in out] == [1, 2]


def test_fuse_merges_channels_ranks_and_breaks_ties_by_path():
    a = [hit(1, path="b.py", name="x"), hit(2, path="a.py", start=100, end=110, name="y")]
    b = [hit(2, path="a.py", start=100, end=110, name="y", channel="vector"),
         hit(1, path="b.py", name="x", channel="vector")]
    out = fuse([a, b])
    assert [(h.path, h.rank) for h in out] == [("a.py", 1), ("b.py", 2)]  # equal scores: path order
    assert out[0].channels == ("bm25", "vector") and out[0].channel == "fused"


def _places(spec):
    """Hits from ``(file, symbol)`` pairs, scores 10, 9, 8 …, each in its own lines."""
    return [hit(i, path=f, start=10 * i + 1, end=10 * i + 5, score=10.0 - i, name=sym) for i, (f, sym) in enumerate(spec)]


@pytest.mark.parametrize(
    ("spec", "depth", "order"),
    [
        ([], 3, []),
        ([("a.py", "f"), ("b.py", "g")], 3, [0, 1]),  # distinct places keep their order
        ([("a.py", "f"), ("a.py", "f"), ("b.py", "g"), ("c.py", "h"), ("d.py", "k"), ("e.py", "m")], 3,
         [0, 2, 3, 4, 1, 5]),  # the second part of f moves three places down
        ([("a.py", "f"), ("a.py", "f"), ("a.py", "f"), ("b.py", "g")], 3, [0, 3, 1, 2]),  # below the end: in order
        ([("a.py", "f"), ("b.py", "f"), ("a.py", "g")], 3, [0, 1, 2]),  # one symbol in two files: two places
        ([("a.py", "f"), ("a.py", "f"), ("b.py", "g")], 0, [0, 1, 2]),  # depth 0: unchanged
        ([("a.py", "f"), ("b.py", "g"), ("a.py", "f"), ("c.py", "h")], 1, [0, 1, 3, 2]),
    ],
)
def test_later_parts_down_table(spec, depth, order):
    hits = _places(spec)
    out = later_parts_down(hits, depth)
    assert [h.chunk_id for h in out] == order
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    assert sort_hits(out) == out  # a later sort keeps the order: scores strictly follow it where hits moved


def test_later_parts_down_in_fuse():
    """With ``spread_parts`` (fused search's list), fuse moves the second part of a section below the next
    distinct places, and ranks stay 1..n; without (the graph's evidence), parts keep the ranker's order."""
    spec = [("README.md", "Usage", 1), ("README.md", "Usage", 2), ("a.md", "Install", None), ("b.md", "Config", None),
            ("c.md", "Errors", None), ("d.md", "Tests", None)]
    vector = [hit(i + 1, path=f, start=40 * i + 1, end=40 * i + 40, kind="doc", name=n, part=part, score=0.9 - 0.05 * i,
                  channel="vector") for i, (f, n, part) in enumerate(spec)]
    assert [h.chunk_id for h in fuse([vector])] == [1, 2, 3, 4, 5, 6]
    out = fuse([vector], spread_parts=True)
    assert [h.chunk_id for h in out] == [1, 3, 4, 5, 2, 6]
    assert [h.rank for h in out] == [1, 2, 3, 4, 5, 6]
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)


def test_fuse_empty():
    assert fuse([]) == [] and fuse([[], []]) == []


def test_duplicate_rate_and_grouping():
    hits = [hit(1, start=1, end=10), hit(2, start=5, end=8), hit(3, path="b.py")]
    assert duplicate_rate(hits) == pytest.approx(1 / 3)
    assert duplicate_rate([]) == 0.0
    grouped = group_by_file(hits, {1: "snip"})
    assert list(grouped) == ["a.py", "b.py"] and grouped["a.py"][0]["snippet"] == "snip"
