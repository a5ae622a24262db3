"""The extractive writer behind one door: a deterministic, LLM-free writer of answers from evidence text, and
the rating that says how far to trust a draft.

The graph (its nodes, the agent, retrieval) imports the writer through this module only; the writer imports the
answer's models (``sift.graph.models``) and the layers below the graph, never the state machine (an import
contract in pyproject.toml holds both). Its modules, by role:

- ``extractive``: writes the draft: cite the chosen evidence, or say it is not found (the entry point, ``write``).
- ``selection``: which evidence to cite (the fused ranker's order; list questions' modules and families).
- ``abstention``: when to say "not found" instead of guessing, and why (the draft's note).
- ``composition``: the answer's cited sentences and code blocks about the chosen evidence.
- ``doc_quotes`` / ``code_quotes``: what may be quoted from a documentation item / a definition.
- ``doc_units``: how documentation text divides into quotable units (sentences, items, rows, examples).
- ``code_reading``: a definition's lines read as code (one statement's lines, a class's declared names).
- ``docstrings``: docstring field lists and summaries in plain words.
- ``terms``: the question's terms and how much of them an evidence item shares.
- ``closeness``: closeness in meaning of a passage to the question (the local model's cosine).
- ``confidence``: the four signals and the fitted model that turns them into a level.
- ``uncertain``: an answer that is not confident says so and lists the candidate places.
- ``rating``: a draft's confidence and what follows from it (``rate``, ``near_draft``, ``final_confidence``).
"""

from __future__ import annotations

from sift.graph.writer.abstention import not_found
from sift.graph.writer.closeness import Closeness
from sift.graph.writer.closeness import closeness as closeness_to
from sift.graph.writer.confidence import TOP_RANKS, ConfidenceModel, load_model, top_channels
from sift.graph.writer.doc_units import open_fence
from sift.graph.writer.extractive import write_extractive as write
from sift.graph.writer.rating import final_confidence, near_draft, rate
from sift.graph.writer.selection import (
    MAX_MODULE_ITEMS,
    MODULE_CHANNEL,
    family_member,
    family_nouns,
    list_anchor,
    module_listing,
    without_bases,
)
from sift.graph.writer.terms import CEILING_KEY
from sift.graph.writer.uncertain import hedged

__all__ = [
    # writing and rating a draft
    "write", "not_found", "rate", "near_draft", "final_confidence", "hedged",
    "ConfidenceModel", "load_model", "Closeness", "closeness_to",
    # what retrieval and the fuse node share with the writer: list questions' evidence, top ranks, idf, fences
    "MAX_MODULE_ITEMS", "MODULE_CHANNEL", "family_member", "family_nouns", "list_anchor", "module_listing",
    "without_bases", "TOP_RANKS", "top_channels", "CEILING_KEY", "open_fence",
]
