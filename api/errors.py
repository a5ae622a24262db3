"""The one mapping from errors to HTTP responses: ``{error, detail, field?, position?}``."""

from __future__ import annotations

import logging
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.types import ExceptionHandlersMap
from pydantic import BaseModel, Field

from sift.api.datadir import DataDirGone
from sift.errors import (
    AccessDenied,
    Conflict,
    DiskFull,
    IndexDamaged,
    IndexNotReady,
    InvalidQuery,
    NotFound,
    OutsideRoot,
    SiftError,
    StorageDamaged,
    UpstreamError,
    from_environment,
)

log = logging.getLogger(__name__)

#: Most specific class first: the first ``isinstance`` match names the error.
SIFT_CODES: tuple[tuple[type[SiftError], str], ...] = (
    (OutsideRoot, "outside_root"),
    (InvalidQuery, "invalid_query"),
    (NotFound, "not_found"),
    (Conflict, "conflict"),
    (IndexDamaged, "index_damaged"),
    (IndexNotReady, "index_not_ready"),
    (UpstreamError, "upstream_error"),
    (DataDirGone, "data_dir_gone"),
    (DiskFull, "disk_full"),
    (AccessDenied, "permission_denied"),
    (StorageDamaged, "storage_damaged"),
    (SiftError, "error"),
)

HTTP_CODES = {
    400: "invalid_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    409: "conflict", 413: "body_too_large", 415: "unsupported_media_type", 429: "too_many_requests",
    500: "internal_error", 503: "unavailable",
}


class ErrorBody(BaseModel):
    """The JSON body of every error response."""

    error: str = Field(description="A stable code: invalid_request, invalid_query, unauthorized, not_found, "
                                   "conflict, body_too_large, index_not_ready, upstream_error, …",
                       examples=["not_found"])
    detail: str = Field(description="What went wrong and what to do next.",
                        examples=["knowledge base 'myproject' does not exist; create it with "
                                  "`sift ingest PATH --kb myproject`"])
    field: str | None = Field(None, description="The request field at fault.", examples=["kb"])
    position: int | None = Field(None, description="1-based column of a DocQL syntax error.", examples=[3])


class Unauthorized(SiftError):
    """Missing, malformed or unknown API key."""

    status = 401


def error_body(exc: Exception) -> tuple[int, dict[str, Any]]:
    """The status code and JSON body for ``exc``."""
    if isinstance(exc, Unauthorized):
        return 401, {"error": "unauthorized", "detail": exc.message}
    if not isinstance(exc, SiftError | HTTPException) and (failure := from_environment(exc)) is not None:
        exc = failure
    if isinstance(exc, SiftError):
        code = next(name for cls, name in SIFT_CODES if isinstance(exc, cls))
        if code == "error":
            code = HTTP_CODES.get(exc.status, "error")
        body: dict[str, Any] = {"error": code, "detail": exc.message}
        if exc.field is not None:
            body["field"] = exc.field
        if exc.position is not None:
            body["position"] = exc.position
        return exc.status, body
    if isinstance(exc, ValidationException):
        return 400, _validation_body(exc)
    if isinstance(exc, HTTPException):
        status = exc.status_code
        detail = exc.detail or HTTP_CODES.get(status, "error")
        if status == 413:
            detail = "request body is too large; send less data or raise SIFT_MAX_BODY_BYTES"
        return status, {"error": HTTP_CODES.get(status, "error"), "detail": detail}
    return 500, {"error": "internal_error", "detail": "internal error; the server log has the details"}


def _validation_body(exc: ValidationException) -> dict[str, Any]:
    """A readable message from Litestar/pydantic validation errors, naming the first bad field."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    if not extra:
        detail = exc.detail or "invalid request"
        if "JSON" in detail or "decode" in detail.lower():
            detail = "request body is not valid JSON"
        return {"error": "invalid_request", "detail": detail}
    first = extra[0] if isinstance(extra[0], dict) else {}
    key = first.get("key")
    message = first.get("message") or exc.detail
    body = {"error": "invalid_request", "detail": f"{key}: {message}" if key else str(message)}
    if key:
        body["field"] = str(key).split(".")[0]  # "channels.literal[...]" names a union member of "channels"
    return body


def handle_exception(request: Request, exc: Exception) -> Response[dict[str, Any]]:
    """Litestar exception handler for every exception type."""
    status, body = error_body(exc)
    if status >= 500 and not isinstance(exc, SiftError) and from_environment(exc) is None:
        log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(getattr(exc, "retry_after", None), int):  # a busy thread: when to send the turn again
        headers = {"Retry-After": str(exc.retry_after)}  # type: ignore[attr-defined]
    return Response(body, status_code=status, media_type=MediaType.JSON, headers=headers)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {Exception: handle_exception, HTTPException: handle_exception, SiftError: handle_exception}


class ChatUnavailable(SiftError):
    """The chat service is not available in this deployment."""

    status = 503
