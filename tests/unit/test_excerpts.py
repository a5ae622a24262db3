"""What the writer quotes from one evidence item: first sentences, signatures, key lines, doc sentences, and the
units documentation text divides into."""

from __future__ import annotations

import pytest

from sift.graph.models import Evidence
from sift.graph.writer.code_quotes import (
    assignments_above,
    body_lines,
    code_block,
    definition_start,
    key_lines,
    signature,
    whole_body,
)
from sift.graph.writer.code_reading import statement
from sift.graph.writer.doc_quotes import doc_lines, doc_sentences, first_sentence, heading, quotable, summary
from sift.graph.writer.doc_units import (
    CODE,
    MAX_CODE_LINES,
    fenceable,
    indented_language,
    open_fence,
    prose_line,
)


def ev(text: str, kind: str = "function", start: int = 10, part: int | None = None, name: str = "f") -> Evidence:
    return Evidence(id=1, path="pkg/m.py", start_line=start, end_line=start + len(text.splitlines()) - 1,
                    kind=kind, name=name, part=part, score=1.0, text=text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Load a config. Then validate it.", "Load a config."),
    ("Load a\n    config file.\n\nSecond paragraph.", "Load a config file."),  # one line, first paragraph
    ("Use :func:`load` to read it. More.", "Use load to read it."),  # roles and backticks dropped
    ("e.g. this stays whole", "e.g. this stays whole"),  # no capital after the stop: no sentence end
    ("", ""),
    (None, ""),
])
def test_first_sentence(text: str | None, expected: str) -> None:
    assert first_sentence(text) == expected


@pytest.mark.parametrize(("text", "part", "expected"), [
    ("def load(path):\n    return read(path)", None, "def load(path)"),
    ("@cache\ndef load(\n    path,\n    strict=False,\n):\n    pass", None, "def load( path, strict=False, )"),
    ("class Schema(Base):\n    pass", None, "class Schema(Base)"),
    ("function f(a) {\n  return a;\n}", None, "function f(a)"),  # a brace ends a header too
    # a declaration without a body ends at its semicolon: the first of TypeScript overloads
    ("export function f(a: string): A;\nexport function f(a: any): A {\n  return a;\n}", None,
     "export function f(a: string): A"),
    ("def load(path):\n    return read(path)", 2, ""),  # a later part starts mid-body
    ("def f(x='`'):\n    pass", None, ""),  # a backtick could not be quoted
    ("", None, ""),
])
def test_signature(text: str, part: int | None, expected: str) -> None:
    assert signature(ev(text, part=part)) == expected


def test_key_lines_rank_by_shared_terms_then_keep_file_order() -> None:
    text = ('def save(user, session):\n    """Save a user."""\n    # the user goes first\n'
            "    session.add(user)\n    log(user)\n    session.commit()\n    return user")
    lines = key_lines(ev(text), ["session", "user"], limit=2)
    assert lines == [(13, "session.add(user)"), (14, "log(user)")]  # def, docstring and comment are skipped
    assert key_lines(ev(text), ["nothing"]) == []
    assert key_lines(ev(text), []) == []


def test_key_lines_with_idf_prefer_the_rarer_question_word() -> None:
    text = ("def version(package):\n    if version is None and package is None:\n        return guess()\n"
            "    if not installed(package):\n        fail()")
    assert key_lines(ev(text), ["version", "package", "install"], limit=1) == [(11, "if version is None and package is None:")]
    idf = {"version": 0.5, "package": 1.0, "install": 3.0}
    assert key_lines(ev(text), ["version", "package", "install"], limit=1, idf=idf) == [(13, "if not installed(package):")]


def test_key_lines_skip_lines_that_cannot_be_quoted() -> None:
    text = 'def f(items):\n    first = items[0]  # the head\n    return "`items`"'
    assert key_lines(ev(text), ["item"]) == []  # "[0]" reads as a citation marker, a backtick breaks the quote


def test_doc_sentences_prefer_shared_terms_and_names_of_api_in_reading_order() -> None:
    text = ("Validation\n==========\n\nFields are checked when data is loaded. Errors are collected per field. "
            "Call `validate` to check data without loading it. Nothing else happens here.")
    doc = ev(text, kind="doc", name="Validation")
    assert doc_sentences(doc, ["check", "data"], limit=2) == [
        "Fields are checked when data is loaded.", "Call validate to check data without loading it."]


