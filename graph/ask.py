"""The entry point batch runs (``sift eval --mode answer``) call: one question, one answer."""

from __future__ import annotations

from graph.service import ask_sync
from graph.state import Answer
from sift.config import Settings


def answer_question(question: str, kb: str, settings: Settings, tenant: str = "default") -> Answer:
    """Answer one question on a fresh thread (opens the database, indexes and embedder for the call)."""
    return ask_sync(settings, question, kb, tenant)
