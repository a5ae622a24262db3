"""The columns ``lab/train/ranker_extra.py`` measures as extra ranker features: what a pooled candidate is."""

from __future__ import annotations

import numpy as np
import pytest

from lab.train import pool_columns as pc


@pytest.mark.parametrize(("source", "name", "expected"), [
    ("export function parse(input) {}", "parse", True),
    ("export default class Parser {}", "Parser", True),
    ("export async function load() {}", "load", True),
    ("export const parse = () => 1", "parse", True),
    ("export interface Options { a: string }", "Options", True),
    ("function parse() {}\nexport { parse, format as fmt }", "parse", True),
    ("function parse() {}\nexport default parse", "parse", True),
    ("function sign() {}\nmodule.exports = sign;", "sign", True),
    ("module.exports = { sign, verify }", "verify", True),
    ("exports.decode = function (t) {}", "decode", True),
    ("module.exports.decode = decode", "decode", True),
    ("function parse() {}\nexport { parser }", "parse", False),  # another name that begins alike
    ("function helper() {}\nmodule.exports = main;", "helper", False),
    ("// export function parse() {} is gone\nfunction parse() {}", "parse", True),  # a comment reads as code
    ("const $q = 1\nexport { $q }", "$q", True),
])
def test_exports_reads_each_way_a_module_exports_a_name(source: str, name: str, expected: bool) -> None:
    assert pc.exports(source, name) is expected


def test_js_exported_only_rates_javascript_definitions() -> None:
    spans = [("lib/sign.js", 1, 9, "function"), ("lib/sign.js", 10, 12, "function"), ("README.md", 1, 5, "doc"),
             ("pkg/sign.py", 1, 5, "function"), ("src/types.ts", 1, 4, "class")]
    texts = [("sign", "sign", ""), ("pad", "pad", ""), ("sign", "", ""), ("sign", "sign", ""),
             ("Options", "Options.merge", "")]
    files = {"lib/sign.js": "function sign() {}\nfunction pad() {}\nmodule.exports = sign;",
             "src/types.ts": "export interface Options {}", "README.md": "module.exports = sign",
             "pkg/sign.py": "module.exports = sign"}
    got = pc.js_exported(spans, texts, files.__getitem__)
    # a method is rated by its class's name (the first part of its symbol)
    assert got.tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert pc.js_code(spans).tolist() == [1.0, 1.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize(("kind", "text", "expected"), [
    ("function", 'def f():\n    """Do it."""\n    return 1', 1.0),
    ("function", "/**\n * Sign a token.\n */\nfunction sign() {}", 1.0),
    ("function", "def f():\n    return 1", 0.0),
    ("function", "def f():\n" + "    x = 1\n" * 8 + '    """late"""', 0.0),  # past the head: no docstring
    ("doc", '```python\n"""quoted"""\n```', 0.0),  # a section is no documented definition
])
def test_documented(kind: str, text: str, expected: float) -> None:
    assert pc.documented([("a.py", 1, 9, kind)], [("f", "f", text)]).tolist() == [expected]


def test_path_depth_counts_directories() -> None:
    spans = [("README.md", 1, 2, "doc"), ("src/a.py", 1, 2, "function"), ("src/pkg/core/b.ts", 1, 2, "class")]
    assert pc.path_depth(spans).tolist() == [0.0, 1.0, 3.0]


def test_symbol_files_counts_other_files_defining_the_name() -> None:
    spans = [("locale/de.js", 1, 2, "function"), ("locale/fr.js", 1, 2, "function"),
             ("locale/it.js", 1, 2, "function"), ("src/core.js", 1, 2, "function"), ("README.md", 1, 2, "doc")]
    texts = [("", "ordinal", ""), ("", "ordinal", ""), ("", "de.ordinal", ""), ("", "format", ""),
             ("Usage", "", "")]
    np.testing.assert_allclose(pc.symbol_files(spans, texts), [np.log(3)] * 3 + [0.0, 0.0])


def test_agreement_reads_names_and_calls_among_the_first_candidates() -> None:
    spans = [("README.md", 1, 9, "doc"), ("src/a.py", 1, 9, "function"), ("src/b.py", 1, 9, "function")]
    texts = [("Usage", "", "Call render_page to build it."),
             ("render_page", "render_page", "def render_page():\n    return layout_html()"),
             ("layout_html", "layout_html", "def layout_html():\n    return ''")]
    got = pc.agreement(spans, texts, np.array([0.0, -1.0, -2.0]))
    assert got["doc_names_top_code"].tolist() == [pytest.approx(np.log(2)), 0.0, 0.0]
    assert got["code_named_by_top_doc"].tolist() == [0.0, 1.0, 0.0]
    assert got["calls_top_code"].tolist() == [0.0, pytest.approx(np.log(2)), 0.0]
    assert got["called_by_top_code"].tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize(("ranks", "top", "expected"), [
    ([1, 2, 3, None], 1, [1, 0, 0, 0]),
    ([1, 2, 3, None], 3, [1, 1, 1, 0]),  # not retrieved by the channel: never within its first
    ([4, 100], 3, [0, 0]),
])
def test_channel_first(ranks: list[int | None], top: int, expected: list[float]) -> None:
    rr = np.array([0.0 if r is None else 60 / (60 + r) for r in ranks])  # the ranker's rr_* column, k = 60
    assert pc.channel_first(rr, top).tolist() == expected


@pytest.mark.parametrize(("spans", "order", "expected"), [
    # The first three by order are a.md 1-20, b.py 1-5 and a.md 200-210.
    ([("a.md", 1, 20, "doc"), ("a.md", 25, 40, "doc"), ("a.md", 100, 120, "doc"), ("b.py", 1, 5, "function"),
      ("c.py", 21, 30, "function"), ("a.md", 200, 210, "doc")],
     [5.0, 1.0, 0.5, 4.0, 0.0, 3.0],
     [0, 1, 0, 0, 0, 0]),  # next section within 40 lines; 100-120 is 80 lines on; another file is no neighbour
    ([("a.md", 1, 20, "doc"), ("a.md", 50, 60, "doc"), ("a.md", 61, 70, "doc")], [3.0, 2.0, 1.0],
     [1, 1, 1]),  # first three are neighbours of one another
])
def test_near_top(spans: list[tuple[str, int, int, str]], order: list[float], expected: list[float]) -> None:
    assert pc.near_top(spans, np.array(order)).tolist() == expected


@pytest.mark.parametrize(("values", "expected"), [
    ([0.2, 0.9, 0.5], 0.4),
    ([0.7, 0.7], 0.0),  # a tie at the top: nothing stands clear
    ([0.3], 0.0),
    ([], 0.0),
])
def test_top_margin(values: list[float], expected: float) -> None:
    assert pc.top_margin(np.array(values)) == pytest.approx(expected)


@pytest.mark.parametrize(("kind", "text", "expected"), [
    ("doc", "Install it:\n\n```bash\npip install x\n```", 1.0),
    ("doc", "Use it:\n\n.. code-block:: python\n\n    x()", 1.0),
    ("doc", ">>> parse('1')\n1", 1.0),
    ("doc", "Run it:\n\n$ x --help", 1.0),
    ("doc", "Prose only, with `inline` code.", 0.0),
    ("function", 'def f():\n    """\n>>> f()\n"""', 0.0),  # a definition's doctest: code anyway, not a section
])
def test_shows_example(kind: str, text: str, expected: float) -> None:
    assert pc.shows_example([("a", 1, 2, kind)], [("n", "s", text)]).tolist() == [expected]