def test_doc_sentences_keep_the_sections_first_sentence_in_place_of_the_weakest_match() -> None:
    text = ("Sharing a cache\n===============\n\nShort answer: not across machines. Each worker process keeps "
            "its own cache in memory. A worker process can point at a shared store instead.")
    doc = ev(text, kind="doc", name="Sharing a cache")
    assert doc_sentences(doc, ["worker", "process"], limit=2) == [
        "Short answer: not across machines.", "Each worker process keeps its own cache in memory."]
    assert len(doc_sentences(doc, ["worker", "process"], limit=5)) == 3  # room for all: nothing is dropped


def test_doc_sentences_read_auto_numbered_rest_items_as_items() -> None:
    text = ("Why nothing runs\n================\n\nTwo common causes:\n\n#. Running it in a worker without\n"
            "   threads enabled\n#. Letting the main script reach its end\n   before the jobs are due\n")
    out = doc_sentences(ev(text, kind="doc", name="Why nothing runs"), ["script", "end"], limit=2)
    assert out == ["Two common causes:", "Letting the main script reach its end before the jobs are due"]
    assert doc_sentences(ev(text, kind="doc", name="Why nothing runs"), ["script", "end"], limit=1) == out[1:]


def test_doc_sentences_show_a_code_example_as_a_fenced_block() -> None:
    text = "Usage\n-----\n\nCreate a schema like this::\n\n    schema = UserSchema()\n    schema.load(data)\n"
    out = doc_sentences(ev(text, kind="doc", name="Usage"), ["schema"])
    assert out == ["Create a schema like this:", f"{CODE}python\nschema = UserSchema()\nschema.load(data)\n{CODE}"]


@pytest.mark.parametrize(("line", "expected"), [
    ("    context](#escaping-and-output-context) for when the default is not the right", True),  # a link's tail
    ("Use a string with units (days, hours, etc), otherwise milliseconds are used.", True),
    ("See `jwt.verify()` for the options that you may pass in here", True),  # a call in backticks is quoted
    ('print("hello world this is a message to the user")', False),  # a call
    ("result = the sum of all the values in the list", False),  # an assignment
    ("return result + (withoutSuffix || isFuture ? 'minute' : 'minutes');", False),
    ("# a comment that explains what the next line does", False),  # a comment belongs to its code
    (">>> the prompt of a session in the docs here", False),
    ("x = f(a, b)", False), ("short (words)", False),
])
def test_prose_line(line: str, expected: bool) -> None:
    assert prose_line(line) is expected


@pytest.mark.parametrize(("path", "expected"), [
    ("README.md", ""), ("docs/guide.MD", ""), ("docs/a.markdown", ""), ("docs/b.mdx", ""),
    ("docs/usage.rst", "python"), ("README.txt", "python"), ("pkg/m.py", "python"),
])
def test_indented_language(path: str, expected: str) -> None:
    assert indented_language(path) == expected


def test_doc_sentences_of_a_chunk_begun_inside_a_list_item_quote_no_fragment_and_no_code() -> None:
    # The chunk starts on the indented rest of an item that the chunk before began: text, not a code block,
    # and its first words are not quoted as the section's opening sentence.
    text = ("    context](#output-context) for when the default is not the right\n    choice.\n"
            "  - `strict` When true, every template runs in strict mode and has no `with` block.\n"
            "  - `async` When true, templates are rendered by an async function.\n")
    doc = Evidence(id=1, path="README.md", start_line=40, end_line=43, kind="doc", name="Options", score=1.0,
                   text=text)
    out = doc_sentences(doc, ["async", "function"], limit=2)
    assert not any(s.startswith(CODE) for s in out)
    assert out == ["- strict When true, every template runs in strict mode and has no with block.",
                   "- async When true, templates are rendered by an async function."]


def test_doc_sentences_of_markdown_show_an_indented_block_without_a_language() -> None:
    text = "    app = create_app()\n    app.run(port=8000)\n"
    md = Evidence(id=1, path="docs/run.md", start_line=5, end_line=6, kind="doc", name="Run", score=1.0, text=text)
    assert doc_sentences(md, ["app"]) == [f"{CODE}\napp = create_app()\napp.run(port=8000)\n{CODE}"]
    rst = md.model_copy(update={"path": "docs/run.rst"})
    assert doc_sentences(rst, ["app"]) == [f"{CODE}python\napp = create_app()\napp.run(port=8000)\n{CODE}"]


