"""Request bodies are bounded in nesting depth before they are decoded.

The JSON decoder recurses once per level of ``[`` / ``{``, so a 1 MB body of 100,000 nested arrays ends in a
``RecursionError`` (a 500). No request sift accepts nests deeper than a few levels; a body deeper than
``MAX_JSON_DEPTH`` is a 400 before any decoding, counted in one pass over the bytes outside strings.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Request
from litestar.exceptions import ValidationException

MAX_JSON_DEPTH = 400

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # a JSON string, escapes included
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(body: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep ``body`` nests arrays and objects, counting up to ``limit + 1`` (brackets in strings ignored)."""
    depth = deepest = 0
    for b in _STRING.sub(b"", body).translate(None, _NOT_BRACKETS):
        if b in b"[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


class BoundedRequest(Request[Any, Any, Any]):
    """A request whose JSON body is refused (400) when it nests deeper than ``MAX_JSON_DEPTH``."""

    async def json(self) -> Any:
        """The decoded body, after checking its depth."""
        if json_depth(await self.body()) > MAX_JSON_DEPTH:
            raise ValidationException(
                f"request body nests arrays or objects more than {MAX_JSON_DEPTH} levels deep; send a flatter body"
            )
        return await super().json()
