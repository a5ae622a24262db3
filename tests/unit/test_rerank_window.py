"""The cross-encoder's pure parts: which lines of a long candidate it reads, and its int8 storage."""

from __future__ import annotations

import numpy as np
import pytest

from lab.rerank.encoder import dequantise, quantise, window

LINES = ["def parse(argv):", "    a = 1", "    b = 2", "    if required:", "        raise MissingOption()",
         "    return a", "    # done"]


@pytest.mark.parametrize(
    ("question", "budget", "costs", "expected"),
    [
        # everything fits: every line, in order
        ("missing option", 100, [2] * 7, [0, 1, 2, 3, 4, 5, 6]),
        # the first line, then the run that holds the question's words
        ("what happens when a required option is missing", 6, [2] * 7, [0, 3, 4]),
        # no question word anywhere: the first run after the first line
        ("unrelated words entirely", 6, [2] * 7, [0, 1, 2]),
        # a tie keeps the earlier run
        ("return", 4, [2] * 7, [0, 5]),
        # a line longer than what is left is never cut: the best run without it
        ("is a required option missing", 6, [2, 2, 2, 2, 9, 2, 2], [0, 2, 3]),
        # nothing left after the first line
        ("missing option", 2, [2] * 7, [0]),
    ],
)
def test_window(question: str, budget: int, costs: list[int], expected: list[int]) -> None:
    assert window(question, LINES, budget, costs) == expected


def test_window_of_nothing() -> None:
    assert window("anything", [], 10, []) == []


def test_int8_storage_round_trip() -> None:
    rng = np.random.default_rng(0)
    tensors = {"m": rng.normal(size=(50, 16)).astype(np.float32), "v": rng.normal(size=16).astype(np.float32),
               "row": rng.normal(size=(1, 16)).astype(np.float32), "zero": np.zeros((3, 4), np.float32)}
    stored = quantise(tensors)
    assert stored["m"].dtype == np.int8 and stored["m:scale"].shape == (50,)
    assert stored["v"].dtype == np.float32 and stored["row"].dtype == np.float32  # vectors stay exact
    back = dequantise(stored)
    assert set(back) == set(tensors)
    # symmetric per-row int8: at most half a step of each row's scale off
    step = np.abs(tensors["m"]).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(back["m"] - tensors["m"]) <= step / 2 + 1e-7)
    np.testing.assert_array_equal(back["v"], tensors["v"])
    np.testing.assert_array_equal(back["zero"], 0)