@pytest.mark.parametrize("adornment", ["+", '"', "'", "_", "~", "^", "="])
def test_doc_sentences_leave_out_a_rest_heading_underline(adornment: str) -> None:
    text = f"Loading objects\n{adornment * 15}\n\nDefine a method and decorate it with post_load to get objects.\n"
    doc = ev(text, kind="doc", name="Loading objects")
    assert doc_sentences(doc, ["objects"]) == ["Define a method and decorate it with post_load to get objects."]


def test_doc_sentences_of_a_section_with_no_shared_term_quote_its_first_sentence() -> None:
    doc = ev("Overview of the whole package and its parts. It is small.", kind="doc", name="Overview")
    assert doc_sentences(doc, ["unrelated"]) == ["Overview of the whole package and its parts."]


@pytest.mark.parametrize(("docstring", "tokens", "first", "expected"), [
    ("Load data.\n\nThe path is read once. Errors are raised as ValueError. The cache is kept.",
     ["error", "cache"], "Load data.", ["Errors are raised as ValueError.", "The cache is kept."]),
    ("Load data. It reads the path once.", ["path"], "Load data.", ["It reads the path once."]),
    ("Load data and path.", ["path"], "Load data and path.", []),  # the first sentence is not repeated
    ("Load data.\n\nIt returns values[0] of the path.", ["path"], "Load data.", []),  # "[0]" reads as a citation
    (None, ["path"], "", []),
    ("Load data. The path is read.", [], "Load data.", []),
    # Sphinx's version notes read as Sphinx renders them, not as a stray body line.
    ("Load data.\n\n.. versionadded:: 2.5\n   The *strict* parameter.", ["strict"], "Load data.",
     ["New in version 2.5: The *strict* parameter."]),
    ("Load data.\n\n.. versionchanged:: 3.0\n   Paths may be\n   relative.\n\nThe path is read.", ["path"],
     "Load data.", ["Changed in version 3.0: Paths may be relative.", "The path is read."]),
    ("Load data.\n\n.. deprecated:: 4.1\n\nThe path is read once.", ["path", "deprecate"], "Load data.",
     ["The path is read once."]),  # a bare note says nothing a question asks
    ("Load data.\n\n.. versionchanged:: 3.1 Paths may be relative.", ["path"], "Load data.",
     ["Changed in version 3.1: Paths may be relative."]),  # what changed on the directive's own line
    ("Load data.\n\n.. versionremoved:: 5.0\n   The path argument.", ["path"], "Load data.",
     ["Removed in version 5.0: The path argument."]),
])
def test_doc_lines(docstring: str | None, tokens: list[str], first: str, expected: list[str]) -> None:
    assert doc_lines(docstring, tokens, first) == expected


JSDOC = "/**\n * Format a wait time.\n *\n * @param {number} s - Seconds.\n */\nexport function fmt(s) {\n  return `${s}s`;\n}"


@pytest.mark.parametrize(("text", "lang", "expected"), [
    (JSDOC, "javascript", 5),
    ("/** One line. */\nfunction f() {}", "javascript", 1),
    ("/// Adds one.\n/// Twice.\npub fn add(x: i32) -> i32 {", "rust", 2),
    ("// Reads it.\n\nfunc Read() error {", "go", 2),
    ("# Greets.\ndef greet\nend", "ruby", 1),
    ("#include <x.h>\nint f(void) {", "c", 0),  # a C preprocessor line is code, not a comment
    ("def load(path):\n    return 1", "python", 0),
    ("function f() {}", "javascript", 0),
    ("/** never closed", "javascript", 0),  # nothing after the comment: start where the chunk starts
    ("", "javascript", 0),
])
def test_definition_start_skips_the_leading_doc_comment(text: str, lang: str, expected: int) -> None:
    assert definition_start(text.split("\n"), lang) == expected


def test_code_block_of_documented_js_starts_at_the_definition() -> None:
    e = Evidence(id=1, path="web/fmt.js", start_line=5, end_line=12, kind="function", name="fmt", score=1.0,
                 text=JSDOC, docstring="Format a wait time.\n\n@param {number} s - Seconds.")
    block = code_block(e, [(11, "return `${s}s`;")])
    assert block.startswith(f"{CODE}javascript\nexport function fmt(s) {{")
    assert "Format a wait time" not in block and "@param" not in block
    assert signature(e) == "export function fmt(s)"


