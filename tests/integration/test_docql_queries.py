"""DocQL over a real ingested fixture repository (code + Markdown + rST): every operator, function and error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from sift.config import Settings
from sift.db import open_database
from sift.errors import InvalidQuery
from sift.ingest.pipeline import ingest
from sift.retrievers.docql import execute, resolve_kb

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docql_repo"
A, OR, C, IN = "src/shop/auth.py", "src/shop/orders.py", "src/shop/constants.py", "src/shop/__init__.py"
G, R, M = "docs/guide.md", "docs/api.rst", "README.md"

TOC = [
    (M, "heading", "Shop", 1, 3),
    (R, "heading", "API Reference", 1, 18),
    (R, "heading", "Auth module", 6, 14),
    (R, "heading", "Orders module", 15, 18),
    (G, "heading", "Shop Guide", 1, 23),
    (G, "heading", "Authentication", 5, 16),
    (G, "heading", "Rotating secrets", 13, 16),
    (G, "heading", "Orders & Checkout", 17, 23),
]
H = {t[2]: t for t in TOC}
LEVEL1 = [H["Shop"], H["API Reference"], H["Shop Guide"]]
LEVEL2 = [H["Auth module"], H["Orders module"], H["Authentication"], H["Orders & Checkout"]]
NOT2 = [H["Shop"], H["API Reference"], H["Shop Guide"], H["Rotating secrets"]]
AUTH_SERVICE = (A, "class", "AuthService", 6, 17)
AUTH_INIT = (A, "method", "__init__", 9, 10)
VALIDATE = (A, "method", "validate_token", 12, 14)
ROTATE = (A, "method", "rotate", 16, 17)
LOGIN = (A, "function", "login", 20, 24)
ORDER = (OR, "class", "Order", 6, 11)
ORDER_INIT = (OR, "method", "__init__", 9, 11)
REPO = (OR, "class", "OrderRepository", 14, 24)
REPO_INIT = (OR, "method", "__init__", 17, 18)
ADD = (OR, "method", "add", 20, 21)
FIND = (OR, "method", "find", 23, 24)
CHECKOUT = (OR, "function", "checkout", 27, 31)
FILES = [
    (M, "file", "README.md", 1, 3),
    (R, "file", "api.rst", 1, 18),
    (G, "file", "guide.md", 1, 23),
    (IN, "file", "__init__.py", 1, 1),
    (A, "file", "auth.py", 1, 24),
    (C, "file", "constants.py", 1, 3),
    (OR, "file", "orders.py", 1, 31),
]

CASES: list[tuple[str, list[tuple[str, str, str, int, int]]]] = [
    # $.toc and every comparison operator
    ("$.toc", TOC),
    ("$.toc[*]", TOC),
    ("$.toc[?(@.level == 1)]", LEVEL1),
    ("$.toc[? (@.level == 2)]", LEVEL2),
    ("$.toc[?(@.level != 2)]", NOT2),
    (
        "$.toc[?(@.level > 1)]",
        [
            H["Auth module"],
            H["Orders module"],
            H["Authentication"],
            H["Rotating secrets"],
            H["Orders & Checkout"],
        ],
    ),
    ("$.toc[?(@.level >= 3)]", [H["Rotating secrets"]]),
    ("$.toc[?(@.level < 2)]", LEVEL1),
    ("$.toc[?(@.level <= 1)]", LEVEL1),
    ('$.toc[?(@.title ~= "ORDERS")]', [H["Orders module"], H["Orders & Checkout"]]),
    ("$.toc[?(@.title =~ /^A/)]", [H["API Reference"], H["Auth module"], H["Authentication"]]),
    ("$.toc[?(@.title =~ /MODULE$/i)]", [H["Auth module"], H["Orders module"]]),
    ('$.toc[?(@.title startsWith "Shop")]', [H["Shop"], H["Shop Guide"]]),
    ('$.toc[?(@.title startsWith "shop")]', []),
    ("$.toc[?(@.title endsWith 'module')]", [H["Auth module"], H["Orders module"]]),
    ('$.toc[?(@.path endsWith ".rst")]', [H["API Reference"], H["Auth module"], H["Orders module"]]),
    ('$.toc[?(@.level == 2 && @.path == "docs/guide.md")]', [H["Authentication"], H["Orders & Checkout"]]),
    ('$.toc[?(@.level == 3 || @.title == "Shop")]', [H["Shop"], H["Rotating secrets"]]),
    ("$.toc[?(!(@.level == 2))]", NOT2),
    ('$.toc[?(!(@.level == 2) && !(@.title ~= "shop"))]', [H["API Reference"], H["Rotating secrets"]]),
    ('$.toc[?(@.parent == "Shop Guide")]', [H["Authentication"], H["Orders & Checkout"]]),
    ('$.toc[?(@.anchor == "orders--checkout")]', [H["Orders & Checkout"]]),
    ("$.toc[?(@.body_start_line == 14)]", [H["Rotating secrets"]]),
    ('$.toc[?(@.language == "rst" && @.start_line > 10)]', [H["Orders module"]]),
    ('$.toc[?(@.title =~ "secret" || @.level == 1)]', [*LEVEL1, H["Rotating secrets"]]),
    ("$.toc[?(@.anchor != null)][?(@.level == 3)]", [H["Rotating secrets"]]),
    ("$.toc[0]", [H["Shop"]]),
    ("$.toc[-1]", [H["Orders & Checkout"]]),
    ("$.toc[1:3]", [H["API Reference"], H["Auth module"]]),
    ("$.toc[?(@.level == 2)][1:]", LEVEL2[1:]),
    ("$.toc[99]", []),
    # $.content sections and functions
    ('$.content[?(@.content ~= "90 days")]', [H["Shop Guide"], H["Authentication"], H["Rotating secrets"]]),
    ('$.content.heading("authentication")', [H["Authentication"]]),
    ('$.content.heading("orders: checkout!")', [H["Orders & Checkout"]]),
    ('$.content.heading("module")', [H["Auth module"], H["Orders module"]]),
    ('$.content.heading("nothing here")', []),
    ('$.content.h1("shop guide")', [H["Shop Guide"]]),
    ('$.content.h2("Authentication")', [H["Authentication"]]),
    ('$.content.h3("authentication")', []),
    ('$.content.h2("ORDERS")', [H["Orders module"], H["Orders & Checkout"]]),
    (
        '$.content.grep("secret")',
        [
            (G, "match", "### Rotating secrets", 13, 13),
            (G, "match", "Rotate the secret every 90 days.", 15, 15),
        ],
    ),
    (
        "$.content.grep(/^#+ /)",
        [
            (M, "match", "# Shop", 1, 1),
            (G, "match", "# Shop Guide", 1, 1),
            (G, "match", "## Authentication", 5, 5),
            (G, "match", "### Rotating secrets", 13, 13),
            (G, "match", "## Orders & Checkout", 17, 17),
        ],
    ),
    (
        '$.content.grep("TOKEN", "i")',
        [
            (R, "match", "Use ``AuthService`` to check tokens.", 9, 9),
            (R, "match", '   AuthService("s3cret").validate_token("t")', 13, 13),
            (G, "match", "Tokens are validated by `AuthService.validate_token`.", 7, 7),
            (G, "match", "Call `checkout` with a valid token.", 19, 19),
        ],
    ),
    (
        '$.content.grep(/tokens/)[?(@.section == "Auth module")]',
        [(R, "match", "Use ``AuthService`` to check tokens.", 9, 9)],
    ),
    (
        "$.content.codeblock[*]",
        [
            (R, "codeblock", "Auth module", 11, 13),
            (G, "codeblock", "Authentication", 9, 11),
            (G, "codeblock", "Orders & Checkout", 21, 23),
        ],
    ),
    ('$.content.codeblock[?(@.lang == "bash")]', [(G, "codeblock", "Orders & Checkout", 21, 23)]),
    ('$.content.codeblock[?(@.source ~= "validate_token")]', [(R, "codeblock", "Auth module", 11, 13)]),
    # $.code collections and functions
    ('$.code.class("AuthService")', [AUTH_SERVICE]),
    ('$.code.class("Order")', [ORDER]),
    ('$.code.class("Nope")', []),
    ('$.code.function("login")', [LOGIN]),
    ('$.code.function("validate_token")', [VALIDATE]),
    ('$.code.method("OrderRepository.__init__")', [REPO_INIT]),
    ('$.code.method("__init__")', [AUTH_INIT, ORDER_INIT, REPO_INIT]),
    ('$.code.method("login")', []),
    ('$.code.query("add")', [ADD]),
    ('$.code.query("src/shop/auth.py::login")', [LOGIN]),
    ("$.code.classes", [AUTH_SERVICE, ORDER, REPO]),
    ("$.code.functions", [LOGIN, CHECKOUT]),
    ("$.code.methods", [AUTH_INIT, VALIDATE, ROTATE, ORDER_INIT, REPO_INIT, ADD, FIND]),
    ('$.code.methods[?(@.parent == "OrderRepository")]', [REPO_INIT, ADD, FIND]),
    ('$.code.methods[?(@.name startsWith "__")]', [AUTH_INIT, ORDER_INIT, REPO_INIT]),
    ('$.code[?(@.signature ~= "-> str")]', [LOGIN, CHECKOUT]),
    ("$.code[?(@.docstring == null)]", [AUTH_INIT, ROTATE, ORDER_INIT, REPO_INIT, ADD, FIND]),
    ("$.code[?(@.docstring)]", [AUTH_SERVICE, VALIDATE, LOGIN, ORDER, REPO, CHECKOUT]),
    ("$.code[?(@.docstring == false && @.level == 1)]", []),
    ('$.code[?(@.type == "function" || @.name == "find")]', [LOGIN, FIND, CHECKOUT]),
    ("$.code.classes[?(@.qualified_name =~ /Repo/)]", [REPO]),
    ('$.code[?(@.source ~= "self.orders")]', [REPO, REPO_INIT, ADD, FIND]),
    ("$.code.functions[0].source", [LOGIN]),
    # call graph
    ('$.code.callers("validate_token")', [(A, "call", "service.validate_token", 22, 22)]),
    ('$.code.callers("login")', [(OR, "call", "login", 29, 29)]),
    ('$.code.callers("AuthService.validate_token")', [(A, "call", "service.validate_token", 22, 22)]),
    ('$.code.callers("other.login")', []),
    ('$.code.calls("checkout")', [(OR, "call", "login", 29, 29), (OR, "call", "repo.add", 30, 30)]),
    ('$.code.calls("AuthService.validate_token")', [(A, "call", "hmac.compare_digest", 14, 14)]),
    ('$.code.calls("validate_token")', [(A, "call", "hmac.compare_digest", 14, 14)]),
    ('$.code.callers("add")[?(@.caller == "checkout")]', [(OR, "call", "repo.add", 30, 30)]),
    # files, entities, structure
    ("$.files", FILES),
    ('$.files[?(@.language == "python")]', FILES[3:]),
    ("$.files[?(@.line_count > 20)]", [FILES[2], FILES[4], FILES[6]]),
    ("$.files[?(@.content =~ /hmac/)]", [FILES[4]]),
    ('$.entities[?(@.type == "class")]', [AUTH_SERVICE, ORDER, REPO]),
    ('$.entities[?(@.name ~= "order" && @.kind == "class")]', [ORDER, REPO]),
    ("$.entities[?(@.detail == null)][0:2]", [AUTH_SERVICE, AUTH_INIT]),
    ('$.structure.flat("src/shop/auth.py")', [AUTH_SERVICE, AUTH_INIT, VALIDATE, ROTATE, LOGIN]),
    (
        '$.structure.flat("docs/")',
        [
            H["API Reference"],
            H["Auth module"],
            H["Orders module"],
            H["Shop Guide"],
            H["Authentication"],
            H["Rotating secrets"],
            H["Orders & Checkout"],
        ],
    ),
    ('$.structure.flat()[?(@.kind == "heading" && @.level == 1)]', LEVEL1),
]

ERRORS = [
    ("$.nope", 3, "unknown root 'nope'"),
    ('$.code.klass("X")', 8, "unknown function 'klass'"),
    ("$.toc[?(@.lvl == 1)]", 11, "unknown field 'lvl'"),
    ("$.toc[?(@.level = 1)]", 17, "expected an operator"),
    ("$.toc[?(@.title =~ /(/)]", 20, "invalid regex"),
    ("$.content.grep('[')", 16, "invalid regex"),
    ("$.structure.tree().source", 25, "outlines have no text"),
    ("$.files[?(@.content =~ /(\\w|\\w\\w)+$/)]", 24, "took too long"),
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, int, int]:
    """The fixture repository ingested by the real pipeline."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("docql"))
    ingest(settings, FIXTURE, "shop", build_index=False)
    engine = open_database(settings)
    kb_id, generation = resolve_kb(engine, "shop")
    return engine, kb_id, generation


