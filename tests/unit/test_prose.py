"""The answer's text: sentences run on, code blocks on lines of their own, the definitions a doc answer names."""

from __future__ import annotations

import pytest

from sift.graph.excerpts import CODE
from sift.graph.extractive import chit_chat
from sift.graph.prose import answer_sentences, compose, named_definitions
from sift.graph.state import Evidence, Plan

BLOCK = f"{CODE}python\nx = 1\n{CODE}"


@pytest.mark.parametrize(("pieces", "expected"), [
    (["One [1].", "Two [1]."], "One [1]. Two [1]."),
    (["It says [1]:", BLOCK, "Then more [1]."], f"It says [1]:\n{BLOCK}\nThen more [1]."),
    ([BLOCK], BLOCK),  # a block alone, no blank line around it
    (["A [1].", BLOCK, BLOCK], f"A [1].\n{BLOCK}\n{BLOCK}"),
    ([], ""),
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
    assert sentences == ['The section "Loading" of docs/config.md (lines 1-2) says: Call load_config to read it. [1]',
                         "`load_config` is defined in pkg/config.py at lines 40-41 [2]."]
    assert cited == [DOC, LOAD]


def test_answer_sentences_of_a_definition() -> None:
    code = ev(2, "pkg/config.py", "load_config", start=40,
              text='def load_config(path):\n    """Read the config file."""\n    return parse(read(path))',
              docstring="Read the config file.")
    sentences, cited = answer_sentences(Plan(standalone="What does load_config do?"), [code], [code], ["read"])
    assert sentences == ["`load_config` (function) is defined in pkg/config.py at lines 40-41 [2].",
                         "Its signature is `def load_config(path)` [2].", "Read the config file. [2]",
                         "Relevant lines: line 42: `return parse(read(path))` [2]."]
    assert cited == [code]


def test_chit_chat_names_the_kb_and_cites_nothing() -> None:
    draft = chit_chat("hello", "docs")
    assert "knowledge base 'docs'" in draft.text and not draft.citations and not draft.not_found
