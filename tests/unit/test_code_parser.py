"""CodeParser on small snippets per language: kinds, names, qualified names, line ranges, docs, refs, endpoints."""

from __future__ import annotations

import dataclasses
import json
import os
import textwrap
from pathlib import Path

import pytest

from sift.ingest.parsers.calls import python_module
from sift.ingest.parsers.code import CodeParser, js_owner, module_stem
from sift.languages import classify
from sift.models import DocumentTree, SourceType


@pytest.fixture(scope="module")
def parser() -> CodeParser:
    return CodeParser()


def parse(parser: CodeParser, language: str, source: str, path: str = "f") -> DocumentTree:
    return parser.parse(path, textwrap.dedent(source).lstrip("\n"), language)


def outline(tree: DocumentTree) -> list[tuple[str, str, int, int, int]]:
    """(kind, qualified name without the path, start, end, level) for every node but the file."""
    return [
        (n.kind, n.qualified_name.split("::", 1)[1], n.start_line, n.end_line, n.level)
        for n in tree.nodes[1:]
    ]


PYTHON = '''
"""Module doc."""
import functools


@functools.lru_cache
@other
def cached(x):
    """Cached.

    Args:
        x: anything.
    """
    return x


class Outer:
    """Outer doc."""

    class Inner:
        def method(self):
            def helper():
                pass
            return helper

    async def fetch(self, url: str) -> bytes:
        return b""
'''

JAVASCRIPT = """
/** Adds. */
function add(a, b) {
  return a + b;
}

class Counter {
  inc = () => {
    this.n += 1;
  };
  get() {
    return this.n;
  }
}

const double = (x) => x * 2;
export const triple = function (x) {
  return x * 3;
};
"""

TYPESCRIPT = """
interface Shape {
  area(): number;
}

export class Square implements Shape {
  constructor(private side: number) {}
  area(): number {
    return this.side ** 2;
  }
}

enum Color { Red, Green }
"""

TSX = """
type Props = { name: string };

export function Hello({ name }: Props) {
  return <div>{name}</div>;
}

export const Bye = ({ name }: Props) => <span>{name}</span>;
"""

# A declaration file: type aliases, `declare function`s, and overloads (one definition per run of signatures
# of a name that ends in the implementation or in a further signature). The second `parse` is apart from the
# first (a statement between them), so it is a definition of its own.
TS_DECLARATIONS = """export type Options = {
  strict?: boolean;
}
/** Parses text. */
export declare function parse(text: string): Options;
// With options.
export declare function parse(text: string, options: Options): Options;
export declare const version: string;
/** Parses text again. */
export function parse(text: string, options?: Options): Options;
export function parse(text: any): any { return {} }
/** Calls back per item. */
export declare function each(items: string[], f: (item: string) => void): void;
class Reader {
  read(n: number): string;
  read(): string;
  read(n?: number) { return "" }
  close(): void;
}
"""

# Exported bindings: one with a doc comment is a definition (an object's functions are its methods), one without
# stays module code, and a function value is a function.
EXPORTED_BINDINGS = """/** Parses the text. */
export const parse = parser.parse.bind(parser)
/** Helpers. */
export const helpers = {
  /** Adds. */
  add(a, b) { return a + b },
}
export const VERSION = "1.0"
/** Makes one. */
export const make = () => 1
"""

JAVA = """
package demo;

public class Greeter implements Named {
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    public String greet() {
        return "hi " + name;
    }
}

interface Named {
    String greet();
}
"""

GO = """
package shapes

// Point is a point.
type Point struct {
	X, Y int
}

type Shape interface {
	Area() float64
}

func (p *Point) Move(dx int) {
	p.X += dx
}

func New() Point {
	return Point{}
}
"""

RUST = """
struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    fn push(&mut self, item: T) {
        self.items.push(item);
    }
}

trait Sized2 {
    fn size(&self) -> usize;
}

impl Sized2 for Remote {
    fn size(&self) -> usize { 0 }
}

fn main() {}
"""

C = """
struct node {
    int value;
};

static int add(int a, int b)
{
    return a + b;
}
"""

