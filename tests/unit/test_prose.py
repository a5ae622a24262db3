"""The answer's text: sentences run on, code blocks on lines of their own, the definitions a doc answer names."""

from __future__ import annotations

import pytest

from sift.graph.models import Evidence, Plan
from sift.graph.writer.composition import answer_sentences, cite, cited_once, compose, named_definitions
from sift.graph.writer.doc_units import CODE
from sift.graph.writer.extractive import chit_chat

BLOCK = f"{CODE}python\nx = 1\n{CODE}"


@pytest.mark.parametrize(("pieces", "expected"), [
    (["One [1].", "Two [1]."], "One. Two [1]."),
    (["It says [1]:", BLOCK, "Then more [1]."], f"It says [1]:\n{BLOCK}\nThen more [1]."),
    (["It says [1]:", "Then more [1]."], "It says: Then more [1]."),
    (["It ends like this [1]:", "The section goes on [4]:", BLOCK], f"It ends like this [1]. The section goes on [4]:\n{BLOCK}"),
    ([BLOCK], BLOCK),  # a block alone, no blank line around it
    (["A [1].", BLOCK, BLOCK], f"A [1].\n{BLOCK}\n{BLOCK}"),
    ([], ""),
    (["It says [1]:", "- one [1].", "2. two [1].", "Then more [1]."], "It says [1]:\n- one.\n2. two.\nThen more [1]."),
])
def test_compose(pieces: list[str], expected: str) -> None:
    assert compose(pieces) == expected


def ev(n: int, path: str, symbol: str, kind: str = "function", start: int = 1, text: str = "pass",
       docstring: str | None = None) -> Evidence:
    return Evidence(id=n, path=path, start_line=start, end_line=start + 1, kind=kind, name=symbol, symbol=symbol,
                    score=1.0, text=text, docstring=docstring)


DOC = ev(1, "docs/config.md", "Config > Loading", kind="doc", text="Call `load_config` to read it.")
LOAD = ev(2, "pkg/config.py", "load_config", start=40)
LOAD_PART = ev(3, "pkg/config.py", "load_config", start=60)
STUB = ev(4, "pkg/config.pyi", "load_config")
TEST = ev(5, "tests/test_config.py", "load_config")
LOADER = ev(6, "pkg/loader.py", "Loader.load_config", kind="method")


@pytest.mark.parametrize(("text", "chosen", "evidence", "expected"), [
    ("Call `load_config` to read it.", [DOC], [DOC, LOAD_PART, LOAD], [LOAD]),  # its first retrieved part
    ("Call pkg.load_config() to read it.", [DOC], [DOC, LOAD], [LOAD]),  # dotted, called
    ("Call `load_config` to read it.", [DOC], [DOC, STUB, TEST], []),  # stubs and tests define nothing
    ("Call `load_config` to read it.", [DOC, LOAD], [DOC, LOAD], []),  # already cited
    ("Call `load_config` to read it.", [DOC], [DOC, LOADER, LOAD], [LOADER]),  # the first retrieved definition
    ("Call `get` to read it.", [DOC], [DOC, ev(7, "pkg/a.py", "get")], []),  # names of 3 letters or fewer skip
    (f"{CODE}python\nload_config()\n{CODE}", [DOC], [DOC, LOAD], [LOAD]),  # names inside a code block count
    ("Nothing named here.", [DOC], [DOC, LOAD], []),
])
def test_named_definitions(text: str, chosen: list[Evidence], evidence: list[Evidence],
                           expected: list[Evidence]) -> None:
    assert named_definitions(text, chosen, evidence) == expected


def test_answer_sentences_of_a_doc_section_link_the_definition_it_names() -> None:
    plan = Plan(standalone="How do I read the config?")
    sentences, cited = answer_sentences(plan, [DOC], [DOC, LOAD], ["read", "config"])
    assert sentences == ['The section "Loading" of docs/config.md (lines 1-2) says: Call load_config to read it [1].',
                         "The code does it in load_config (pkg/config.py, lines 40-41) [2]."]  # not in its text: unquoted
    assert cited == [DOC, LOAD]


