"""The sparse BM25 index ranks exactly like rank_bm25's BM25Okapi on a real repository (the attrs sdist)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from sift.index.bm25 import BM25Index
from sift.tokenize import tokenize

QUERIES = [
    "frozen instances",
    "how do validators work",
    "define a class with attrs.define",
    "converters run before validators",
    "slots classes and weakref",
    "asdict recurse into collections",
    "evolve an instance with changes",
    "field default factory",
    "Factory takes_self",
    "hash and eq comparison",
    "order=True comparison methods",
    "kw_only arguments",
    "on_setattr hooks",
    "__attrs_post_init__",
    "__attrs_pre_init__ called before",
    "make_class dynamically",
    "cached_property on slotted classes",
    "instance_of validator raises TypeError",
    "optional validator None",
    "deep_iterable member_validator",
    "NothingType NOTHING sentinel",
    "resolve_types string annotations",
    "auto_attribs annotations",
    "filters include exclude",
    "pickle getstate setstate",
    "repr_ns custom repr",
    "Attribute metadata",
    "changelog deprecated",
    "AttrsInstance protocol",
    "mypy plugin",
    "has() returns True for attrs classes",
    "fields_dict ordering",
    "validate(inst) runs all validators",
    "unsafe_hash cache_hash",
    "inheritance collect_by_mro",
    "zope interface provides",
    "attr.ib vs attrs.field",
    "performance benchmarks",
]


def _chunks(root: Path, lines_per_chunk: int = 40) -> list[str]:
    """Every .py and .md file of ``root`` cut into ~40-line pieces, in path order."""
    out: list[str] = []
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.md")]):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for start in range(0, max(len(lines), 1), lines_per_chunk):
            out.append(f"{path.relative_to(root)}\n" + "\n".join(lines[start : start + lines_per_chunk]))
    return out


def _reference_top(ref: BM25Okapi, query: list[str], k: int) -> list[tuple[int, float]]:
    """BM25Okapi top-k over documents containing a query term: score desc, then id asc."""
    scores = ref.get_scores(query)
    matched = [i for i, freqs in enumerate(ref.doc_freqs) if any(q in freqs for q in query)]
    matched.sort(key=lambda i: (-scores[i], i))
    return [(i, float(scores[i])) for i in matched[:k]]


@pytest.fixture(scope="module")
def corpus(attrs_src: Path) -> list[list[str]]:
    return [tokenize(text) for text in _chunks(attrs_src)]


def test_bm25_parity_top10_equals_bm25okapi(corpus: list[list[str]]) -> None:
    assert len(corpus) > 200
    ref = BM25Okapi(corpus)
    index = BM25Index.build(list(range(len(corpus))), corpus)
    compared = 0
    for text in QUERIES:
        query = tokenize(text)
        expected = _reference_top(ref, query, 10)
        got = index.search(query, 10)
        assert [i for i, _ in got] == [i for i, _ in expected], text
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-6)
        compared += len(expected) == 10
    assert compared >= 30


def test_bm25_parity_with_filter(corpus: list[list[str]]) -> None:
    ref = BM25Okapi(corpus)
    index = BM25Index.build(list(range(len(corpus))), corpus)
    allowed = np.arange(len(corpus)) % 3 == 0
    for text in QUERIES[:10]:
        query = tokenize(text)
        expected = [(i, s) for i, s in _reference_top(ref, query, len(corpus)) if allowed[i]][:10]
        assert index.search(query, 10, allowed) == expected, text


def test_bm25_parity_after_save_load(corpus: list[list[str]], tmp_path: Path) -> None:
    index = BM25Index.build(list(range(len(corpus))), corpus)
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    for text in QUERIES:
        query = tokenize(text)
        assert loaded.search(query, 10) == index.search(query, 10)