CPP = """
class Shape {
public:
    virtual double area() const { return 0; }
    void draw();
};

void Shape::draw() {
    render(area());
}

int main() { return 0; }
"""

KOTLIN = """
interface Repo {
    fun find(id: Int): String
}

class Service(val repo: Repo) {
    fun run(): String {
        return repo.find(1)
    }
}

fun main() {
    println("x")
}
"""

RUBY = """
module Billing
  class Invoice
    def total
      lines.sum
    end

    def self.build
      new
    end
  end
end

def helper
  1
end
"""

OUTLINES = [
    (
        "python",
        PYTHON,
        [
            ("function", "cached", 5, 13, 1),
            ("class", "Outer", 16, 26, 1),
            ("class", "Outer.Inner", 19, 23, 2),
            ("method", "Outer.Inner.method", 20, 23, 3),
            ("function", "Outer.Inner.method.helper", 21, 22, 4),
            ("method", "Outer.fetch", 25, 26, 2),
        ],
    ),
    (
        "javascript",
        JAVASCRIPT,
        [
            ("function", "add", 2, 4, 1),
            ("class", "Counter", 6, 13, 1),
            ("method", "Counter.inc", 7, 9, 2),
            ("method", "Counter.get", 10, 12, 2),
            ("function", "double", 15, 15, 1),
            ("function", "triple", 16, 18, 1),
        ],
    ),
    (
        "typescript",
        TYPESCRIPT,
        [
            ("interface", "Shape", 1, 3, 1),
            ("method", "Shape.area", 2, 2, 2),
            ("class", "Square", 5, 10, 1),
            ("method", "Square.constructor", 6, 6, 2),
            ("method", "Square.area", 7, 9, 2),
            ("enum", "Color", 12, 12, 1),
        ],
    ),
    ("tsx", TSX, [("type", "Props", 1, 1, 1), ("function", "Hello", 3, 5, 1), ("function", "Bye", 7, 7, 1)]),
    (
        "typescript",
        TS_DECLARATIONS,
        [
            ("type", "Options", 1, 3, 1),
            ("function", "parse", 5, 7, 1),
            ("function", "parse", 10, 11, 1),
            ("function", "each", 13, 13, 1),
            ("class", "Reader", 14, 19, 1),
            ("method", "Reader.read", 15, 17, 2),
            ("method", "Reader.close", 18, 18, 2),
        ],
    ),
    (
        "javascript",
        EXPORTED_BINDINGS,
        [
            ("variable", "parse", 2, 2, 1),
            ("variable", "helpers", 4, 7, 1),
            ("method", "helpers.add", 6, 6, 2),
            ("function", "make", 10, 10, 1),
        ],
    ),
    (
        "java",
        JAVA,
        [
            ("class", "Greeter", 3, 13, 1),
            ("method", "Greeter.Greeter", 6, 8, 2),
            ("method", "Greeter.greet", 10, 12, 2),
            ("interface", "Named", 15, 17, 1),
            ("method", "Named.greet", 16, 16, 2),
        ],
    ),
    (
        "go",
        GO,
        [
            ("struct", "Point", 4, 6, 1),
            ("method", "Point.Move", 12, 14, 2),
            ("interface", "Shape", 8, 10, 1),
            ("method", "Shape.Area", 9, 9, 2),
            ("function", "New", 16, 18, 1),
        ],
    ),
    (
        "rust",
        RUST,
        [
            ("struct", "Stack", 1, 3, 1),
            ("method", "Stack.push", 6, 8, 2),
            ("trait", "Sized2", 11, 13, 1),
            ("method", "Sized2.size", 12, 12, 2),
            ("class", "Remote", 15, 17, 1),
            ("method", "Remote.size", 16, 16, 2),
            ("function", "main", 19, 19, 1),
        ],
    ),
    ("c", C, [("struct", "node", 1, 3, 1), ("function", "add", 5, 8, 1)]),
    (
        "cpp",
        CPP,
        [
            ("class", "Shape", 1, 5, 1),
            ("method", "Shape.area", 3, 3, 2),
            ("method", "Shape.draw", 7, 9, 2),
            ("function", "main", 11, 11, 1),
        ],
    ),
    (
        "kotlin",
        KOTLIN,
        [
            ("interface", "Repo", 1, 3, 1),
            ("method", "Repo.find", 2, 2, 2),
            ("class", "Service", 5, 9, 1),
            ("method", "Service.run", 6, 8, 2),
            ("function", "main", 11, 13, 1),
        ],
    ),
    (
        "ruby",
        RUBY,
        [
            ("class", "Billing", 1, 11, 1),
            ("class", "Billing.Invoice", 2, 10, 2),
            ("method", "Billing.Invoice.total", 3, 5, 3),
            ("method", "Billing.Invoice.build", 7, 9, 3),
            ("function", "helper", 13, 15, 1),
        ],
    ),
]


