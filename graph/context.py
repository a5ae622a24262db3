"""The run context: dependencies reach the nodes through LangGraph's ``context_schema``, never through globals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from sift.config import Settings

MAX_ROUNDS = 6


@dataclass
class AskContext:
    """What every node may use: the database, the fused searcher, settings and an optional chat model.

    ``chat_model`` is a LangChain chat model (``ChatOpenAI``); without one the extractive answerer is used.
    ``max_rounds`` bounds fallback rounds; ``channel_timeout_ms`` bounds each parallel retrieve branch.
    """

    engine: Engine | None = None
    searcher: Any = None
    settings: Settings = field(default_factory=Settings)
    chat_model: Any = None
    max_rounds: int = MAX_ROUNDS
    channel_timeout_ms: int = 1500
    llm_retries: int = 2
    llm_backoff_s: float = 0.2
    delay_ms: dict[str, int] = field(default_factory=dict)  # per-channel artificial delay (timing tests, demos)