def _keys(result: dict[str, Any]) -> list[tuple[str, str, str, int, int]]:
    return [
        (
            path,
            item["type"],
            item.get("name") or item.get("text") or item.get("heading"),
            item["start_line"],
            item["end_line"],
        )
        if item["type"] != "codeblock"
        else (path, "codeblock", item["heading"], item["start_line"], item["end_line"])
        for path, items in result["files"].items()
        for item in items
    ]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[q for q, _ in CASES])
def test_docql_query_results(shop: tuple[Engine, int, int], query: str, expected: list) -> None:
    engine, kb_id, generation = shop
    result = execute(engine, kb_id, generation, query)
    assert result["type"] == "docql_result" and result["query"] == query
    assert _keys(result) == expected
    assert (result["total"], result["truncated"]) == (len(expected), False)


@pytest.mark.parametrize(("query", "column", "fragment"), ERRORS, ids=[q for q, *_ in ERRORS])
def test_docql_query_errors(shop: tuple[Engine, int, int], query: str, column: int, fragment: str) -> None:
    engine, kb_id, generation = shop
    # CPU seconds of this process, not wall time: the bound is that a catastrophic regex cannot pin a CPU, and a
    # busy machine stretches the database reads around it without that being the query's doing.
    started = time.process_time()
    with pytest.raises(InvalidQuery) as info:
        execute(engine, kb_id, generation, query)
    assert time.process_time() - started < 3
    assert (info.value.position, fragment in info.value.message) == (column, True)


