"""The fitted files sift ships, in this one folder, read through one loader.

Each file is data that a script under ``lab/fit/`` wrote from other projects' text or from the dev sets
(``lab/README.md`` says how to reproduce each): weights, thresholds and word lists, nothing else. How each was
chosen (penalty grids, held-out figures, calibration tables) is the lab's and stays in ``lab/fit/diagnostics/``.

- ``RANKER``: fused search's log-linear ranker (``sift.retrievers.ranker``).
- ``CONFIDENCE``: the answer confidence's logistic model and thresholds (``sift.graph.writer.confidence``).
- ``DOCSTRING_VERBS``: the verbs that open docstring summaries, with their third person (``sift.graph.writer.docstrings``).
- ``GENERIC_WORDS``: how each word spreads over the train packages, for what counts as generic phrasing
  (``sift.graph.writer.terms``).
- ``QUERY_ADAPTER``: the local model's linear query adapter (``sift.query_adapter``).

``load`` reads a file once per process; what it returns is shared, so callers read it and never change it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

RANKER = "ranker_weights.json"
CONFIDENCE = "confidence_weights.json"
DOCSTRING_VERBS = "docstring_verbs.json"
GENERIC_WORDS = "generic_words.json"
QUERY_ADAPTER = "query_adapter.npz"
NAMES = (RANKER, CONFIDENCE, DOCSTRING_VERBS, GENERIC_WORDS, QUERY_ADAPTER)


def ships(name: str) -> bool:
    """Whether the installed package holds the fitted file ``name``."""
    return resources.files(__name__).joinpath(name).is_file()


@cache
def load(name: str) -> dict[str, Any]:
    """The fitted file ``name``: a JSON file's document, or an ``.npz`` file's arrays by name (read in full).
    Raises ``FileNotFoundError`` when the package holds no such file (``ships`` asks first)."""
    path = resources.files(__name__).joinpath(name)
    if name.endswith(".npz"):
        with path.open("rb") as f, np.load(f) as z:
            return {key: z[key] for key in z.files}
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document