def test_answer_sentences_of_a_definition() -> None:
    code = ev(2, "pkg/config.py", "load_config", start=40,
              text='def load_config(path):\n    """Read the config file."""\n    return parse(read(path))',
              docstring="Read the config file.")
    sentences, cited = answer_sentences(Plan(standalone="What does load_config do?"), [code], [code], ["read"])
    assert sentences == ["`load_config` in pkg/config.py (lines 40-41) reads the config file [2].",
                         "```python\ndef load_config(path):\n    ...\n    return parse(read(path))\n```"]
    assert cited == [code]


def test_chit_chat_names_the_kb_and_cites_nothing() -> None:
    draft = chit_chat("hello", "docs")
    assert "knowledge base 'docs'" in draft.text and not draft.citations and not draft.not_found


@pytest.mark.parametrize(("text", "expected"), [
    ("Keeps state.", "Keeps state [1]."),
    ("Keeps state", "Keeps state [1]."),
    ("Is it kept?", "Is it kept [1]?"),
    ("Change the code to this:", "Change the code to this [1]:"),
    ("Ends twice..", "Ends twice [1]."),
    ("attrs.define to define a new class,", "attrs.define to define a new class [1]."),  # one item of a list
    ("the first item;", "the first item [1]."),
])
def test_cite_puts_the_marker_before_the_closing_punctuation(text: str, expected: str) -> None:
    assert cite(text, 1) == expected


FIELDS = ev(2, "pkg/retry.py", "retry_delay", start=10,
            text='def retry_delay(attempt, cap):\n    """Compute the delay.\n\n    :param cap: The longest delay.\n'
                 '    :rtype: float\n    """\n    return min(cap, 2 ** attempt)',
            docstring="Compute the delay.\n\n:param cap: The longest delay.\n:rtype: float")


def test_a_longer_definition_shows_only_the_lines_nearest_the_question() -> None:
    # Twenty body lines do not fit one block (``MAX_CODE_LINES``): the definition is not shown whole.
    body = "".join(f"    step{i} = attempt * {i}\n" for i in range(20)) + "    return min(cap, step4)"
    longer = FIELDS.model_copy(update={"text": FIELDS.text.replace("    return min(cap, 2 ** attempt)", body)})
    text = compose(answer_sentences(Plan(standalone="q"), [longer], [longer], ["delay"])[0])
    assert "step" not in text  # only the name is shared: no body line shows anything more
    text = compose(answer_sentences(Plan(standalone="q"), [longer], [longer], ["cap", "delay"])[0])
    assert "return min(cap, step4)" in text and "step0" not in text


@pytest.mark.parametrize(("tokens", "said", "unsaid"), [
    (["cap", "delay"], ["`cap` is the longest delay [2].", "```python\ndef retry_delay(attempt, cap):\n    ...\n"
                        "    return min(cap, 2 ** attempt)\n```"], [":param", ":rtype", "float"]),
    # A short definition is shown whole, even when the question shares nothing with its body but the name.
    (["delay"], ["`retry_delay` in pkg/retry.py (lines 10-11) computes the delay [2].",
                 "    return min(cap, 2 ** attempt)\n```"], [":param"]),
])
def test_a_definition_says_its_fields_in_words_and_shows_code_fenced(tokens: list[str], said: list[str],
                                                                     unsaid: list[str]) -> None:
    sentences, _ = answer_sentences(Plan(standalone="q"), [FIELDS], [FIELDS], tokens)
    text = compose(sentences)
    assert all(s in text for s in said), text
    assert not any(s in text for s in unsaid), text


def test_docs_and_code_that_agree_are_cited_together() -> None:
    doc = ev(1, "docs/retry.md", "Retry > Delays", kind="doc", text="Use `retry_delay` to compute the wait.")
    sentences, cited = answer_sentences(Plan(standalone="How do I compute the wait?"), [doc], [doc, FIELDS],
                                        ["compute", "wait"])
    assert sentences[-1] == "The code does it in `retry_delay` (pkg/retry.py, lines 10-11), which computes the delay [2]."
    assert cited == [doc, FIELDS]


