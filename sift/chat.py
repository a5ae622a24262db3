"""The chat model of an OpenAI-compatible server, shared by the graph's LLM path and the LLM boundary parser."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sift.config import Settings

if TYPE_CHECKING:  # langchain loads only when an LLM is configured
    from langchain_core.language_models import BaseChatModel

#: Transport failures (by class name: openai's and httpx's) that a retry may get past.
TRANSIENT_ERRORS = frozenset({"APITimeoutError", "APIConnectionError", "ReadTimeout", "ReadError", "ConnectError",
                              "RemoteProtocolError"})


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for the configured server, or None when no LLM is configured."""
    if not (settings.llm_base_url and settings.llm_model):
        return None
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    return ChatOpenAI(base_url=settings.llm_base_url, api_key=SecretStr(settings.llm_api_key or "not-needed"),
                      model=settings.llm_model, timeout=settings.llm_timeout_s, max_retries=0, temperature=0)


def is_transient(exc: BaseException) -> bool:
    """True for an upstream failure worth retrying: HTTP 429 or 5xx, or a timeout or dropped connection."""
    status = getattr(exc, "status_code", None)
    if status is not None:
        return bool(status == 429 or status >= 500)
    return type(exc).__name__ in TRANSIENT_ERRORS
