"""The run context: dependencies reach the nodes through LangGraph's ``context_schema``, never through globals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from sift.config import LLMRole, Settings

if TYPE_CHECKING:  # the searcher's and chat model's modules load with the resources, not with the graph
    from langchain_core.language_models import BaseChatModel

    from sift.graph.writer import Closeness, ConfidenceModel
    from sift.retrievers.search import Searcher

MAX_ROUNDS = 6


def _fitted_confidence() -> ConfidenceModel:
    from sift.graph.writer import load_model  # with the graph, not with this module

    return load_model()


@dataclass(frozen=True)
class RunLimits:
    """The tunables of one run: ``max_rounds`` bounds fallback rounds, ``channel_timeout_ms`` each parallel
    retrieve branch, ``llm_retries`` and ``llm_backoff_s`` the retries of a failed model call. With
    ``wall_clock=False`` neither the branch timeout nor the plan's time budget applies, so what a run answers does
    not depend on how busy the machine is (evaluation runs; a service keeps the default)."""

    max_rounds: int = MAX_ROUNDS
    channel_timeout_ms: int = 1500
    llm_retries: int = 2
    llm_backoff_s: float = 0.2
    wall_clock: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> RunLimits:
        """The limits ``SIFT_BRANCH_TIMEOUT_MS`` asks for: that branch timeout, or no wall clock at all for 0."""
        if settings.branch_timeout_ms == 0:
            return cls(wall_clock=False)
        return cls(channel_timeout_ms=settings.branch_timeout_ms)


@dataclass
class AskContext:
    """What every node may use: the database, the fused searcher, settings and an optional chat model
    (a LangChain ``ChatOpenAI``; without one the extractive answerer is used), the run's limits and the fitted
    confidence model.

    The entry point builds the settings and opens the resources; nothing here reads the environment.
    """

    engine: Engine
    searcher: Searcher
    settings: Settings
    chat_model: BaseChatModel | None = None
    limits: RunLimits = field(default_factory=RunLimits)
    confidence: ConfidenceModel = field(default_factory=_fitted_confidence)

    def uses_llm(self, role: LLMRole) -> bool:
        """Whether the model plays ``role`` in this run: one is configured and ``SIFT_LLM_ROLES`` lists the role."""
        return self.chat_model is not None and self.settings.llm_plays(role)

    def require_chat_model(self) -> BaseChatModel:
        """The chat model, for the LLM paths (which run only when one is configured)."""
        if self.chat_model is None:
            raise RuntimeError("no chat model is configured: set SIFT_LLM_BASE_URL and SIFT_LLM_MODEL")
        return self.chat_model

    def closeness(self, question: str, max_chars: int | None = None) -> Closeness | None:
        """How close texts (their first ``max_chars``, by default a sentence's) are in meaning to ``question``:
        the local model's (the searcher's own embedder); None with a remote embedder, whose every call is a
        request."""
        if self.settings.embed_base_url:
            return None
        from sift.graph.writer import closeness_to

        if max_chars:
            return closeness_to(self.searcher.embedder, question, max_chars)
        return closeness_to(self.searcher.embedder, question)
