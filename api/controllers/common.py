"""Response documentation shared by the controllers: every error uses ``ErrorBody``."""

from __future__ import annotations

from litestar.openapi import ResponseSpec

from sift.api.errors import ErrorBody

_TEXT = {
    400: "Malformed request (the body names the field and, for DocQL, the position).",
    401: "Missing or unknown API key.",
    404: "Unknown resource, or one that belongs to another tenant.",
    409: "Conflicts with a running operation.",
    413: "Request body too large.",
    503: "Not ready yet (index not published, or chat unavailable).",
}


def errors(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI response entries for the given error statuses (400/401/413 are always possible)."""
    wanted = sorted({400, 401, *codes})
    return {c: ResponseSpec(data_container=ErrorBody, description=_TEXT.get(c, "Error")) for c in wanted}
