"""The linear query adapter: its algebra, which model it applies to, and the shipped weights."""

from __future__ import annotations

import numpy as np
import pytest

from sift.embed import DEFAULT_LOCAL_MODEL
from sift.query_adapter import QueryAdapter, adapter_for, shipped_adapter


def test_identity_adapter_only_normalises() -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 4)).astype(np.float32)
    out = QueryAdapter(np.eye(4, dtype=np.float32), "m").apply(q)
    np.testing.assert_allclose(out, q / np.linalg.norm(q, axis=1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize(
    ("matrix", "q", "expected"),
    [
        ([[2.0, 0.0], [0.0, 1.0]], [1.0, 1.0], [2 / 5**0.5, 1 / 5**0.5]),  # stretches one direction
        ([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], [0.0, 1.0]),  # swaps two
        ([[1.0, 0.0], [0.0, 1.0]], [3.0, 4.0], [0.6, 0.8]),
    ],
)
def test_adapter_is_a_q_over_its_norm(matrix: list, q: list, expected: list) -> None:
    out = QueryAdapter(np.array(matrix, dtype=np.float32), "m").apply(np.array([q], dtype=np.float32))
    np.testing.assert_allclose(out[0], expected, rtol=1e-6)
    assert out.dtype == np.float32


def test_a_zero_vector_stays_finite() -> None:
    out = QueryAdapter(np.eye(3, dtype=np.float32), "m").apply(np.zeros((1, 3), dtype=np.float32))
    assert np.isfinite(out).all()


def test_the_shipped_adapter_is_for_the_packaged_model_only() -> None:
    adapter = shipped_adapter()
    assert adapter is not None, "sift/fitted/query_adapter.npz is missing: run lab/fit/query_adapter.py"
    assert adapter.model_id == f"local:{DEFAULT_LOCAL_MODEL}"
    assert adapter.matrix.shape == (384, 384) and adapter.matrix.dtype == np.float32
    assert np.isfinite(adapter.matrix).all()
    # Penalised towards the identity: a nudge, not a new space.
    assert np.linalg.norm(adapter.matrix - np.eye(384)) < np.linalg.norm(np.eye(384))
    assert adapter_for(adapter.model_id) is adapter
    assert adapter_for("openai:text-embedding-3-small") is None
    assert adapter_for(adapter.model_id + "+mean") is None
