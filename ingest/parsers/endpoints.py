"""HTTP endpoints recognised by name: route decorators/annotations on handlers, and route-table calls.

Everything here is pure text work on small snippets (a definition's decorators, a call's callee and first
argument), so it stays framework-agnostic: FastAPI/Flask/Litestar/Starlette decorators, Spring and JAX-RS
annotations, NestJS decorators, Express/Koa/Fastify/gin/chi route calls and Django ``path()`` entries.
"""

from __future__ import annotations

import re

HTTP_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})

_DECORATOR = re.compile(r"@\s*([A-Za-z_][\w.]*)\s*(\((?:[^()]|\([^()]*\))*\))?")
_STRING = re.compile(r"""[rRbBuUfF]{0,2}(["'`])(.*?)(?<!\\)\1""", re.S)
_METHODS_KW = re.compile(r"methods\s*=\s*[\[({]([^\])}]*)")
_SPRING_METHOD = re.compile(r"RequestMethod\.([A-Z]+)")
_MAPPING = re.compile(r"(Get|Post|Put|Patch|Delete)Mapping\Z")
_PREFIX_DECORATORS = frozenset({"RequestMapping", "Controller", "Path", "Route", "RoutePrefix"})
# Receivers of route-table calls (app.get('/x', h)); keeps HTTP client calls such as client.get('/x') out.
_ROUTER = re.compile(r"(?i)(?:app|api|router|routes?|server|r|e|g|mux|fastify|group|v\d+|.*router|.*app)\Z")
_DJANGO = frozenset({"path", "re_path", "url"})
_GO_HANDLE = frozenset({"HandleFunc", "Handle"})


def normalise_path(path: str) -> str:
    """Give a route path one leading slash (Django and NestJS write them without)."""
    path = path.strip()
    return path if path.startswith("/") else "/" + path


def join_paths(prefix: str | None, path: str) -> str:
    """Join a controller prefix and a handler path."""
    if not prefix:
        return normalise_path(path)
    head = normalise_path(prefix).rstrip("/")
    tail = path.strip().lstrip("/")
    return head + ("/" + tail if tail else "") or "/"


def _first_string(args: str) -> str | None:
    match = _STRING.search(args)
    return match.group(2) if match else None


def _decorators(header: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in _DECORATOR.finditer(header)]


def decorator_endpoints(header: str) -> list[tuple[str, str]]:
    """(METHOD, path) pairs declared by the decorators/annotations in a handler's ``header`` text."""
    if "@" not in header:
        return []
    found: list[tuple[str, str]] = []
    decorators = _decorators(header)
    jaxrs_path: str | None = None
    jaxrs_verbs: list[str] = []
    for dotted, args in decorators:
        last = dotted.rsplit(".", 1)[-1]
        if args is None:
            if last.upper() == last and last.lower() in HTTP_VERBS:
                jaxrs_verbs.append(last)
            continue
        path = _first_string(args)
        mapping = _MAPPING.match(last)
        if last == "Path":
            jaxrs_path = path
        elif mapping:
            found.append((mapping.group(1).upper(), normalise_path(path or "/")))
        elif last == "RequestMapping":
            verbs = _SPRING_METHOD.findall(args) or ["ANY"]
            found.extend((verb, normalise_path(path or "/")) for verb in verbs)
        elif last.lower() in HTTP_VERBS:
            found.append((last.upper(), normalise_path(path or "/")))
        elif last in ("route", "api_route"):
            kw = _METHODS_KW.search(args)
            verbs = [m.group(2).upper() for m in _STRING.finditer(kw.group(1))] if kw else ["GET"]
            found.extend((verb, normalise_path(path or "/")) for verb in verbs)
        elif last in ("websocket", "websocket_route"):
            found.append(("WS", normalise_path(path or "/")))
    if jaxrs_verbs:
        found.extend((verb, normalise_path(jaxrs_path or "/")) for verb in jaxrs_verbs)
    return found


def route_prefix(header: str) -> str | None:
    """The path prefix a class-level ``@RequestMapping``/``@Controller``/``@Path`` gives its handlers."""
    if "@" not in header:
        return None
    for dotted, args in _decorators(header):
        if args is not None and dotted.rsplit(".", 1)[-1] in _PREFIX_DECORATORS:
            path = _first_string(args)
            if path is not None:
                return path
    return None


def call_route_method(callee: str, language: str) -> str | None:
    """The HTTP method a route-table call registers (``router.post`` → POST), or None if it is no route call."""
    receiver, _, last = callee.rpartition(".")
    if language == "python":
        return "ANY" if not receiver and last in _DJANGO else None
    if language == "go" and last in _GO_HANDLE:
        return "ANY"
    if not receiver or not _ROUTER.match(receiver.rsplit(".", 1)[-1]):
        return None
    if last.lower() in HTTP_VERBS:
        return last.upper()
    return "ANY" if last in ("all", "Any", "any") else None


def unquote(literal: str) -> str | None:
    """The value of a simple string literal's source text, or None when it is not one."""
    match = _STRING.fullmatch(literal.strip())
    return match.group(2) if match else None
