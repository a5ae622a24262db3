"""Checkpoints keep loading across the move of the answer's models from ``graph/state.py`` to ``graph/models.py``."""

from __future__ import annotations

import pytest

from sift.graph import models
from sift.graph.checkpointer import make_serde
from sift.graph.state import reset


def _written_from(module: str) -> tuple[str, bytes]:
    """A checkpoint value as a process whose models lived in ``module`` serialized it."""
    classes = (models.Plan, models.Draft, models.Evidence)
    try:
        for cls in classes:
            cls.__module__ = module
        return make_serde().dumps_typed({
            "plan": models.Plan(standalone="how are tokens refreshed"),
            "draft": models.Draft(text="It refreshes them [1].", note="weak-evidence"),
            "evidence": reset([models.Evidence(id=1, path="a.py", start_line=1, end_line=2, kind="function", name="load", score=1.0,
                                              text="x")]),
        })
    finally:
        for cls in classes:
            cls.__module__ = "sift.graph.models"


@pytest.mark.parametrize("module", ["sift.graph.models", "sift.graph.state"])
def test_checkpointed_models_load_from_either_module(module: str) -> None:
    value = make_serde().loads_typed(_written_from(module))
    assert value["plan"] == models.Plan(standalone="how are tokens refreshed")
    assert value["draft"].note == "weak-evidence" and isinstance(value["draft"], models.Draft)
    assert value["evidence"].items[0]["path"] == "a.py"
