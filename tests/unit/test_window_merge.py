"""A chunk's vector-channel score is the best of its own vector's and its windows' (real FAISS indexes)."""

from __future__ import annotations

import numpy as np

from sift.index.vector import VectorIndex
from sift.retrievers.channels import _with_windows


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


Q = unit(1, 0, 0)
# Chunk 7 has two windows, one close to the query; chunk 8 one far window; chunk 9 none.
WINDOWS = VectorIndex.build([7, 7, 8], np.stack([unit(0, 1, 0), unit(1, 0.1, 0), unit(0, 0, 1)]))


def test_a_window_raises_its_chunk_to_the_windows_score() -> None:
    merged = dict(_with_windows([(7, 0.2), (9, 0.5)], WINDOWS, Q, 3, None))
    assert merged[7] > 0.99  # its best window, not its own vector's 0.2
    assert merged[9] == 0.5  # no windows: its own score


def test_a_window_never_lowers_a_chunk() -> None:
    assert dict(_with_windows([(8, 0.4)], WINDOWS, Q, 3, None))[8] == 0.4  # its window scores 0


def test_a_chunk_found_only_by_a_window_joins() -> None:
    assert set(dict(_with_windows([], WINDOWS, Q, 3, None))) == {7, 8}


def test_windows_respect_the_allowed_chunks() -> None:
    assert set(dict(_with_windows([(9, 0.5)], WINDOWS, Q, 3, np.array([8, 9])))) == {8, 9}
