"""A linear query adapter for the local model: questions in a newcomer's words moved towards the code they ask about.

MiniLM was trained on prose pairs, and a question ("how do I stop retrying after a while?") and the definition
that answers it are further apart in its space than two paraphrases are. The adapter is one matrix ``A``, fitted
by ``lab/fit/query_adapter.py`` on pairs mined from other projects: a query vector ``q`` becomes
``A q / |A q|``, while documents keep the vectors they were indexed with. So no knowledge base is embedded again;
the adapter only changes where a query looks. ``A`` starts from the identity and its fit is penalised towards
it, so it nudges rather than replaces the model's notion of similarity.

The weights ship with the package (the fitted file ``sift.fitted.QUERY_ADAPTER``) and apply only on top of the
model they were fitted for (its ``model_id``), never to another embedder.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from sift import fitted


@dataclass(frozen=True)
class QueryAdapter:
    """A ``dim × dim`` matrix for queries of one embedding model."""

    matrix: np.ndarray
    model_id: str

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """``A q / |A q|`` for each row ``q`` (float32, unit length)."""
        out = np.asarray(vectors, dtype=np.float32) @ self.matrix.T
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32)


@cache
def shipped_adapter() -> QueryAdapter | None:
    """The adapter packaged with sift, or None when the package holds none (read once per process)."""
    if not fitted.ships(fitted.QUERY_ADAPTER):
        return None
    z = fitted.load(fitted.QUERY_ADAPTER)
    return QueryAdapter(np.ascontiguousarray(z["matrix"], dtype=np.float32), str(z["model_id"]))


def adapter_for(model_id: str) -> QueryAdapter | None:
    """The shipped adapter when it was fitted for ``model_id``, else None."""
    adapter = shipped_adapter()
    return adapter if adapter is not None and adapter.model_id == model_id else None