@pytest.mark.parametrize(("lines", "off", "expected"), [
    (["raise Error(", "    'not installed'", ")", "x = 1"], 0, [1, 2]),  # the lines that finish it
    (["raise Error(", "    'not installed'", ")", "x = 1"], 1, [0, 2]),  # a line inside: from its opening on
    (["x = f(a)", "y = 2"], 0, []),  # complete on its own line
    (["s = ')'", "t = 1"], 0, []),  # brackets inside strings do not count
    (["s = f('(',", "  b)"], 0, [1]),
    (["call(", "a,", "b,", "c,", "d,", "e)"], 0, []),  # longer than MAX_CONTINUATION: not shown whole
    # a list of values, one or a few a line, is shown whole up to MAX_ITEMS lines, from any of its lines
    (["drop(", *[f"    '{w}'," for w in "abcdefg"], ")"], 0, list(range(1, 9))),
    (["drop(", *[f"    '{w}'," for w in "abcdefg"], ")"], 7, [0, 1, 2, 3, 4, 5, 6, 8]),
    (["__slots__ = (", '    "_time", "days",', *[f'    "{w}",' for w in "abcd"], "    x.y, 3,", ")"], 0,
     list(range(1, 8))),
    (["drop(", *[f"    '{w}'," for w in "abcdefghijklmn"], ")"], 0, []),  # longer than MAX_ITEMS
    # past MAX_CONTINUATION, a line that is not a value (a callback's body) ends it: not shown whole
    (["push(function () {", "  a()", "  b()", "  c()", "  d()", "  e()", "})"], 0, []),
    (["x = [", "1]"], 1, [0]),
])
def test_statement_lines(lines: list[str], off: int, expected: list[int]) -> None:
    assert statement(lines, off) == expected


_JS_BODY = ("function pick(a, b) {\n  if (a) {\n    // the first wins\n    return a;\n  }\n\n  return b;\n}")


@pytest.mark.parametrize(("text", "expected"), [
    # every line from the first quotable one to the last: the closing bracket and the comment too, blank lines not
    (_JS_BODY, ["if (a) {", "// the first wins", "return a;", "}", "return b;"]),
    # a docstring is no body line: the body starts after it
    ('def f(x):\n    """Pick one."""\n    y = x + 1\n    return y', ["y = x + 1", "return y"]),
    ("def f(x):\n    # to do", None),  # no quotable line: nothing to show whole
    # a line the checker would read as a citation ("x[0]") cannot be fenced: the nearest lines are shown instead
    ("def f(x):\n    y = x[0]\n    return y", None),
    ("def f(x):\n" + "".join(f"    y{i} = x\n" for i in range(MAX_CODE_LINES)), None),  # does not fit one block
])
def test_whole_body(text: str, expected: list[str] | None) -> None:
    e = ev(text) if not text.startswith("function") else Evidence(
        id=1, path="web/pick.js", start_line=10, end_line=17, kind="function", name="pick", score=1.0, text=text)
    got = whole_body(e)
    assert (None if got is None else [line for _, line in got]) == expected
    if got is not None:  # file line numbers, and the block shows them with no gap
        assert got[0][0] == 10 + text.splitlines().index(next(ln for ln in text.splitlines() if ln.strip() == got[0][1]))
        assert "..." not in code_block(e, got).splitlines()[2:]


def test_code_block_shows_a_chosen_line_with_its_whole_statement() -> None:
    text = ("def check(mod):\n    if mod.off:\n        raise RuntimeError(\n            'run with --enable-threads'\n"
            "        )\n    return mod")
    block = code_block(ev(text), [(13, "'run with --enable-threads'")])
    assert block.splitlines()[1:-1] == ["def check(mod):", "    if mod.off:", "        raise RuntimeError(",
                                        "            'run with --enable-threads'", "        )"]


SIGN = """function sign(payload, options) {
  const size = keySize(options.key);
  log(size);
  if (!options.allowWeakKeys && size < 2048) {
    throw new Error(`the key must be at least 2048 bits`);
  }
  try {
    return encode(payload);
  } catch (err) {
    return fail(err);
  }
  return done({
    ok: true,
  });
}"""


