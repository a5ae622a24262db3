"""The names a file's functions bind themselves: their parameters and the variables they assign.

A call of such a name calls that value (``for rule in rules: rule(x)``), not a definition elsewhere that happens to
share the name, so the call site is recorded as bound locally (``ParsedRef.bound_locally``). Python and
JavaScript/TypeScript are read; other languages bind nothing here. The binding statements are found by one
tree-sitter query per file, run only when the file calls a bare name that is not a builtin, and only the bindings of
the names called are read further. A name holds in the function
that binds it (inner functions included, as a closure sees it), a JavaScript ``let``/``const`` in its block, a
loop's declared variable in its loop. Names bound in a class body or at module level are left out: a class body's
names are not visible in its methods, and a module-level name is the module's own definition. A nested
function's or class's own name is not counted either: it is a definition of its own.
"""

from __future__ import annotations

import builtins
from collections import defaultdict
from collections.abc import Collection, Iterator
from functools import cache

import tree_sitter_language_pack as tslp
from tree_sitter import Node, Query, QueryCursor

from sift.ingest.parsers.syntax import node_text

_JS_QUERY = """
(formal_parameters) @params
(arrow_function parameter: (identifier) @target)
(variable_declarator name: (_) @target)
(for_in_statement left: (_) @target)
(catch_clause parameter: (_) @target)
"""
_QUERIES = {
    "python": """
(parameters) @params
(lambda_parameters) @params
(assignment left: (_) @target)
(augmented_assignment left: (_) @target)
(for_statement left: (_) @target)
(for_in_clause left: (_) @target)
(named_expression name: (_) @target)
(as_pattern alias: (_) @target)
(global_statement) @outer
(nonlocal_statement) @outer
""",
    "javascript": _JS_QUERY, "typescript": _JS_QUERY, "tsx": _JS_QUERY,
}
_JS_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                           "function", "generator_function", "arrow_function", "method_definition"})
_FUNCTIONS = {"python": frozenset({"function_definition", "lambda"}), "javascript": _JS_FUNCTIONS,
              "typescript": _JS_FUNCTIONS, "tsx": _JS_FUNCTIONS}
_CLASSES = frozenset({"class_definition", "class_declaration", "class", "class_body"})
# Patterns whose every named child is itself a pattern.
_NESTED = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "dictionary_splat_pattern",
                     "as_pattern_target", "parameters", "lambda_parameters", "formal_parameters", "object_pattern",
                     "array_pattern", "rest_pattern"})
# Patterns that bind only one of their fields (a parameter's name, not its default value or type).
_FIELD = {"default_parameter": "name", "typed_default_parameter": "name", "required_parameter": "pattern",
          "optional_parameter": "pattern", "assignment_pattern": "left", "pair_pattern": "value"}
_NAMES = frozenset({"identifier", "shorthand_property_identifier_pattern"})
Bindings = dict[str, list[tuple[int, int]]]  # a name → the byte ranges [start, end) where it is bound


# Names every file can call without binding them: Python's builtins and JavaScript's standard globals. No
# function's own binding is looked for when a call is to one of these (``is_global``).
_GLOBALS = {
    "python": frozenset(dir(builtins)),
    "javascript": frozenset({"require", "parseInt", "parseFloat", "isNaN", "isFinite", "String", "Number", "Boolean",
                             "Object", "Array", "Symbol", "BigInt", "Error", "TypeError", "RangeError", "SyntaxError",
                             "Promise", "Date", "RegExp", "Map", "Set", "WeakMap", "WeakSet", "setTimeout",
                             "clearTimeout", "setInterval", "clearInterval", "setImmediate", "queueMicrotask",
                             "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI", "fetch",
                             "structuredClone"}),
}
_GLOBALS["typescript"] = _GLOBALS["tsx"] = _GLOBALS["javascript"]


def is_global(name: str, language: str) -> bool:
    """Whether ``name`` is one every file of ``language`` can call unbound (a builtin, a standard global)."""
    return name in _GLOBALS.get(language, ())


@cache
def _query(language: str) -> Query | None:
    source = _QUERIES.get(language)
    return Query(tslp.get_language(language), source) if source else None  # type: ignore[arg-type]


