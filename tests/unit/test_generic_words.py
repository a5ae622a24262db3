"""The measures behind ``sift/fitted/generic_words.json`` (lab/fit/generic_words.py), and the committed
file's shape."""

from __future__ import annotations

import math

import pytest

from lab.fit.generic_words import MAX_RIDF, MIN_ENTROPY, measures
from sift import fitted
from sift.graph.writer.terms import GENERIC_CUTS


@pytest.mark.parametrize(("n", "df", "cf", "per_package", "packages", "entropy", "ridf"), [
    # one package has every occurrence: no spread
    (1000, 10, 10, [10], 4, 0.0, math.log2(100) + math.log2(-math.expm1(-0.01))),
    # equal shares in every package: full spread
    (1000, 40, 40, [10, 10, 10, 10], 4, 1.0, math.log2(25) + math.log2(-math.expm1(-0.04))),
    # each chunk that has it has it ten times: a burst, far above the Poisson idf
    (1000, 4, 40, [20, 20], 4, 0.5, math.log2(250) + math.log2(-math.expm1(-0.04))),
])
def test_measures(n: int, df: int, cf: int, per_package: list[int], packages: int, entropy: float,
                  ridf: float) -> None:
    got = measures(n, df, cf, per_package, packages)
    assert got == pytest.approx((entropy, ridf))


def test_a_word_spread_thinly_has_a_residual_idf_near_zero() -> None:
    thin = measures(10_000, 100, 100, [50, 50], 2)[1]
    bursty = measures(10_000, 10, 100, [50, 50], 2)[1]
    assert abs(thin) < 0.01 and bursty > 3.0


def test_committed_file_holds_the_widest_cut() -> None:
    data = fitted.load(fitted.GENERIC_WORDS)
    assert (data["min_entropy"], data["max_ridf"]) == (MIN_ENTROPY, MAX_RIDF)
    assert min(e for e, _ in GENERIC_CUTS) == MIN_ENTROPY and max(r for _, r in GENERIC_CUTS) == MAX_RIDF
    words = data["words"]
    assert list(words) == sorted(words) and len(words) >= 1000
    assert all(e >= MIN_ENTROPY and r <= MAX_RIDF for e, r in words.values())