def test_docql_limit_truncates_and_keeps_total(shop: tuple[Engine, int, int]) -> None:
    engine, kb_id, generation = shop
    result = execute(engine, kb_id, generation, "$.toc", limit=2)
    assert _keys(result) == TOC[:2]
    assert (result["total"], result["truncated"]) == (8, True)
    python_side = execute(engine, kb_id, generation, "$.toc[?(@.title =~ /o/)]", limit=1)
    assert (python_side["total"], python_side["truncated"], _keys(python_side)) == (7, True, [H["Shop"]])


def test_docql_text_of_sections_and_symbols(shop: tuple[Engine, int, int]) -> None:
    engine, kb_id, generation = shop
    section = execute(engine, kb_id, generation, '$.content.heading("Rotating secrets")')["files"][G][0]
    assert section["content"] == "### Rotating secrets\n\nRotate the secret every 90 days.\n"
    cls = execute(engine, kb_id, generation, '$.code.method("AuthService.validate_token")')["files"][A][0]
    assert cls["source"].splitlines()[0] == "    def validate_token(self, token: str) -> bool:"
    assert cls["qualified_name"] == "src/shop/auth.py::AuthService.validate_token"
    listing = execute(engine, kb_id, generation, "$.code.classes")["files"][A][0]
    assert "source" not in listing
    projected = execute(engine, kb_id, generation, "$.toc[0].content")["files"][M][0]
    assert projected["content"] == "# Shop\n\nA tiny shop used by the DocQL tests."
    call = execute(engine, kb_id, generation, '$.code.callers("login")')["files"][OR][0]
    assert (call["caller"], call["callee_qualified"], call["source"]) == (
        "checkout",
        "shop.auth.login",
        "    login(service, token)",
    )
    match = execute(engine, kb_id, generation, '$.content.grep("90 days")')["files"][G][0]
    assert match["section"] == "Rotating secrets"


def test_docql_tree_nests_children(shop: tuple[Engine, int, int]) -> None:
    engine, kb_id, generation = shop
    (top,) = execute(engine, kb_id, generation, '$.structure.tree("docs/guide.md")')["files"][G]

    def names(item: dict) -> list:
        return [item["name"], [names(c) for c in item["children"]]]

    assert names(top) == [
        "Shop Guide",
        [["Authentication", [["Rotating secrets", []]]], ["Orders & Checkout", []]],
    ]
