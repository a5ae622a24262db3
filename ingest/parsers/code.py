"""Source files → document trees with tree-sitter: definitions, docstrings, call sites, imports, endpoints.

One query per language (``queries/<language>.scm``) finds definitions (``@definition.<kind>`` + ``@name``),
call sites (``@call`` + ``@callee``) and imports (``@import.*``) in a single pass over the tree; nesting is
then recovered from byte ranges with a stack, so no Python code visits every syntax node.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import PurePosixPath
from typing import TypeGuard

import tree_sitter_language_pack as tslp
from tree_sitter import Node, Parser, Query, QueryCursor

from sift.ingest.parsers.endpoints import (
    call_route_method,
    decorator_endpoints,
    join_paths,
    route_prefix,
    unquote,
)
from sift.ingest.parsers.text import line_count
from sift.models import (
    CONTAINER_KINDS,
    DocumentTree,
    NodeKind,
    ParsedEntity,
    ParsedNode,
    ParsedRef,
    SourceType,
)

# Language (as ingest.languages names it) → query file in queries/; TSX shares the TypeScript query.
QUERY_FILES: dict[str, str] = {
    lang: lang for lang in ("python", "javascript", "typescript", "java", "go", "rust", "c", "cpp")
}
QUERY_FILES |= {"tsx": "typescript", "kotlin": "kotlin", "ruby": "ruby"}


def _has_query(language: str) -> TypeGuard[tslp.SupportedLanguage]:
    """Whether ``language`` has a query file (every such language is one the grammar pack ships)."""
    return language in QUERY_FILES


def _text(node: Node) -> str:
    """The node's source text (a tree parsed from bytes always has it)."""
    return (node.text or b"").decode("utf-8", "replace")

# Nodes wrapping a definition whose first line is the definition's first line (decorators, export, template<>).
_WRAPPERS = frozenset(
    {"decorated_definition", "export_statement", "lexical_declaration", "variable_declaration", "template_declaration",
     "expression_statement"}
)  # fmt: skip
# JavaScript owners that are the module itself (``exports.f = …``, ``module.exports = {…}``), not an object.
_MODULE_OWNERS = frozenset({"module", "exports", "this"})
_BODY_TYPES = frozenset(
    {
        "block", "class_body", "function_body", "body_statement", "declaration_list", "field_declaration_list",
        "enum_body", "interface_body", "statement_block", "compound_statement", "enum_variant_list",
    }
)  # fmt: skip
_LINE_COMMENTS = {"ruby": ("#",), "python": ("#",)}
_C_LINE_COMMENTS = ("//",)
_COMMENT_MARKERS = re.compile(r"^(?:/\*+|\*+/|///?!?|#+|\*+(?!/))\s?")
_CALLEE = re.compile(r"[A-Za-z_$@][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*\Z")
_SEGMENT = re.compile(r"\.|::|/")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_MAX_SIGNATURE = 300
_MAX_CALLEE_BYTES = 200
_CONTAINERS = frozenset(k.value for k in CONTAINER_KINDS)


@dataclass(slots=True, eq=False)
class _Def:
    """A definition found by the query, before it gets its place in the tree."""

    kind: str
    node: Node
    outer: Node
    name_node: Node
    name: str
    receiver: str | None = None
    parent: _Def | None = None
    alias: _Def | None = None  # an `impl X` block merged into X's node
    children: list[_Def] = field(default_factory=list)
    index: int = 0
    level: int = 1
    qual: str = ""
    prefix: str | None = None


def end_line(node: Node) -> int:
    """1-based last line of a node (a node ending just after a newline ends on the line before)."""
    row, col = node.end_point
    return row if col == 0 and row > node.start_point.row else row + 1


def clean_comment(lines: list[str]) -> str | None:
    """Comment lines without their markers (``/** * */``, ``//``, ``///``, ``#``), or None when empty."""
    out = [_COMMENT_MARKERS.sub("", ln.strip()).removesuffix("*/").rstrip() for ln in lines]
    text = "\n".join(out).strip()
    return text or None


def comment_above(lines: list[str], row: int, markers: tuple[str, ...]) -> str | None:
    """The comment block ending on the line just above 0-based ``row`` (no blank line in between)."""
    first = comment_start(lines, row, markers)
    return clean_comment(lines[max(first, 0) : row]) if first < row else None


def line_comment_markers(language: str) -> tuple[str, ...]:
    """How a line comment starts in ``language`` (``#`` or ``//``)."""
    return _LINE_COMMENTS.get(language, _C_LINE_COMMENTS)