@pytest.mark.parametrize(("question_type", "shown"), [("list", 8), ("doc", 5)])
def test_a_list_question_gets_a_sections_whole_list(question_type: str, shown: int) -> None:
    items = "".join(f"- `opt{i}` sets tag number {i}\n" for i in range(8))
    section = ev(1, "docs/tags.md", "Guide > Tags", kind="doc", text=f"Tags:\n\n{items}")
    plan = Plan(standalone="which tags are there", question_type=question_type)
    text = compose(answer_sentences(plan, [section], [section], ["tag"])[0])
    assert sum(f"opt{i} sets" in text for i in range(8)) == shown, text


CHECKED = Evidence(id=3, path="lib/check.js", start_line=1, end_line=9, kind="function", name="check", symbol="check",
                   score=1.0, text="function check (value, limit) {\n  const size = value.length\n  const kind = typeof value\n"
                                   "  const seen = new Set()\n  const parts = value.split('.')\n"
                                   "  if (size > limit) {\n    throw new TypeError(`value is longer than ${limit}`)\n"
                                   "  }\n  return parts\n}")


def test_a_code_block_shows_a_line_with_a_template_literal() -> None:
    # A backtick cannot be quoted inline, but inside the fenced block it is safe.
    text = compose(answer_sentences(Plan(standalone="q", question_type="explain"), [CHECKED], [CHECKED],
                                    ["limit", "longer"])[0])
    assert "throw new TypeError(`value is longer than ${limit}`)" in text, text

def test_a_sections_bullet_items_are_the_answers_items_on_lines_of_their_own() -> None:
    text = "Retry settings\n--------------\n\n* retries: how often a failed call is retried.\n" \
           "* backoff: how long to wait between retries.\n"
    doc = Evidence(id=2, path="docs/retry.rst", start_line=1, end_line=5, kind="doc", name="Retry settings",
                   symbol="Retry settings", score=1.0, text=text)
    sentences, _ = answer_sentences(Plan(standalone="q"), [doc], [doc], ["retry", "fail", "wait"])
    assert compose(sentences) == ('The section "Retry settings" of docs/retry.rst (lines 1-5) says [2]:\n'
                                  "- retries: how often a failed call is retried.\n"
                                  "- backoff: how long to wait between retries.")  # the introduction cites them


def test_a_run_of_sentences_quoting_one_source_is_cited_once() -> None:
    pieces = ["The docs say a thing [1].", "They add another [1].", "The code agrees [2].", "- an item [2].",
              "- another [2].", "It is set up [2].", "Like this [2]:", BLOCK]
    assert cited_once(pieces) == ["The docs say a thing.", "They add another [1].", "The code agrees [2].",
                                  "- an item.", "- another.", "It is set up.", "Like this [2]:", BLOCK]
    # an item quoting other evidence than the line before it keeps its marker
    assert cited_once(["It says [1]:", "- one [1].", "- two [2].", "- three [2]."]) == [
        "It says [1]:", "- one.", "- two [2].", "- three."]
    assert compose(["A [1].", "B [1]!", "C [3]."]) == "A. B [1]! C [3]."


def _defn(n: int, name: str, start: int, head: str = "def", path: str = "pkg/numbers.py") -> Evidence:
    return ev(n, path, name, start=start, text=f'{head} {name}(v):\n    """Check {name}."""\n    return v',
              docstring=f"Check {name}.")