@pytest.mark.parametrize(("language", "source", "expected"), OUTLINES, ids=[case[0] for case in OUTLINES])
def test_code_parser_outline_per_language(
    parser: CodeParser, language: str, source: str, expected: list
) -> None:
    tree = parse(parser, language, source, path="src/f")
    assert outline(tree) == expected
    root = tree.nodes[0]
    assert (root.kind, root.name, root.qualified_name, root.start_line, root.level) == (
        "file",
        "f",
        "src/f",
        1,
        0,
    )
    assert root.end_line == len(textwrap.dedent(source).lstrip("\n").splitlines())
    assert tree.source_type == SourceType.CODE and tree.parser == "tree-sitter" and tree.language == language
    for node in tree.nodes[1:]:
        assert node.parent is not None and node.parent < node.index
        assert node.level == tree.nodes[node.parent].level + 1
    entity_nodes = sorted(e.node for e in tree.entities if e.type != "endpoint")
    assert entity_nodes == list(range(1, len(tree.nodes)))


@pytest.mark.parametrize(
    ("language", "source", "qualified", "signature", "docstring"),
    [
        ("python", PYTHON, "cached", "def cached(x)", "Cached.\n\nArgs:\n    x: anything."),
        ("python", PYTHON, "Outer", "class Outer", "Outer doc."),
        ("python", PYTHON, "Outer.fetch", "async def fetch(self, url: str) -> bytes", None),
        ("javascript", JAVASCRIPT, "add", "function add(a, b)", "Adds."),
        ("javascript", JAVASCRIPT, "double", "const double = (x) =>", None),
        ("go", GO, "Point", "type Point struct", "Point is a point."),
        ("go", GO, "Point.Move", "func (p *Point) Move(dx int)", None),
        ("rust", RUST, "Sized2.size", "fn size(&self) -> usize", None),
        ("java", JAVA, "Greeter.greet", "public String greet()", None),
        ("ruby", RUBY, "Billing.Invoice.build", "def self.build", None),
    ],
)
def test_code_parser_signature_and_docstring(
    parser: CodeParser, language: str, source: str, qualified: str, signature: str, docstring: str | None
) -> None:
    tree = parse(parser, language, source)
    (node,) = [n for n in tree.nodes if n.qualified_name == f"f::{qualified}"]
    assert (node.signature, node.docstring) == (signature, docstring)


@pytest.mark.parametrize(
    ("language", "source", "docstring"),
    [
        ("python", PYTHON, "Module doc."),
        (
            "go",
            "// Package shapes draws.\n// Second line.\npackage shapes\n",
            "Package shapes draws.\nSecond line.",
        ),
        ("java", "/**\n * Demo file.\n */\npackage demo;\n", "Demo file."),
        ("ruby", "# frozen_string_literal: true\n\nclass A\nend\n", "frozen_string_literal: true"),
        ("c", "int x;\n", None),
    ],
)
def test_code_parser_file_docstring(
    parser: CodeParser, language: str, source: str, docstring: str | None
) -> None:
    assert parse(parser, language, source).nodes[0].docstring == docstring


