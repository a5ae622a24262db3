"""OpenAPI details the app's config uses: readable operation ids and where the Swagger UI files are served from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SWAGGER_DIR = Path(__file__).parent / "static" / "swagger-ui"
SWAGGER_URL = "/schema/static/swagger-ui"

#: Handlers whose function name alone would be ambiguous or unclear as an operation id.
_NAMES = {
    "KbController.list": "list_kbs",
    "KbController.create": "create_kb",
    "KbController.show": "get_kb",
    "KbController.remove": "delete_kb",
    "KbController.ingest": "ingest_kb",
    "JobController.show": "get_job",
    "SearchController.file": "get_file_lines",
    "ChatController.threads": "list_threads",
    "ChatController.thread": "get_thread",
    "ChatController.delete": "delete_thread",
}


def operation_id(route_handler: Any, http_method: Any, path_components: list[Any]) -> str:
    """``chat``, ``chat_stream``, ``list_kbs``…: from the table above, else the handler function's name."""
    fn = route_handler.fn
    fn = getattr(fn, "func", fn)  # a sync handler run in a thread is wrapped in an AsyncCallable
    return _NAMES.get(getattr(fn, "__qualname__", ""), route_handler.handler_name)