@pytest.mark.parametrize(("shown", "expected"), [
    # a line is shown under the condition it sits in
    ([15], ["function sign(payload, options) {", "  ...", "  if (!options.allowWeakKeys && size < 2048) {",
            "    throw new Error(`the key must be at least 2048 bits`);"]),
    ([20], ["function sign(payload, options) {", "  ...", "  } catch (err) {", "    return fail(err);"]),
    ([18], ["function sign(payload, options) {", "    ...", "    return encode(payload);"]),  # "try" is no condition
    ([12], ["function sign(payload, options) {", "  const size = keySize(options.key);"]),  # at the top of the body
    ([24], ["function sign(payload, options) {", "  ...", "  return done({", "    ok: true,", "  });"]),
    # and with the assignment of a value it reads, just above it
    ([13], ["function sign(payload, options) {", "  const size = keySize(options.key);", "  log(size);"]),
])
def test_code_block_shows_a_line_with_the_condition_it_sits_in(shown: list[int], expected: list[str]) -> None:
    e = Evidence(id=1, path="lib/sign.js", start_line=11, end_line=25, kind="function", name="sign", score=1.0,
                 text=SIGN)
    assert code_block(e, [(n, "") for n in shown]).splitlines()[1:-1] == expected


@pytest.mark.parametrize(("lines", "off", "expected"), [
    (["x = 1", "y = 2", "z = 3", "f(x, y)"], 3, [1]),  # within two lines; z is not read, x is too far up
    (["msg = 'no'", "raise TypeError(msg)"], 1, [0]),
    (["const n = 2;", "if (a == n) {"], 1, [0]),
    (["a == b", "f(a)"], 1, []),  # a comparison assigns nothing
    (["total = 0", "total = total + 1"], 1, [0]),  # the line's own target is read on its right
    (["if x:", "    y = 1", "f(y)"], 2, []),  # an assignment in a block above is skipped, not read past
    (["    y = 1", "  if x:", "    f(y)"], 2, []),  # the line's block starts at its condition
    (["y: int = 1", "f(y)"], 1, [0]),  # an annotated assignment
])
def test_assignments_above_a_line(lines: list[str], off: int, expected: list[int]) -> None:
    assert assignments_above(lines, off, [off]) == expected


def test_code_block_leaves_a_condition_out_rather_than_a_line_asked_for() -> None:
    # Sixteen lines at most: the lines the question chose come first, the conditions above them only while they fit.
    body = "".join(f"    if flag{i}:\n        call{i}()\n" for i in range(12))
    e = ev("def run(flags):\n" + body, start=1)
    chosen = range(0, 12, 2)
    block = code_block(e, [(2 * i + 3, f"call{i}()") for i in chosen]).splitlines()[1:-1]
    assert [ln.strip() for ln in block if ln.strip().startswith("call")] == [f"call{i}()" for i in chosen]
    assert [ln.strip() for ln in block if ln.strip().startswith("if")] == ["if flag0:", "if flag2:", "if flag4:", "if flag6:"]
    assert len(block) == 16


def test_code_block_without_docstring_keeps_the_comment() -> None:
    # Nothing in the answer states the comment's words then: the block shows them as written.
    e = Evidence(id=1, path="web/fmt.js", start_line=5, end_line=12, kind="function", name="fmt", score=1.0,
                 text=JSDOC)
    assert code_block(e, []).startswith(f"{CODE}javascript\n/**\n * Format a wait time.")


@pytest.mark.parametrize("markup", ["[](#anchor-for-the-next-block)", "[![Build](https://ci.example/b.svg)](https://ci.example)"])
def test_doc_sentences_leave_out_a_line_of_links_that_says_nothing(markup: str) -> None:
    text = f"### Reading\n\n{markup}\n\nThe reader accepts [a file](https://example.org/file) or a stream of bytes.\n"
    out = doc_sentences(ev(text, kind="doc", name="Reading"), ["reader", "file"], limit=3)
    assert out == ["The reader accepts [a file](https://example.org/file) or a stream of bytes."]


@pytest.mark.parametrize(("line", "inline", "fenced"), [
    ("return value.strip()", True, True),
    ("throw new TypeError(`value is longer than ${limit}`)", False, True),  # a template literal
    ('raise ValueError("Bad input. Try again.")', False, True),  # a sentence end inside
    ("return values[0]", False, False),  # reads as a citation marker either way
    ('doc = "```python"', False, False),  # would close the block
])
def test_a_line_quoted_inline_or_shown_in_a_block(line: str, inline: bool, fenced: bool) -> None:
    assert (quotable(line), fenceable(line)) == (inline, fenced)