COMMONJS = """
/**
 * Tiny templates.
 * Copyright 2020 Someone
 *
 * Licensed under the MIT License.
 */
var lib = exports;

/** Render a string. */
lib.render = function (text) {
  return text;
};

exports.compile = function compile(text) {
  return lib.render(text);
};

function Template(text) {
  this.text = text;
}

Template.prototype = {
  /** Split the text. */
  scan: function () {
    return this.text.split(" ");
  },
  size() {
    return this.text.length;
  },
};

Template.prototype.close = () => null;

const helpers = {
  trim: function (s) { return s.trim(); },
};

run({ onDone: function () {} });
"""


def test_code_parser_commonjs_definitions(parser: CodeParser) -> None:
    """Functions assigned to an object, a prototype or the module, and those in an object literal, are
    definitions; a function passed inside an options object is not; a file's licence lines are not its summary."""
    tree = parse(parser, "javascript", COMMONJS, "lib/tiny.js")
    assert [(kind, name) for kind, name, *_ in outline(tree)] == [
        ("method", "lib.render"),
        ("function", "compile"),
        ("function", "Template"),
        ("method", "Template.scan"),
        ("method", "Template.size"),
        ("method", "Template.close"),
        ("method", "helpers.trim"),
    ]
    assert tree.nodes[0].docstring == "Tiny templates."
    by_name = {n.name: n for n in tree.nodes}
    assert by_name["render"].docstring == "Render a string."
    assert by_name["render"].signature == "lib.render = function (text)"
    assert by_name["scan"].docstring == "Split the text."


@pytest.mark.parametrize(
    ("path", "source", "name"),
    [
        ("lib/verify.js", "module.exports = function (token) {\n  return token;\n};\n", "verify"),
        ("lib/sign/index.js", "module.exports = (payload) => payload;\n", "sign"),
        ("lib/a.js", "module.exports = function decode(token) {\n  return token;\n};\n", "decode"),
    ],
)
def test_code_parser_module_exports_function(parser: CodeParser, path: str, source: str, name: str) -> None:
    """``module.exports = function …`` is the module's function: its own name, else the file's (or folder's)."""
    assert [n.name for n in parse(parser, "javascript", source, path).nodes[1:]] == [name]


@pytest.mark.parametrize(
    ("text", "owner"),
    [
        ("Template.prototype", "Template"),
        ("utils", "utils"),
        ("exports", None),
        ("module.exports", None),
        ("module.exports.helpers", "helpers"),
        ("this", None),
        ("a.b.c", "c"),
        ("(a || b)", None),
        ("items[0]", None),
        ("", None),
    ],
)
def test_js_owner_table(text: str, owner: str | None) -> None:
    assert js_owner(text) == owner


@pytest.mark.parametrize(
    ("path", "stem"),
    [("lib/verify.js", "verify"), ("lib/sign/index.js", "sign"), ("index.js", "index"), ("a/b.min.js", "b")],
)
def test_module_stem_table(path: str, stem: str) -> None:
    assert module_stem(path) == stem


@pytest.mark.parametrize(
    ("language", "source", "comment"),
    [
        (
            "java",
            "class A {\n    /**\n     * Does it.\n     * Twice.\n     */\n    void run() {}\n}\n",
            "Does it.\nTwice.",
        ),
        ("rust", "/// Makes one.\n/// Really.\nfn make() {}\n", "Makes one.\nReally."),
        ("ruby", "# Says hi.\ndef hi\nend\n", "Says hi."),
        ("typescript", "// Not attached.\n\nfunction f() {}\n", None),
        ("typescript", "/** Exported. */\nexport function f() {}\n", "Exported."),
        # directives to tools are no documentation
        ("typescript", "/*#__PURE__*/\nexport function f() {}\n", None),
        ("javascript", "// eslint-disable-next-line no-unused-vars\nfunction f() {}\n", None),
        ("javascript", "/** Adds. */\n// eslint-disable-next-line\nfunction f() {}\n", "Adds.\neslint-disable-next-line"),
    ],
)
def test_code_parser_comment_docstring(
    parser: CodeParser, language: str, source: str, comment: str | None
) -> None:
    assert parse(parser, language, source).nodes[-1].docstring == comment


