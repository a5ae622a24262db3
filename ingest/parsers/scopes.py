"""The names a function binds in its own scope: its parameters and the variables it assigns.

A call of such a name calls that value (``for rule in rules: rule(x)``), not a definition elsewhere
that happens to share the name, so the call site is recorded as bound locally (``ParsedRef.bound_locally``).
Python and JavaScript/TypeScript are read; other languages bind nothing here. A nested function's or class's
own name is not counted: it is a definition of its own, which the call may well be calling.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from sift.ingest.parsers.syntax import node_text

# Nodes that open a scope of their own: what they bind is not the enclosing function's.
_SCOPES = {
    "python": frozenset({"function_definition", "class_definition", "lambda"}),
    "javascript": frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                             "function", "generator_function", "arrow_function", "method_definition",
                             "class_declaration", "class"}),
}
_SCOPES["typescript"] = _SCOPES["tsx"] = _SCOPES["javascript"]
# Statements that bind names, and the field holding what they bind.
_TARGETS = {
    "python": {"assignment": "left", "augmented_assignment": "left", "for_statement": "left",
               "for_in_clause": "left", "named_expression": "name", "as_pattern": "alias"},
    "javascript": {"variable_declarator": "name", "catch_clause": "parameter"},
}
_TARGETS["typescript"] = _TARGETS["tsx"] = _TARGETS["javascript"]
# Patterns whose every named child is itself a pattern.
_NESTED = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "dictionary_splat_pattern",
                     "as_pattern_target", "parameters", "lambda_parameters", "formal_parameters", "object_pattern",
                     "array_pattern", "rest_pattern"})
# Patterns that bind only one of their fields (a parameter's name, not its default value or type).
_FIELD = {"default_parameter": "name", "typed_default_parameter": "name", "required_parameter": "pattern",
          "optional_parameter": "pattern", "assignment_pattern": "left", "pair_pattern": "value"}
_NAMES = frozenset({"identifier", "shorthand_property_identifier_pattern"})


def bound_names(pattern: Node | None) -> Iterator[str]:
    """The identifiers a binding pattern introduces (``x, (y, z)``, ``{a, b: c}``, ``[d, ...e]``, ``f=1``);
    nothing for an attribute, subscript or member target, which binds no name."""
    if pattern is None:
        return
    if pattern.type in _NAMES:
        yield node_text(pattern)
    elif pattern.type == "typed_parameter":  # ``x: int``: the name, not the type
        yield from bound_names(pattern.named_children[0] if pattern.named_children else None)
    elif pattern.type in _FIELD:
        yield from bound_names(pattern.child_by_field_name(_FIELD[pattern.type]))
    elif pattern.type in _NESTED:
        for child in pattern.named_children:
            yield from bound_names(child)


def _first_scope(node: Node, scopes: frozenset[str]) -> Node | None:
    """The outermost scope node under ``node``, in reading order (breadth first)."""
    queue = list(node.named_children)
    while queue:
        child = queue.pop(0)
        if child.type in scopes:
            return child
        queue.extend(child.named_children)
    return None


Binding = tuple[str, int, int]  # a name, and the bytes [start, end) of the scope it is bound in


def _scope_of(node: Node, function: Node, language: str) -> Node:
    """Where a binding made by ``node`` is visible: a JavaScript ``let``/``const`` in its block, a loop's declared
    variable in its loop, a ``catch`` parameter in its clause, a Python comprehension's variable in the
    comprehension; anything else in the whole function."""
    if language == "python":
        return node.parent if node.type == "for_in_clause" and node.parent is not None else function
    if node.type == "variable_declarator":
        declaration = node.parent
        if declaration is not None and declaration.type == "lexical_declaration" and declaration.parent is not None:
            return declaration.parent
        return function
    return node if node.type in ("for_in_statement", "catch_clause") else function


def local_bindings(function: Node, language: str) -> list[Binding]:
    """The names ``function`` (a function or method node, or what declares one) binds in its own scope, each with
    the range where it holds: its parameters and the targets of its assignments, loops, ``with … as``/``except …
    as`` and declarations, less the names a Python ``global``/``nonlocal`` statement hands to an outer scope.
    Empty for a language not read here."""
    scopes, targets = _SCOPES.get(language), _TARGETS.get(language)
    if scopes is None or targets is None:
        return []
    if function.type not in scopes:  # a function assigned or declared (``obj.f = function (h) {…}``): that function
        found = _first_scope(function, scopes)
        if found is None:
            return []
        function = found
    whole = (function.start_byte, function.end_byte)
    found_names = [(name, *whole) for name in bound_names(function.child_by_field_name("parameters"))]
    outer: set[str] = set()
    stack = list(function.named_children)
    while stack:
        node = stack.pop()
        if node.type in scopes:
            continue
        field = targets.get(node.type)
        if node.type == "for_in_statement" and node.child_by_field_name("kind") is not None:
            field = "left"  # ``for (const k of xs)``, not ``for (k of xs)``, which assigns an outer name
        if field is not None:
            scope = _scope_of(node, function, language)
            found_names.extend((name, scope.start_byte, scope.end_byte)
                               for name in bound_names(node.child_by_field_name(field)))
        elif node.type in ("global_statement", "nonlocal_statement"):
            outer.update(node_text(n) for n in node.named_children if n.type == "identifier")
        stack.extend(node.named_children)
    return [b for b in found_names if b[0] not in outer]


def bound_at(bindings: list[Binding], name: str, byte: int) -> bool:
    """Whether ``name`` is bound, at source offset ``byte``, by one of ``bindings``."""
    return any(n == name and start <= byte < end for n, start, end in bindings)


def local_names(function: Node, language: str) -> frozenset[str]:
    """The names ``function`` binds anywhere in its own scope (``local_bindings``, whatever their range)."""
    return frozenset(name for name, _, _ in local_bindings(function, language))
