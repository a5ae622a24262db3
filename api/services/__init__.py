"""What the controllers call: one service per resource group, holding the SQL, file deletion and graph calls.

The lifespan (``api.app.open_state``) builds them once over the app's resources; Litestar hands them to the
handlers through ``Provide`` (``DEPENDENCIES``, by parameter name), and the MCP tools call the same ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from litestar.datastructures import State
from litestar.di import Provide

from sift.api.services.chat import ChatService
from sift.api.services.health import HealthService
from sift.api.services.kbs import KbService
from sift.api.services.search import SearchService
from sift.api.services.threads import ThreadService
from sift.errors import IndexNotReady

__all__ = ["DEPENDENCIES", "ChatService", "HealthService", "KbService", "SearchService", "Services",
           "ThreadService"]


@dataclass(frozen=True, slots=True)
class Services:
    """The services of one app (or ``sift mcp`` process), made once its resources are open."""

    kbs: KbService
    threads: ThreadService
    chat: ChatService
    search: SearchService
    health: HealthService


def _services(state: State) -> Services:
    services: Services | None = state.services
    if services is None:
        raise IndexNotReady("the server is still starting; try again in a moment")
    return services


def provide_kb_service(state: State) -> KbService:
    """Dependency: the knowledge-base service."""
    return _services(state).kbs


def provide_thread_service(state: State) -> ThreadService:
    """Dependency: the thread service."""
    return _services(state).threads


def provide_chat_service(state: State) -> ChatService:
    """Dependency: the chat service."""
    return _services(state).chat


def provide_search_service(state: State) -> SearchService:
    """Dependency: the search service."""
    return _services(state).search


def provide_health_service(state: State) -> HealthService:
    """Dependency: the readiness service."""
    return _services(state).health


#: The app's service dependencies, by the parameter name a handler asks for.
DEPENDENCIES = {
    "kb_service": Provide(provide_kb_service, sync_to_thread=False),
    "thread_service": Provide(provide_thread_service, sync_to_thread=False),
    "chat_service": Provide(provide_chat_service, sync_to_thread=False),
    "search_service": Provide(provide_search_service, sync_to_thread=False),
    "health_service": Provide(provide_health_service, sync_to_thread=False),
}