ENDPOINT_CASES = [
    ("python", '@app.get("/users/{id}")\ndef get_user(id):\n    pass\n', ["GET /users/{id}"]),
    ("python", '@router.post("/items")\nasync def create():\n    pass\n', ["POST /items"]),
    (
        "python",
        '@bp.route("/login", methods=["GET", "POST"])\ndef login():\n    pass\n',
        ["GET /login", "POST /login"],
    ),
    ("python", '@app.route("/")\ndef index():\n    pass\n', ["GET /"]),
    ("python", '@get("/health")\nasync def health() -> str:\n    return "ok"\n', ["GET /health"]),
    ("python", 'urlpatterns = [path("users/<int:pk>/", views.detail)]\n', ["ANY /users/<int:pk>/"]),
    ("python", "@functools.cache\ndef plain():\n    pass\n", []),
    (
        "javascript",
        "app.get('/users/:id', getUser);\nrouter.post(\"/users\", create);\n",
        ["GET /users/:id", "POST /users"],
    ),
    ("javascript", "axios.get('/api/users', config);\nmap.get('/x');\n", []),
    (
        "go",
        'func main() {\n\thttp.HandleFunc("/hello", hello)\n\tr.GET("/ping", ping)\n}\n',
        ["ANY /hello", "GET /ping"],
    ),
    (
        "java",
        '@RestController\n@RequestMapping("/api")\nclass C {\n'
        '    @GetMapping("/users/{id}")\n    User get(int id) { return null; }\n'
        '    @RequestMapping(value = "/users", method = RequestMethod.POST)\n    void add() {}\n}\n',
        ["GET /api/users/{id}", "POST /api/users"],
    ),
]


@pytest.mark.parametrize(("language", "source", "expected"), ENDPOINT_CASES)
def test_code_parser_endpoints(parser: CodeParser, language: str, source: str, expected: list[str]) -> None:
    tree = parser.parse("routes", source, language)
    assert [e.detail for e in tree.entities if e.type == "endpoint"] == expected


def test_code_parser_endpoint_points_at_handler(parser: CodeParser) -> None:
    tree = parser.parse("api.py", 'x = 1\n\n@app.get("/a")\ndef handler():\n    return 1\n', "python")
    (endpoint,) = [e for e in tree.entities if e.type == "endpoint"]
    assert (endpoint.name, endpoint.node, endpoint.start_line, endpoint.end_line) == ("/a", 1, 3, 5)
    assert tree.nodes[endpoint.node].name == "handler"


REFS_PYTHON = """
import os.path as osp
from a.b import c, d as e
from .sibling import helper
import json


def run(x):
    c(x)
    e.go()
    helper()
    osp.join("a", "b")
    json.dumps(x).encode()
    self.validate_token(x)
    foo()()
    items[0]()


class Box:
    size = compute()

    def open(self):
        return auth.check(self)


main()
"""


def test_code_parser_python_refs_resolve_imports(parser: CodeParser) -> None:
    tree = parse(parser, "python", REFS_PYTHON, path="pkg/sub/mod.py")
    refs = [(tree.nodes[r.caller].name, r.callee, r.line, r.callee_qualified) for r in tree.refs]
    assert refs == [
        ("run", "c", 8, "a.b.c"),
        ("run", "e.go", 9, "a.b.d.go"),
        ("run", "helper", 10, "pkg.sub.sibling.helper"),
        ("run", "osp.join", 11, "os.path.join"),
        ("run", "json.dumps", 12, "json.dumps"),
        ("run", "self.validate_token", 13, None),
        ("run", "foo", 14, None),
        ("Box", "compute", 19, None),
        ("open", "auth.check", 22, None),
        ("mod.py", "main", 25, None),
    ]


