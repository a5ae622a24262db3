"""Source files → document trees with tree-sitter: definitions, docstrings, call sites, imports, endpoints.

One query per language (``queries/<language>.scm``) finds definitions (``@definition.<kind>`` + ``@name``),
call sites (``@call`` + ``@callee``) and imports (``@import.*``) in a single pass over the tree; nesting is
then recovered from byte ranges with a stack, so no Python code visits every syntax node.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import PurePosixPath
from typing import TypeGuard

import tree_sitter_language_pack as tslp
from tree_sitter import Node, Parser, Query, QueryCursor

from sift.ingest.parsers.calls import add_refs, aliases
from sift.ingest.parsers.comments import (
    comment_above,
    file_comment,
    line_comment_markers,
    python_string,
    without_license,
)
from sift.ingest.parsers.definition import Definition
from sift.ingest.parsers.endpoints import decorator_endpoints, join_paths, route_prefix
from sift.ingest.parsers.syntax import end_line, node_text, python_end_line
from sift.ingest.parsers.text import line_count
from sift.languages import is_declaration_file
from sift.models import (
    CONTAINER_KINDS,
    DocumentTree,
    NodeKind,
    ParsedEntity,
    ParsedNode,
    SourceType,
)

# Language (as sift.languages names it) → query file in queries/; TSX shares the TypeScript query.
QUERY_FILES: dict[str, str] = {
    lang: lang for lang in ("python", "javascript", "typescript", "java", "go", "rust", "c", "cpp")
}
QUERY_FILES |= {"tsx": "typescript", "kotlin": "kotlin", "ruby": "ruby"}


def _has_query(language: str) -> TypeGuard[tslp.SupportedLanguage]:
    """Whether ``language`` has a query file (every such language is one the grammar pack ships)."""
    return language in QUERY_FILES


# Nodes wrapping a definition whose first line is the definition's first line (decorators, export, template<>).
_WRAPPERS = frozenset(
    {"decorated_definition", "export_statement", "lexical_declaration", "variable_declaration", "template_declaration",
     "expression_statement", "ambient_declaration"}
)  # fmt: skip
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# TypeScript declarations without a body: an overload, a ``declare function`` or an interface's method.
_SIGNATURES = frozenset({"function_signature", "method_signature"})
# JavaScript owners that are the module itself (``exports.f = …``, ``module.exports = {…}``), not an object.
_MODULE_OWNERS = frozenset({"module", "exports", "this"})
_BODY_TYPES = frozenset(
    {
        "block", "class_body", "function_body", "body_statement", "declaration_list", "field_declaration_list",
        "enum_body", "interface_body", "statement_block", "compound_statement", "enum_variant_list",
    }
)  # fmt: skip
# TypeScript definitions that only declare types: an interface or type alias, and whatever is under ``declare``.
_TYPE_ONLY_KINDS = frozenset({NodeKind.INTERFACE.value, NodeKind.TYPE.value})
_TYPED_LANGUAGES = frozenset({"typescript", "tsx"})
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_MAX_SIGNATURE = 300
_CONTAINERS = frozenset(k.value for k in CONTAINER_KINDS)


def _python_docstring(body: Node | None) -> str | None:
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            child = child.named_children[0]
        if child.type == "string":
            return python_string(node_text(child)) or None
        return None
    return None


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None and (value := node.child_by_field_name("value")) is not None:
        body = value.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    return body


def _signature(src: bytes, d: Definition, language: str) -> str:
    node = d.node
    start = node.parent.start_byte if node.type == "variable_declarator" and node.parent else node.start_byte
    if language == "python":
        stop_node = node.child_by_field_name("return_type") or node.child_by_field_name("parameters")
        stop_node = stop_node or node.child_by_field_name("superclasses") or d.name_node
        stop = stop_node.end_byte
    else:
        body = _body(node)
        stop = body.start_byte if body is not None else node.end_byte
    raw = src[start : min(stop, start + 4 * _MAX_SIGNATURE)].decode("utf-8", "replace")
    if stop == node.end_byte and language != "python":
        raw = raw.split("{", 1)[0].split("\n", 1)[0]
    if language == "ruby":
        raw = raw.split("\n", 1)[0]
    text = " ".join(raw.split()).removesuffix("{").rstrip().removesuffix(";")
    if node.type == "type_alias_declaration" or d.kind == "variable":  # ``type Options = {``: its members follow
        text = text.removesuffix("=").rstrip()
    return ("type " + text if node.type == "type_spec" else text)[:_MAX_SIGNATURE]


class CodeParser:
    """tree-sitter parser for source code; one grammar parser and query per language, created on first use."""

    name = "tree-sitter"

    def __init__(self) -> None:
        self._cache: dict[str, tuple[Parser, Query]] = {}

    def supports(self, language: str) -> bool:
        """Whether a query exists for ``language``."""
        return _has_query(language)

    def _tools(self, language: tslp.SupportedLanguage) -> tuple[Parser, Query]:
        if language not in self._cache:
            source = resources.files("sift.ingest.parsers").joinpath("queries", f"{QUERY_FILES[language]}.scm")
            query = Query(tslp.get_language(language), source.read_text(encoding="utf-8"))
            self._cache[language] = (tslp.get_parser(language), query)
        return self._cache[language]

    def parse(self, path: str, text: str, language: str) -> DocumentTree:
        """Parse one source file into file → class → method nodes, entities and call refs."""
        if not _has_query(language):
            raise ValueError(f"no tree-sitter query for language {language!r}")
        parser, query = self._tools(language)
        src = text.encode("utf-8", "surrogateescape")
        root = parser.parse(src).root_node
        defs: list[Definition] = []
        calls: list[dict[str, list[Node]]] = []
        imports: list[dict[str, list[Node]]] = []
        seen: set[int] = set()
        for _, caps in QueryCursor(query).matches(root):
            if "call" in caps:
                calls.append(caps)
            elif "import" in caps:
                imports.append(caps)
            else:
                d = _make_def(caps, seen, path)
                if d is not None:
                    defs.append(d)
        lines = text.split("\n") if language != "python" else []
        markers = line_comment_markers(language)
        # An exported binding that is no function is a definition only when a doc comment says what it is for;
        # otherwise it stays part of the module's code (``export const VERSION = "1.0"``).
        defs = [d for d in defs if d.kind != "variable" or comment_above(lines, d.outer.start_point.row, markers)]
        file_node = ParsedNode(
            index=0,
            kind=NodeKind.FILE,
            name=PurePosixPath(path).name,
            qualified_name=path,
            start_line=1,
            end_line=max(1, line_count(text)),
            docstring=_python_docstring(root) if language == "python" else without_license(file_comment(lines, markers)),
        )
        tree = DocumentTree(path, language, SourceType.CODE, [file_node], parser=self.name)
        ordered = _arrange(_merge_overloads(defs))
        declaration_file = is_declaration_file(path)
        for d in ordered:  # parents first: a member of a declaration is one too
            d.declaration = language in _TYPED_LANGUAGES and (declaration_file or _declares_only(d))
            tree.nodes.append(_emit(d, path, src, language, lines, markers))
            _add_entities(tree, d, src, language)
        add_refs(tree, defs, calls, aliases(imports, path, language), language, root)
        return tree


def _make_def(caps: dict[str, list[Node]], seen: set[int], path: str) -> Definition | None:
    key = next((k for k in caps if k.startswith("definition.")), None)
    if key is None or "name" not in caps:
        return None
    node = caps[key][0]
    if node.id in seen:
        return None
    if key == "definition.variable" and caps["value"][0].type in _FUNCTION_VALUES:
        return None  # ``export const f = () => …`` is a function, which a pattern of its own finds
    seen.add(node.id)
    name_node = caps["name"][0]
    name = node_text(name_node)
    receiver = node_text(caps["receiver"][0]) if "receiver" in caps else None
    if node.type == "assignment_expression":  # ``obj.f = function …``, ``Cls.prototype.f = …``, ``exports.f = …``
        if receiver == "module" and name == "exports":  # ``module.exports = function …``: the module's function
            name_node = node.child_by_field_name("right").child_by_field_name("name") or name_node  # type: ignore[union-attr]
            name = node_text(name_node) if name_node.type == "identifier" else module_stem(path)
        receiver = js_owner(receiver or "")
    elif node.type in ("pair", "method_definition") and node.parent is not None and node.parent.type == "object":
        owner = node.parent.parent
        if owner is not None and owner.type == "assignment_expression":  # ``Cls.prototype = { f: function … }``
            receiver = js_owner(node_text(owner.child_by_field_name("left") or owner))
        elif owner is not None and owner.type == "variable_declarator":  # ``const utils = { f: function … }``
            receiver = js_owner(node_text(owner.child_by_field_name("name") or owner))
        elif node.type == "pair":  # a function in an options object or an argument is not a definition
            return None
    if receiver is None and "::" in name:
        receiver, _, name = name.rpartition("::")
        receiver = receiver.rsplit("::", 1)[-1]
    outer = node
    while outer.parent is not None and outer.parent.type in _WRAPPERS:
        outer = outer.parent
    return Definition(key.split(".", 1)[1], node, outer, name_node, name, receiver)


def js_owner(text: str) -> str | None:
    """The object a JavaScript assignment or object literal gives functions to: ``Widget.prototype`` →
    ``Widget``, ``utils`` → ``utils``; None for the module itself (``exports``, ``module.exports``, ``this``)
    or an expression that is not a dotted name."""
    parts = [p for p in "".join(text.split()).split(".") if p != "prototype"]
    if not parts or not all(_IDENT.fullmatch(p) for p in parts):
        return None
    parts = [p for p in parts if p not in _MODULE_OWNERS]
    return parts[-1] if parts else None


def module_stem(path: str) -> str:
    """What a module's own anonymous function is called: its file's stem (its folder's name for an index file)."""
    p = PurePosixPath(path)
    stem = p.name.split(".", 1)[0]
    return p.parent.name if stem == "index" and p.parent.name else stem


def _next_declaration(node: Node) -> Node | None:
    """The statement or member after ``node``, past any comments between them."""
    after = node.next_named_sibling
    while after is not None and after.type == "comment":
        after = after.next_named_sibling
    return after


def _merge_overloads(defs: list[Definition]) -> list[Definition]:
    """TypeScript overloads as one definition: signatures of a name followed at once by another declaration of
    that name (a further signature or the implementation) are absorbed by it, so that it starts at the first
    signature, where the doc comment is, and spans them all. Everything else is returned as it was."""
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    out: list[Definition] = []
    for d in defs:
        prev = out[-1] if out else None
        if prev is not None and prev.node.type in _SIGNATURES and prev.name == d.name:
            after = _next_declaration(prev.outer)
            if after is not None and (after.start_byte, after.end_byte) == (d.outer.start_byte, d.outer.end_byte):
                d.first = prev.first or prev.outer
                out[-1] = d
                continue
        out.append(d)
    return out


def _arrange(defs: list[Definition]) -> list[Definition]:
    """Give every definition its logical parent and return them in pre-order (parents before children)."""
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    by_name: dict[str, Definition] = {}
    for d in defs:
        if d.kind in _CONTAINERS:
            by_name.setdefault(d.name, d)
    stack: list[Definition] = []
    for d in defs:
        while stack and stack[-1].node.end_byte <= d.node.start_byte:
            stack.pop()
        d.parent = stack[-1] if stack else None
        stack.append(d)
    for d in defs:
        if d.kind == "impl":
            d.alias = by_name.get(d.name)
            d.kind = NodeKind.CLASS if d.alias is None else "impl"
    roots: list[Definition] = []
    for d in defs:
        if d.alias is not None:
            continue
        parent = d.parent.alias or d.parent if d.parent is not None else None
        if d.receiver is not None and d.receiver in by_name:
            parent = by_name[d.receiver]
        d.parent = parent
        if d.kind == "function" and ((parent is not None and parent.kind in _CONTAINERS) or d.receiver):
            d.kind = NodeKind.METHOD
        (parent.children if parent is not None else roots).append(d)
    ordered: list[Definition] = []
    todo = list(reversed(roots))
    while todo:
        d = todo.pop()
        ordered.append(d)
        todo.extend(reversed(d.children))
    for i, d in enumerate(ordered, start=1):
        d.index = i
        owner = d.parent.qual if d.parent is not None else (d.receiver or "")
        d.level = d.parent.level + 1 if d.parent is not None else 1
        d.qual = f"{owner}.{d.name}" if owner else d.name
    for d in defs:
        if d.alias is not None:
            d.index = d.alias.index
    return ordered


def _declares_only(d: Definition) -> bool:
    """A TypeScript definition that declares a type and implements nothing: an interface or type alias, a member
    of one, or a definition under ``declare`` (``declare module``, ``declare global``, ``declare class``…)."""
    if d.kind in _TYPE_ONLY_KINDS or (d.parent is not None and d.parent.declaration):
        return True
    node: Node | None = d.node
    while node is not None:
        if node.type == "ambient_declaration":
            return True
        node = node.parent
    return False


def _emit(
    d: Definition, path: str, src: bytes, language: str, lines: list[str], markers: tuple[str, ...]
) -> ParsedNode:
    node = d.node
    end = end_line(node)
    start = d.first or d.outer
    if language == "python":
        docstring = _python_docstring(node.child_by_field_name("body"))
        end = python_end_line(node)
    else:
        docstring = comment_above(lines, start.start_point.row, markers)
    return ParsedNode(
        index=d.index,
        kind=NodeKind(d.kind),
        name=d.name,
        qualified_name=f"{path}::{d.qual}",
        start_line=start.start_point.row + 1,
        end_line=end,
        parent=d.parent.index if d.parent is not None else 0,
        level=d.level,
        signature=_signature(src, d, language),
        docstring=docstring,
        meta={"declaration": True} if d.declaration else {},
    )


def _add_entities(tree: DocumentTree, d: Definition, src: bytes, language: str) -> None:
    pn = tree.nodes[d.index]
    tree.entities.append(ParsedEntity(pn.kind, pn.name, pn.start_line, pn.end_line, node=d.index))
    if d.outer.start_byte == d.name_node.start_byte:
        return
    header = src[d.outer.start_byte : d.name_node.start_byte].decode("utf-8", "replace")
    if d.kind in _CONTAINERS:
        d.prefix = route_prefix(header)
        return
    prefix = d.parent.prefix if d.parent is not None else None
    for method, route in decorator_endpoints(header):
        route = join_paths(prefix, route)
        detail = f"{method} {route}"
        tree.entities.append(ParsedEntity("endpoint", route, pn.start_line, pn.end_line, d.index, detail))