def test_doc_sentences_bring_the_example_a_chosen_sentence_introduces() -> None:
    text = ("Retries\n-------\n\nThe client retries a failed request like this:\n\n```python\nclient.get(url)\n```\n\n"
            "Other settings live elsewhere.\n")
    out = doc_sentences(ev(text, kind="doc", name="Retries"), ["retry", "fail"], limit=1)
    assert out == ["The client retries a failed request like this:", f"{CODE}python\nclient.get(url)\n{CODE}"]


@pytest.mark.parametrize("comment", [
    "<!--\nTODO: document the reader's options, then link them here.\n-->",
    "<!-- TODO: document the reader's options, then link them here. -->",
])
def test_doc_sentences_never_quote_an_html_comment(comment: str) -> None:
    text = (f"### Reading\n\n{comment}\n\nThe reader accepts a file or a stream of bytes. <!-- the reader's "
            "options --> The reader reads them lazily.\n\n```html\n<!-- kept: part of the example -->\n<p>x</p>\n```\n")
    out = doc_sentences(ev(text, kind="doc", name="Reading"), ["reader", "options", "file"], limit=5)
    assert out[:2] == ["The reader accepts a file or a stream of bytes.", "The reader reads them lazily."]
    assert not any("TODO" in s for s in out)
    assert any("<!-- kept" in s for s in out)  # a comment inside a code example is the example's


@pytest.mark.parametrize(("text", "first"), [
    ("Schedules a job (e.g. ``lambda: 1``). It runs later.", "Schedules a job (e.g. lambda: 1)."),
    ("Reads a value, i.e. The raw bytes. Then more.", "Reads a value, i.e. The raw bytes."),
    ("Compares two versions (cf. `semver`). Returns -1, 0 or 1.", "Compares two versions (cf. semver)."),
    ("Ends here. Then more.", "Ends here."),
    ("Uses the sample module. E.g. a default.", "Uses the sample module."),  # a sentence may start with "E.g."
])
def test_a_sentence_does_not_end_at_e_g_or_i_e(text: str, first: str) -> None:
    assert first_sentence(text) == first


def test_a_chunk_that_starts_inside_a_fenced_block_shows_its_end_as_code() -> None:
    text = "createClient(3, 1000);\n\n// then ask\napi.get('/data', { retry: true });\n```\n\nRetries wait longer each time.\n"
    e = ev(text, kind="doc", name="Retries").model_copy(update={"fence": ""})  # opened bare, above the chunk
    out = doc_sentences(e, ["retry", "wait"], limit=5)
    assert out == [f"{CODE}\ncreateClient(3, 1000);\n\n// then ask\napi.get('/data', {{ retry: true }});\n{CODE}",
                   "Retries wait longer each time."]


def test_doc_lines_show_a_jsdoc_example_that_shares_the_question_terms_as_code() -> None:
    doc = ("Set the given units.\n@param {Object} values - The units to set.\n@example moment.set({ hour: 8 })\n"
           "@example moment.set({ year: 2017 })\n@returns {Moment}")
    assert doc_lines(doc, ["hour"], "Set the given units.") == [f"{CODE}\nmoment.set({{ hour: 8 }})\n{CODE}"]


@pytest.mark.parametrize(("above", "expected"), [
    ("Intro.\n\n```js\nverify(token);\n", "js"),  # the block is still open
    ("Intro.\n\n```js\nverify(token);\n```\n", None),  # closed
    ("```\nplain\n", ""),  # open, without a language
    ("````md\n```js\nx\n```\n", "md"),  # a shorter fence inside a longer one neither opens nor closes
    ("````md\n```js\nx\n```\n````\n", None),
    ("Text only.\n", None),
])
def test_open_fence(above: str, expected: str | None) -> None:
    assert open_fence(above.splitlines()) == expected


def test_a_chunk_inside_a_fenced_block_without_a_fence_of_its_own_is_code() -> None:
    # The middle of a long example that the chunks before and after open and close: no fence line at all.
    text = "// verify issuer\nverify(token, cert, { issuer: 'urn:issuer' }, function(err, decoded) {\n});\n"
    e = ev(text, kind="doc", name="Verify").model_copy(update={"fence": "js"})
    assert doc_sentences(e, ["verify", "issuer"], limit=5) == [f"{CODE}js\n{text.rstrip()}\n{CODE}"]
    assert doc_sentences(ev(text, kind="doc", name="Verify"), ["verify", "issuer"], limit=5) != \
        doc_sentences(e, ["verify", "issuer"], limit=5)  # without the flag it would read as prose
    closed = e.model_copy(update={"text": text + "```\n\nThe issuer must match.\n"})
    assert doc_sentences(closed, ["verify", "issuer"], limit=5)[-1] == "The issuer must match."