@pytest.mark.parametrize(
    ("language", "source", "expected"),
    [
        (
            "javascript",
            "import { check } from './auth';\nimport * as u from 'util';\nfunction f() { check(1); u.format(); }\n",
            [("check", "./auth.check"), ("u.format", "util.format")],
        ),
        (
            "typescript",
            "import { a as b } from 'lib';\nconst m = require('m');\nb();\nm.go();\n",
            [("require", None), ("b", "lib.a"), ("m.go", "m.go")],
        ),
        ("go", 'package m\nimport f "fmt"\nfunc g() { f.Println(1) }\n', [("f.Println", "fmt.Println")]),
        (
            "java",
            "import a.b.Util;\nclass C { void m() { Util.run(); x.y.z(); } }\n",
            [("Util.run", "a.b.Util.run"), ("x.y.z", None)],
        ),
        (
            "rust",
            "use a::b::{c, d as e};\nfn f() { c::go(); e(); }\n",
            [("c::go", "a::b::c::go"), ("e", "a::b::d")],
        ),
        ("cpp", "void f() { obj->run(); ns::g(); }\n", [("obj.run", None), ("ns::g", None)]),
        ("ruby", "def f\n  Digest.compare(a)\n  check\nend\n", [("Digest.compare", None)]),
    ],
)
def test_code_parser_refs_per_language(
    parser: CodeParser, language: str, source: str, expected: list
) -> None:
    tree = parser.parse("f", source, language)
    assert [(r.callee, r.callee_qualified) for r in tree.refs] == expected


@pytest.mark.parametrize(
    ("module", "path", "expected"),
    [
        ("a.b", "x/y.py", "a.b"),
        (".m", "src/pkg/mod.py", "pkg.m"),
        ("..m", "pkg/sub/mod.py", "pkg.m"),
        (".", "pkg/__init__.py", "pkg"),
        (".m", "mod.py", "m"),
    ],
)
def test_python_module_resolves_relative_imports(module: str, path: str, expected: str) -> None:
    assert python_module(module, path) == expected


def test_code_parser_broken_python_keeps_what_it_can(parser: CodeParser) -> None:
    source = (
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self):\n        go()\n"
    )
    tree = parser.parse("b.py", source, "python")
    names = [n.qualified_name for n in tree.nodes[1:]]
    assert "b.py::ok" in names and "b.py::Fine" in names and "b.py::Fine.m" in names
    (ref,) = tree.refs
    assert (tree.nodes[ref.caller].name, ref.callee, ref.line) == ("m", "go", 9)


@pytest.mark.parametrize("source", ["", "\n\n", "x = 1"])
def test_code_parser_trivial_files(parser: CodeParser, source: str) -> None:
    tree = parser.parse("t.py", source, "python")
    assert len(tree.nodes) == 1 and tree.nodes[0].end_line >= 1


@pytest.mark.parametrize(
    ("language", "supported"),
    [("python", True), ("tsx", True), ("kotlin", True), ("ruby", True), ("markdown", False), ("text", False)],
)
def test_code_parser_supports(parser: CodeParser, language: str, supported: bool) -> None:
    assert parser.supports(language) is supported


def test_code_parser_rejects_unknown_language(parser: CodeParser) -> None:
    with pytest.raises(ValueError, match="markdown"):
        parser.parse("a.md", "# x\n", "markdown")


def test_code_parser_reuses_grammar_per_language(parser: CodeParser) -> None:
    parser.parse("a.py", "x = 1\n", "python")
    first = parser._cache["python"]
    parser.parse("b.py", "y = 2\n", "python")
    assert parser._cache["python"] is first


GOLDEN = Path(__file__).parent.parent / "golden" / "code"
GOLDEN_INPUTS = sorted(p.name for p in GOLDEN.iterdir() if p.suffix != ".json")


@pytest.mark.parametrize("name", GOLDEN_INPUTS)
def test_code_parser_matches_golden_file(parser: CodeParser, name: str) -> None:
    """Whole parser output against a reviewed golden file; SIFT_UPDATE_GOLDEN=1 rewrites them."""
    language, _ = classify(name)
    tree = parser.parse(f"src/{name}", (GOLDEN / name).read_text(encoding="utf-8"), language)
    actual = json.loads(json.dumps(dataclasses.asdict(tree)))
    expected_path = GOLDEN / f"{name}.json"
    if os.environ.get("SIFT_UPDATE_GOLDEN") == "1":
        expected_path.write_text(json.dumps(actual, indent=1) + "\n", encoding="utf-8")
    assert actual == json.loads(expected_path.read_text(encoding="utf-8"))