def comment_start(lines: list[str], row: int, markers: tuple[str, ...]) -> int:
    """The first 0-based row of the comment block ending just above ``row`` (``row`` itself when there is none)."""
    first = row
    r = row - 1
    while r >= 0:
        s = lines[r].strip()
        if s.endswith("*/") and markers != ("#",):
            while r >= 0 and "/*" not in lines[r]:
                r -= 1
            first, r = r, r - 1
        elif s.startswith(markers):
            first, r = r, r - 1
        else:
            break
    return max(first, 0)


def python_end_line(node: Node) -> int:
    """Last line of a Python definition as ``ast`` counts it: trailing comments in its blocks do not count."""
    while True:
        kids = node.children
        i = len(kids) - 1
        while i >= 0 and kids[i].type == "comment":
            i -= 1
        if i < 0 or kids[i].child_count == 0:
            return end_line(kids[i] if i >= 0 else node)
        node = kids[i]


def python_string(literal: str) -> str:
    """A Python string literal's text without prefix and quotes, dedented like ``inspect.cleandoc``."""
    body = literal.lstrip("rRbBuUfF")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return inspect.cleandoc(body[len(quote) : len(body) - len(quote)])


def _python_docstring(body: Node | None) -> str | None:
    if body is None:
        return None
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            child = child.named_children[0]
        if child.type == "string":
            return python_string(_text(child)) or None
        return None
    return None


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


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None and (value := node.child_by_field_name("value")) is not None:
        body = value.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    return body


def _signature(src: bytes, d: _Def, language: str) -> str:
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
        defs: list[_Def] = []
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
        file_node = ParsedNode(
            index=0,
            kind=NodeKind.FILE,
            name=PurePosixPath(path).name,
            qualified_name=path,
            start_line=1,
            end_line=max(1, line_count(text)),
            docstring=_python_docstring(root) if language == "python" else _without_license(_file_comment(lines, markers)),
        )
        tree = DocumentTree(path, language, SourceType.CODE, [file_node], parser=self.name)
        ordered = _arrange(defs)
        for d in ordered:
            tree.nodes.append(_emit(d, path, src, language, lines, markers))
            _add_entities(tree, d, src, language)
        _add_refs(tree, defs, calls, _aliases(imports, path, language), language)
        return tree


def _make_def(caps: dict[str, list[Node]], seen: set[int], path: str) -> _Def | None:
    key = next((k for k in caps if k.startswith("definition.")), None)
    if key is None or "name" not in caps:
        return None
    node = caps[key][0]
    if node.id in seen:
        return None
    seen.add(node.id)
    name_node = caps["name"][0]
    name = _text(name_node)
    receiver = _text(caps["receiver"][0]) if "receiver" in caps else None
    if node.type == "assignment_expression":  # ``obj.f = function …``, ``Cls.prototype.f = …``, ``exports.f = …``
        if receiver == "module" and name == "exports":  # ``module.exports = function …``: the module's function
            name_node = node.child_by_field_name("right").child_by_field_name("name") or name_node  # type: ignore[union-attr]
            name = _text(name_node) if name_node.type == "identifier" else module_stem(path)
        receiver = js_owner(receiver or "")
    elif node.type in ("pair", "method_definition") and node.parent is not None and node.parent.type == "object":
        owner = node.parent.parent
        if owner is not None and owner.type == "assignment_expression":  # ``Cls.prototype = { f: function … }``
            receiver = js_owner(_text(owner.child_by_field_name("left") or owner))
        elif owner is not None and owner.type == "variable_declarator":  # ``const utils = { f: function … }``
            receiver = js_owner(_text(owner.child_by_field_name("name") or owner))
        elif node.type == "pair":  # a function in an options object or an argument is not a definition
            return None
    if receiver is None and "::" in name:
        receiver, _, name = name.rpartition("::")
        receiver = receiver.rsplit("::", 1)[-1]
    outer = node
    while outer.parent is not None and outer.parent.type in _WRAPPERS:
        outer = outer.parent
    return _Def(key.split(".", 1)[1], node, outer, name_node, name, receiver)


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


def _arrange(defs: list[_Def]) -> list[_Def]:
    """Give every definition its logical parent and return them in pre-order (parents before children)."""
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    by_name: dict[str, _Def] = {}
    for d in defs:
        if d.kind in _CONTAINERS:
            by_name.setdefault(d.name, d)
    stack: list[_Def] = []
    for d in defs:
        while stack and stack[-1].node.end_byte <= d.node.start_byte:
            stack.pop()
        d.parent = stack[-1] if stack else None
        stack.append(d)
    for d in defs:
        if d.kind == "impl":
            d.alias = by_name.get(d.name)
            d.kind = NodeKind.CLASS if d.alias is None else "impl"
    roots: list[_Def] = []
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
    ordered: list[_Def] = []
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


