"""Call sites and imports of a parsed file → refs (callee qualified where an import makes it visible) and the
HTTP endpoints that route-registering calls declare."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from tree_sitter import Node

from sift.ingest.parsers.definition import Definition
from sift.ingest.parsers.endpoints import call_route_method, join_paths, unquote
from sift.ingest.parsers.scopes import bindings_in, bound_at, is_global
from sift.ingest.parsers.syntax import end_line, node_text
from sift.models import DocumentTree, ParsedEntity, ParsedRef

_CALLEE = re.compile(r"[A-Za-z_$@][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*\Z")
_SEGMENT = re.compile(r"\.|::|/")
_MAX_CALLEE_BYTES = 200


def python_module(module: str, path: str) -> str:
    """Absolute dotted module for a (possibly relative) ``from`` import in the file at ``path``."""
    if not module.startswith("."):
        return module
    level = len(module) - len(module.lstrip("."))
    parts = list(PurePosixPath(path).parent.parts)
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    parts = parts[: max(0, len(parts) - (level - 1))]
    return ".".join([*parts, module[level:]] if module[level:] else parts)


def aliases(imports: list[dict[str, list[Node]]], path: str, language: str) -> dict[str, str]:
    """Local name → qualified target for every import the query found."""
    sep = "::" if language == "rust" else "."
    out: dict[str, str] = {}
    for caps in imports:
        module = node_text(caps["import.module"][0])
        if language == "python":
            module = python_module(module, path)
        name = node_text(caps["import.name"][0]) if "import.name" in caps else None
        alias = node_text(caps["import.alias"][0]) if "import.alias" in caps else None
        if name is not None:
            target = f"{module}{sep}{name}" if module else name
            local = alias or name
        else:
            target = module
            segments = _SEGMENT.split(module)
            local = alias or (segments[0] if language == "python" else segments[-1])
        out[local] = target
    return out


def _callee(caps: dict[str, list[Node]]) -> str | None:
    if "callee" in caps:
        node = caps["callee"][0]
        if node.end_byte - node.start_byte > _MAX_CALLEE_BYTES:
            return None
        raw = node_text(node)
    elif "callee.name" in caps:
        obj, name = caps["callee.object"][0], caps["callee.name"][0]
        if obj.end_byte - obj.start_byte > _MAX_CALLEE_BYTES:
            return None
        raw = f"{node_text(obj)}.{node_text(name)}"
    else:
        return None
    callee = "".join(raw.split()).replace("?.", ".").replace("->", ".")
    return callee if _CALLEE.match(callee) else None


Captures = dict[str, list[Node]]


def add_refs(
    tree: DocumentTree, defs: list[Definition], calls: list[Captures], imported: dict[str, str], lang: str,
    root: Node | None = None,
) -> None:
    """One ref per call with a dotted callee; the caller is the innermost enclosing definition (or the file). A bare
    callee that a function binds where it is called (``scopes.bindings_in`` over the file's ``root``) is marked
    ``bound_locally``."""
    found = []
    for caps in calls:
        callee = _callee(caps)
        if callee is not None:
            found.append((caps["call"][0].start_byte, callee, caps["call"][0]))
    found.sort(key=lambda item: item[0])
    stack: list[Definition] = []
    i = 0
    placed = []  # (start, callee, call, caller, whether the callee is a bare name that may be bound locally)
    for start, callee, call in found:
        while i < len(defs) and defs[i].node.start_byte <= start:
            while stack and stack[-1].node.end_byte <= defs[i].node.start_byte:
                stack.pop()
            stack.append(defs[i])
            i += 1
        while stack and stack[-1].node.end_byte <= start:
            stack.pop()
        bare = _SEGMENT.search(callee) is None and callee not in imported and not is_global(callee, lang)
        placed.append((start, callee, call, stack[-1].index if stack else 0, bare))
    # The names the file's functions bind, looked up only for the bare names called (most files call few).
    called = {callee for *_, callee, _, _, bare in placed if bare}
    bindings = bindings_in(root, lang, called) if called and root is not None else {}
    for start, callee, call, caller, bare in placed:
        line = call.start_point.row + 1
        head = _SEGMENT.split(callee, maxsplit=1)[0]
        qualified = imported[head] + callee[len(head) :] if head in imported else None
        local = bare and bound_at(bindings, callee, start)
        tree.refs.append(ParsedRef(caller, callee, line, qualified, bound_locally=local))
        method = call_route_method(callee, lang)
        if method is not None:
            _add_call_endpoint(tree, call, method, caller)


def _add_call_endpoint(tree: DocumentTree, call: Node, method: str, caller: int) -> None:
    args = call.child_by_field_name("arguments")
    if args is None or args.named_child_count < 2:
        return
    route = unquote(node_text(args.named_children[0]))
    if route is None:
        return
    route = join_paths(None, route)
    start, end = call.start_point.row + 1, end_line(call)
    tree.entities.append(ParsedEntity("endpoint", route, start, end, node=caller, detail=f"{method} {route}"))
