"""Response documentation shared by the controllers: every error uses ``ErrorBody``, with a real example."""

from __future__ import annotations

from typing import Any

from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Example

from sift.api.errors import ErrorBody

_TEXT = {
    400: "Malformed request (the body names the field and, for DocQL, the position).",
    401: "Missing or unknown API key.",
    404: "Unknown resource, or one that belongs to another tenant.",
    409: "Conflicts with a running operation.",
    413: "Request body too large.",
    502: "The configured chat model failed.",
    503: "Not ready yet (index not published, or chat unavailable).",
}

#: What each status really answers with (the messages the server writes), shown instead of generated strings.
_EXAMPLES: dict[int, list[tuple[str, dict[str, Any]]]] = {
    400: [("bad field", {"error": "invalid_request", "detail": "kb: String should match pattern "
                         "'^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$'", "field": "kb"}),
          ("DocQL syntax", {"error": "invalid_query", "detail": "DocQL error at column 3: expected a root: $.toc, "
                            "$.content, $.code, $.files, $.entities, $.structure, found end of query",
                            "position": 3})],
    401: [("no key", {"error": "unauthorized", "detail": "missing Authorization header; send `Authorization: "
                      "Bearer <key>` (create a key with `sift keys create --tenant NAME`)"})],
    404: [("unknown kb", {"error": "not_found", "detail": "knowledge base 'myproject' does not exist; create it "
                          "with `sift ingest PATH --kb myproject`"})],
    409: [("ingest running", {"error": "conflict", "detail": "another ingest of knowledge base 'myproject' is "
                              "running; wait for it to finish and run this again"})],
    413: [("too large", {"error": "body_too_large",
                         "detail": "request body is too large; send less data or raise SIFT_MAX_BODY_BYTES"})],
    502: [("model failed", {"error": "upstream_error", "detail": "embedding server refused the request: 401"})],
    503: [("not indexed", {"error": "index_not_ready", "detail": "knowledge base 'myproject' has no published "
                           "index yet; wait for its ingest to finish"})],
}


def _examples(code: int) -> list[Example]:
    return [Example(summary=summary, value=value) for summary, value in _EXAMPLES.get(code, [])]


def errors(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI response entries for the given error statuses (400/401/413 are always possible)."""
    wanted = sorted({400, 401, *codes})
    return {c: ResponseSpec(data_container=ErrorBody, description=_TEXT.get(c, "Error"), generate_examples=False,
                            examples=_examples(c) or None) for c in wanted}