def test_rest_auto_numbered_items_and_short_targets_read_as_rendered() -> None:
    text = ("Adding jobs\n-----------\n\nThere are two ways to add jobs:\n\n#. by calling :meth:`~pkg.base.Scheduler.add_job`\n"
            "#. by decorating a function with :meth:`pkg.base.Scheduler.scheduled_job`\n\nYou can add them at any time.\n")
    out = doc_sentences(ev(text, kind="doc", name="Adding jobs"), ["jobs", "add"], limit=5)
    assert out == ["There are two ways to add jobs:", "1. by calling add_job",
                   "2. by decorating a function with pkg.base.Scheduler.scheduled_job", "You can add them at any time."]


def test_an_admonition_opener_is_markup_not_a_sentence() -> None:
    text = ("Extensions\n----------\n\n!!! tip \"Prefer instances\"\n    The preferred method is to pass an extension "
            "instance, which needs no settings.\n")
    out = doc_sentences(ev(text, kind="doc", name="Extensions"), ["extension", "settings"], limit=3)
    assert out == ["The preferred method is to pass an extension instance, which needs no settings."]


@pytest.mark.parametrize(("symbol", "title"), [
    ("Library > Extension Configuration Options { #extension_configs }", "Extension Configuration Options"),
    ("Options {: .wide }", "Options"),
    ("Options", "Options"),
    ("Sets {and} maps", "Sets {and} maps"),  # braces that are no attribute list stay
])
def test_a_heading_reads_without_its_attribute_list(symbol: str, title: str) -> None:
    assert heading(Evidence(id=1, path="d.md", start_line=1, end_line=2, kind="doc", name=symbol, symbol=symbol,
                            score=1.0, text="x")) == title


def test_a_markdown_tables_rows_are_items_not_a_run_on_sentence() -> None:
    text = ("Error codes\n-----------\n\nEach error carries a code.\n\n| Code | Meaning |\n| --- | :--- |\n"
            "| ERR_CANCELED | The request was canceled by the caller. |\n| ETIMEDOUT | The request took too long. |\n")
    out = doc_sentences(ev(text, kind="doc", name="Error codes"), ["error", "code", "request"], limit=5)
    assert out == ["Each error carries a code.", "- ERR_CANCELED: The request was canceled by the caller.",
                   "- ETIMEDOUT: The request took too long."]


def test_a_docstring_that_holds_data_has_no_summary_or_lines() -> None:
    assert summary("{'type': 'boolean'}") == ""
    assert doc_lines("{'type': 'boolean'}", ["type", "boolean"], "") == []
    assert summary("Load a config. Then validate it.") == "Load a config."


DOC = "Make a class.\n\nIf *frozen* is set, assigning raises an error.\nSlotted classes are\npickleable by default."


@pytest.mark.parametrize(("text", "part", "expected"), [
    # A later part that starts inside the docstring: its lines are prose, the code after the closing quotes is code.
    ("    If *frozen* is set, assigning raises an error.\n    Slotted classes are\n    pickleable by default.\n"
     '    """\n    cls = wrap(cls)\n    return cls', 2, ["cls = wrap(cls)", "return cls"]),
    # The same lines in the first part, before its closing quotes, are read as they are (the header opens them).
    ('def define(cls):\n    """Make a class.\n\n    If *frozen* is set, assigning raises an error.\n    """\n'
     "    cls = wrap(cls)", 1, ["cls = wrap(cls)"]),
    # A later part of code only.
    ("    cls = wrap(cls)\n    return cls", 2, ["cls = wrap(cls)", "return cls"]),
])
def test_body_lines_of_a_part_that_starts_inside_the_docstring(text: str, part: int, expected: list[str]) -> None:
    e = ev(text, part=part).model_copy(update={"docstring": DOC})
    assert [line for _, line in body_lines(e)] == expected


def test_a_later_part_that_starts_with_code_a_doctest_also_shows_is_code() -> None:
    e = ev("    cls = wrap(cls)\n    return cls", part=2).model_copy(
        update={"docstring": "Make a class.\n\n>>> cls = wrap(cls)\n"})
    assert [line for _, line in body_lines(e)] == ["cls = wrap(cls)", "return cls"]