def _emit(
    d: _Def, path: str, src: bytes, language: str, lines: list[str], markers: tuple[str, ...]
) -> ParsedNode:
    node = d.node
    end = end_line(node)
    if language == "python":
        docstring = _python_docstring(node.child_by_field_name("body"))
        end = python_end_line(node)
    else:
        docstring = comment_above(lines, d.outer.start_point.row, markers)
    return ParsedNode(
        index=d.index,
        kind=NodeKind(d.kind),
        name=d.name,
        qualified_name=f"{path}::{d.qual}",
        start_line=d.outer.start_point.row + 1,
        end_line=end,
        parent=d.parent.index if d.parent is not None else 0,
        level=d.level,
        signature=_signature(src, d, language),
        docstring=docstring,
    )


def _file_comment(lines: list[str], markers: tuple[str, ...]) -> str | None:
    """The first comment block of a file (after blank lines and a shebang), or None when code comes first."""
    in_block = False
    started = False
    for row, line in enumerate(lines):
        s = line.strip()
        if in_block:
            in_block = "*/" not in s
        elif s.startswith("/*") and markers != ("#",):
            in_block = "*/" not in s[2:]
        elif s.startswith(markers) and not s.startswith("#!"):
            pass
        elif started or (s and not s.startswith("#!")):
            return comment_above(lines, row, markers) if started else None
        else:
            continue
        started = True
    return comment_above(lines, len(lines), markers)


_LICENSE_LINE = re.compile(r"^\s*(?:@license\b|copyright\b|\(c\)|©|licen[cs]ed under\b|spdx-license-identifier\b)", re.I)


def _without_license(comment: str | None) -> str | None:
    """A file comment up to its copyright or licence lines: they say who owns the file, not what it does."""
    if comment is None:
        return None
    kept = []
    for line in comment.split("\n"):
        if _LICENSE_LINE.match(line):
            break
        kept.append(line)
    return "\n".join(kept).strip() or None


def _add_entities(tree: DocumentTree, d: _Def, src: bytes, language: str) -> None:
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


def _aliases(imports: list[dict[str, list[Node]]], path: str, language: str) -> dict[str, str]:
    """Local name → qualified target for every import the query found."""
    sep = "::" if language == "rust" else "."
    out: dict[str, str] = {}
    for caps in imports:
        module = _text(caps["import.module"][0])
        if language == "python":
            module = python_module(module, path)
        name = _text(caps["import.name"][0]) if "import.name" in caps else None
        alias = _text(caps["import.alias"][0]) if "import.alias" in caps else None
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
        raw = _text(node)
    elif "callee.name" in caps:
        obj, name = caps["callee.object"][0], caps["callee.name"][0]
        if obj.end_byte - obj.start_byte > _MAX_CALLEE_BYTES:
            return None
        raw = f"{_text(obj)}.{_text(name)}"
    else:
        return None
    callee = "".join(raw.split()).replace("?.", ".").replace("->", ".")
    return callee if _CALLEE.match(callee) else None


Captures = dict[str, list[Node]]


def _add_refs(
    tree: DocumentTree, defs: list[_Def], calls: list[Captures], aliases: dict[str, str], lang: str
) -> None:
    """One ref per call with a dotted callee; the caller is the innermost enclosing definition (or the file)."""
    found = []
    for caps in calls:
        callee = _callee(caps)
        if callee is not None:
            found.append((caps["call"][0].start_byte, callee, caps["call"][0]))
    found.sort(key=lambda item: item[0])
    stack: list[_Def] = []
    i = 0
    for start, callee, call in found:
        while i < len(defs) and defs[i].node.start_byte <= start:
            while stack and stack[-1].node.end_byte <= defs[i].node.start_byte:
                stack.pop()
            stack.append(defs[i])
            i += 1
        while stack and stack[-1].node.end_byte <= start:
            stack.pop()
        caller = stack[-1].index if stack else 0
        line = call.start_point.row + 1
        head = _SEGMENT.split(callee, maxsplit=1)[0]
        qualified = aliases[head] + callee[len(head) :] if head in aliases else None
        tree.refs.append(ParsedRef(caller, callee, line, qualified))
        method = call_route_method(callee, lang)
        if method is not None:
            _add_call_endpoint(tree, call, method, caller)


def _add_call_endpoint(tree: DocumentTree, call: Node, method: str, caller: int) -> None:
    args = call.child_by_field_name("arguments")
    if args is None or args.named_child_count < 2:
        return
    route = unquote(_text(args.named_children[0]))
    if route is None:
        return
    route = join_paths(None, route)
    start, end = call.start_point.row + 1, end_line(call)
    tree.entities.append(ParsedEntity("endpoint", route, start, end, node=caller, detail=f"{method} {route}"))
