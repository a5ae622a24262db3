"""The chat model of an OpenAI-compatible server, shared by the graph's LLM path and the LLM boundary parser, and
what its failures mean.

An upstream failure is one of four kinds (``classify``): ``transient`` (HTTP 429 or 5xx, a timeout, a dropped
connection: retried with backoff), ``schema`` (a 400, 422 or 500 whose body rejects the ``json_schema``
response format: the call is made again in JSON mode, not retried), ``fatal`` (401, 403 or 404, or any other
4xx: the configuration is wrong, so the caller degrades at once) and ``output`` (a reply that does not parse or
was cut off at ``max_tokens``: retried, then degraded). ``describe`` says what to do about each.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from sift.config import Settings

if TYPE_CHECKING:  # langchain loads only when an LLM is configured
    from langchain_core.language_models import BaseChatModel

#: Transport failures (by class name: openai's and httpx's) that a retry may get past.
TRANSIENT_ERRORS = frozenset({"APITimeoutError", "APIConnectionError", "ReadTimeout", "ReadError", "ConnectError",
                              "RemoteProtocolError"})
#: What a refused ``json_schema`` response format says in the error body (llama-cpp-python answers 500, others 400).
_SCHEMA_REFUSAL = re.compile(r"json.?schema|response.?format", re.IGNORECASE)
_SCHEMA_STATUSES = frozenset({400, 422, 500, 501})

Failure = Literal["transient", "schema", "fatal", "output"]


class InvalidOutput(ValueError):
    """The model's reply did not parse into the expected shape, or it stopped for length."""


class CutOff(InvalidOutput):
    """The reply stopped at ``max_tokens`` (``finish_reason == "length"``): unfinished output, never parsed."""


def make_chat_model(settings: Settings) -> BaseChatModel | None:
    """A ``ChatOpenAI`` for the configured server (every reply capped at ``llm_max_tokens``), or None when no LLM
    is configured."""
    if not (settings.llm_base_url and settings.llm_model):
        return None
    import httpx
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    # a client of its own: langchain-openai's shared default one is bound to the first event loop that used it
    return ChatOpenAI(base_url=settings.llm_base_url, api_key=SecretStr(settings.llm_api_key or "not-needed"),
                      model=settings.llm_model, timeout=settings.llm_timeout_s, max_retries=0, temperature=0,
                      max_completion_tokens=settings.llm_max_tokens,
                      extra_body=cap_fields(settings.llm_base_url, settings.llm_max_tokens),
                      http_async_client=httpx.AsyncClient(timeout=settings.llm_timeout_s))


def cap_fields(base_url: str, max_tokens: int) -> dict[str, int] | None:
    """Extra request fields that cap a reply on servers that read only the legacy field.

    langchain-openai sends the cap as ``max_completion_tokens``. llama.cpp and vLLM read it, but Ollama's and
    LM Studio's OpenAI-compatible endpoints read only ``max_tokens``, so without it a reply there runs to the end
    of the context. OpenAI's own API gets the new field alone: its reasoning models reject ``max_tokens``."""
    host = (urlsplit(base_url).hostname or "").lower()
    return None if host == "openai.com" or host.endswith(".openai.com") else {"max_tokens": max_tokens}


def cut_off_reason(max_tokens: int) -> str:
    """What a length stop is called in retries and ``degraded_reasons``."""
    return f"the reply was cut off at max_tokens ({max_tokens}; SIFT_LLM_MAX_TOKENS)"


def check_finished(reply: object, max_tokens: int) -> None:
    """Raise ``CutOff`` when ``reply`` (an ``AIMessage``) stopped for length rather than because it was done."""
    meta = getattr(reply, "response_metadata", None) or {}
    if meta.get("finish_reason") == "length":
        raise CutOff(cut_off_reason(max_tokens))


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of an upstream error, when it has one."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _body_text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    return f"{exc} {body!r}" if body is not None else str(exc)


def rejects_json_schema(exc: BaseException) -> bool:
    """True when the server refused a ``json_schema`` response format (400/422/500/501 saying so)."""
    return status_of(exc) in _SCHEMA_STATUSES and bool(_SCHEMA_REFUSAL.search(_body_text(exc)))


def classify(exc: BaseException) -> Failure:
    """What an upstream failure means: ``transient``, ``schema``, ``fatal`` or ``output`` (see the module)."""
    if isinstance(exc, InvalidOutput):
        return "output"
    if rejects_json_schema(exc):
        return "schema"
    status = status_of(exc)
    if status is not None:
        return "transient" if status == 429 or status >= 500 else "fatal"
    if isinstance(exc, TimeoutError) or type(exc).__name__ in TRANSIENT_ERRORS:
        return "transient"
    if type(exc).__name__ in ("ValidationError", "JSONDecodeError", "OutputParserException",
                              "LengthFinishReasonError"):
        return "output"
    return "fatal"


def is_transient(exc: BaseException) -> bool:
    """True for an upstream failure worth retrying: HTTP 429 or 5xx, or a timeout or dropped connection."""
    return classify(exc) == "transient"


def describe(exc: BaseException, settings: Settings | None = None) -> str:
    """One line saying what went wrong with the model and what to do about it, for ``degraded_reasons``."""
    status = status_of(exc)
    detail = re.sub(r"\s+", " ", str(getattr(exc, "message", None) or exc))[:200]
    if status in (401, 403):
        return f"the LLM server refused the credentials (HTTP {status}): check SIFT_LLM_API_KEY"
    if status == 404:
        return "the LLM server has no such model or endpoint (HTTP 404): check SIFT_LLM_MODEL and SIFT_LLM_BASE_URL"
    if status == 429:
        return "the LLM server is rate limiting (HTTP 429)"
    if status is not None:
        return f"the LLM server answered HTTP {status}: {detail}"
    if isinstance(exc, InvalidOutput):
        return f"invalid model output: {detail}"
    if classify(exc) == "transient":
        limit = f" within {settings.llm_timeout_s:g} s (SIFT_LLM_TIMEOUT_S)" if settings is not None else ""
        return f"no reply from the LLM server{limit} ({type(exc).__name__})"
    if classify(exc) == "output":
        return f"invalid model output ({type(exc).__name__}): {detail}"
    return f"the LLM call failed ({type(exc).__name__}): {detail}"