@pytest.mark.parametrize(("question_type", "chosen", "opening"), [
    ("list", [_defn(1, "to_int", 10), _defn(2, "to_float", 20)], "pkg/numbers.py defines 2 functions:"),
    ("list", [_defn(1, "Int", 10, "class"), _defn(2, "Float", 20, "class")], "pkg/numbers.py defines 2 classes:"),
    ("list", [_defn(1, "to_int", 10), _defn(2, "Float", 20, "class")], "pkg/numbers.py defines 2 definitions:"),
    ("explain", [_defn(1, "to_int", 10), _defn(2, "to_float", 20)], None),  # not a list question: each in full
    ("list", [_defn(1, "to_int", 10), _defn(2, "to_float", 20, path="pkg/floats.py")], None),  # two files
])
def test_a_list_question_answered_by_siblings_lists_them(question_type: str, chosen: list[Evidence],
                                                          opening: str | None) -> None:
    sentences, cited = answer_sentences(Plan(standalone="Which checks are there?", question_type=question_type),
                                        chosen, chosen, ["check"])
    if opening is None:
        assert not sentences[0].endswith(":")
    else:
        assert sentences[0] == opening
        assert sentences[1:] == [f"- `{e.name}` (lines {e.start_line}-{e.end_line}) checks {e.name} [{e.id}]."
                                 for e in chosen]
    assert cited == chosen


ERRORS = ev(1, "docs/errors.md", "Errors", kind="doc", start=10, text="Every failure raises its own error.") \
    .model_copy(update={"subsections": ["TimeoutError", 'The "quota" error']})


def test_a_section_that_introduces_its_parts_names_them_once_after_its_last_part() -> None:
    sentences, _ = answer_sentences(Plan(standalone="Which errors are there?"), [ERRORS], [ERRORS], ["errors"])
    assert sentences[-1] == "It goes on in the sections \"TimeoutError\" and \"The 'quota' error\" [1]."
    one = ERRORS.model_copy(update={"subsections": ["TimeoutError"]})
    assert answer_sentences(Plan(standalone="q"), [one], [one], ["errors"])[0][-1] == \
        'It goes on in the section "TimeoutError" [1].'
    later = ERRORS.model_copy(update={"id": 2, "start_line": 30, "end_line": 31, "text": "Errors are raised late."})
    sentences, _ = answer_sentences(Plan(standalone="q"), [ERRORS, later], [ERRORS, later], ["errors"])
    assert sum("goes on in the section" in s for s in sentences) == 1 and sentences[-1].endswith("[2].")


def test_a_section_with_many_parts_names_the_first_and_counts_the_rest() -> None:
    many = ERRORS.model_copy(update={"subsections": [f"Error{i}" for i in range(11)]})
    last = answer_sentences(Plan(standalone="q"), [many], [many], ["errors"])[0][-1]
    assert last.startswith('It goes on in the sections "Error0", "Error1"') and '"Error7" and 3 more [1].' in last
    assert "Error8" not in last


def test_a_later_part_of_one_definition_goes_on_with_its_lines_only() -> None:
    head = Evidence(id=1, path="pkg/wrap.py", start_line=10, end_line=12, kind="function", name="wrapClass",
                    symbol="wrapClass", part=1, score=1.0, docstring="Wrap a class for the registry.",
                    text='def wrapClass(cls):\n    """Wrap a class for the registry."""\n    register(cls)')
    later = Evidence(id=2, path="pkg/wrap.py", start_line=13, end_line=14, kind="function", name="wrapClass (part 2)",
                     symbol="wrapClass", part=2, score=0.9, docstring=head.docstring,
                     text="    registry.freeze(cls)\n    return cls")
    bare = later.model_copy(update={"id": 3, "start_line": 15, "end_line": 15, "part": 3, "text": "    # done"})
    sentences, cited = answer_sentences(Plan(standalone="How is the registry frozen?"), [head, later, bare],
                                        [head, later, bare], ["registry", "freeze"])
    # The later part says it goes on and shows its lines, not the docstring again; a part with nothing to show
    # says nothing.
    assert sentences[0] == "`wrapClass` in pkg/wrap.py (lines 10-12) wraps a class for the registry [1]."
    assert sentences[-2:] == ["wrapClass goes on (lines 13-14) [2].",
                              "```python\nregistry.freeze(cls)\nreturn cls\n```"]
    assert cited == [head, later]
    # Cited alone, the later part is described in full, its name (unquoted: its text does not spell it) in its case.
    alone, _ = answer_sentences(Plan(standalone="How is the registry frozen?"), [later], [later], ["registry"])
    assert alone[0] == "wrapClass in pkg/wrap.py (lines 13-14) wraps a class for the registry [2]."