def bound_names(pattern: Node | None) -> Iterator[str]:
    """The identifiers a binding pattern introduces (``x, (y, z)``, ``{a, b: c}``, ``[d, ...e]``, ``f=1``), in
    reading order; nothing for an attribute, subscript or member target, which binds no name. Iterative: a
    pattern nested thousands deep costs no recursion."""
    stack = [pattern] if pattern is not None else []
    while stack:
        node = stack.pop()
        if node.type in _NAMES:
            yield node_text(node)
        elif node.type == "typed_parameter":  # ``x: int``: the name, not the type
            stack.extend(node.named_children[:1])
        elif node.type in _FIELD:
            part = node.child_by_field_name(_FIELD[node.type])
            stack.extend([part] if part is not None else [])
        elif node.type in _NESTED:
            stack.extend(reversed(node.named_children))


def _function_of(node: Node, functions: frozenset[str]) -> Node | None:
    """The innermost function around ``node``; None at module level or in a class body outside any method."""
    up = node.parent
    while up is not None:
        if up.type in functions:
            return up
        if up.type in _CLASSES:
            return None
        up = up.parent
    return None


def _scope_of(statement: Node, function: Node) -> Node:
    """Where a binding made by ``statement`` holds: a JavaScript ``let``/``const`` in its block, a loop's declared
    variable in its loop, a ``catch`` parameter in its clause, a Python comprehension's variable in the
    comprehension; anything else in the whole function."""
    if statement.type == "for_in_clause" and statement.parent is not None:
        return statement.parent
    if statement.type == "variable_declarator":
        declaration = statement.parent
        if declaration is not None and declaration.type == "lexical_declaration" and declaration.parent is not None:
            return declaration.parent
    if statement.type in ("for_in_statement", "catch_clause"):
        return statement
    return function


def bindings_in(root: Node, language: str, names: Collection[str] | None = None) -> Bindings:
    """Every name (of ``names``, when given) a function under ``root`` binds itself, with the byte ranges where it
    holds (``bound_at``): its parameters and the targets of its assignments, loops, ``with … as``/``except … as``
    and declarations, less the names a Python ``global``/``nonlocal`` statement hands to an outer scope. Empty for
    a language not read here."""
    query, functions = _query(language), _FUNCTIONS.get(language)
    if query is None or functions is None:
        return {}
    captures = QueryCursor(query).captures(root)
    wanted = (lambda name: True) if names is None else names.__contains__
    handed_out: set[tuple[str, int]] = set()  # (name, its function's start): global or nonlocal there
    for declared in captures.get("outer", []):
        function = _function_of(declared, functions)
        if function is not None:
            handed_out.update((node_text(n), function.start_byte) for n in declared.named_children
                              if n.type == "identifier")
    found: list[tuple[str, Node, Node]] = []  # (name, its function, the node it holds in)
    for params in captures.get("params", []):
        owner = params.parent
        if owner is not None and owner.type in functions:
            found.extend((name, owner, owner) for name in bound_names(params) if wanted(name))
    for target in captures.get("target", []):
        statement = target.parent
        if statement is None or (statement.type == "for_in_statement"
                                 and statement.child_by_field_name("kind") is None):
            continue  # ``for (k of xs)`` assigns a name declared elsewhere
        bound = [name for name in bound_names(target) if wanted(name)]
        if not bound:
            continue
        if statement.type == "arrow_function":  # ``x => x()``: its one parameter
            found.extend((name, statement, statement) for name in bound)
            continue
        function = _function_of(statement, functions)
        if function is not None:
            scope = _scope_of(statement, function)
            found.extend((name, function, scope) for name in bound)
    out: Bindings = defaultdict(list)
    for name, function, scope in found:
        if (name, function.start_byte) not in handed_out:
            out[name].append((scope.start_byte, scope.end_byte))
    return dict(out)


def bound_at(bindings: Bindings, name: str, byte: int) -> bool:
    """Whether ``name`` is bound, at source offset ``byte``, by one of ``bindings``."""
    return any(start <= byte < end for start, end in bindings.get(name, ()))
