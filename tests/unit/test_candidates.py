"""Rendering an uncertain answer: the uncertain sentence, then the strongest candidate places with why."""

from __future__ import annotations

import pytest

from sift.graph.models import Citation, Draft, Evidence, Plan, cited_ids
from sift.graph.writer.abstention import NEAR_IN_MEANING
from sift.graph.writer.uncertain import (
    IN_OTHER_WORDS,
    UNCERTAIN,
    api_name,
    api_names,
    candidate_line,
    found_by,
    gist,
    hedged,
    key_line,
    label,
    pick,
    shared_words,
    with_candidates,
)


def _ev(n: int, path: str, name: str, kind: str = "function", text: str = "", channels: tuple[str, ...] = ("bm25",),
        start: int = 1, symbol: str = "") -> Evidence:
    return Evidence(id=n, path=path, start_line=start, end_line=start + 9, kind=kind, name=name,
                    symbol=symbol or name, score=1.0, channels=list(channels), text=text)


SESSION = _ev(1, "net/session.py", "Session.send", kind="method", symbol="Session.send",
              text="def send(self, request, timeout=None):\n    return self.adapter.send(request, timeout)\n",
              channels=("bm25", "vector", "smart"))
DOC = _ev(2, "docs/usage.md", "Timeouts", kind="doc", symbol="Usage > Timeouts",
          text="Every request takes a timeout argument in seconds.\n", channels=("vector",))
FILE = _ev(3, "setup.cfg", "setup.cfg", kind="file", text="[tool]\nx = 1\n", channels=("file",))


@pytest.mark.parametrize(("channels", "expected"), [
    (("bm25", "vector", "smart"), "keywords, meaning and name"),
    (("vector",), "meaning"),
    (("bm25", "bm25"), "keywords"),
    (("docql", "module"), "a structure query and its module's listing"),
    ((), ""),
])
def test_found_by_in_words(channels: tuple[str, ...], expected: str) -> None:
    assert found_by(_ev(1, "a.py", "f", channels=channels)) == expected


@pytest.mark.parametrize(("e", "expected"), [
    (SESSION, "Session's `send`"),  # the short name, backticked (the cited text spells it), with its class
    (_ev(6, "a.py", "load", text="def load():\n"), "`load`"),
    (_ev(4, "a.py", "helper", text="    return 1\n"), "helper"),  # a later part: not spelled, no backticks
    (DOC, 'the section "Timeouts"'),
    (DOC.model_copy(update={"parent_heading": "2.0.0 {#v2}"}), 'the section "2.0.0 › Timeouts"'),  # a repeated heading
    (_ev(5, "docs/x.md", 'Say "hi"', kind="doc", text="hi\n"), "the section \"Say 'hi'\""),
    (FILE, "setup.cfg"),
    (_ev(7, "pkg/fusion.py", "fusion.py (module code)", kind="module", symbol="fusion.py").model_copy(
        update={"module_code": True}), "module-level code"),  # not split at the extension's dot
])
def test_label(e: Evidence, expected: str) -> None:
    assert label(e) == expected


def test_shared_words_rarest_first_as_asked() -> None:
    tokens = ["set", "timeout", "request", "session"]
    idf = {"timeout": 5.0, "session": 3.0, "request": 1.0}
    words = shared_words("How do I set a Timeout for a session request?", SESSION, tokens, idf)
    assert words == ["Timeout", "session", "request"]  # "set" is not in the text
    assert shared_words("Timeout timeout TIMEOUT", SESSION, ["timeout"], idf) == ["Timeout"]  # once
    assert shared_words("nothing in common", SESSION, ["nothing", "common"], idf) == []
    assert len(shared_words("timeout session request", SESSION, tokens, idf, limit=2)) == 2


def test_candidate_line_names_place_citation_and_why() -> None:
    longer = SESSION.model_copy(update={"text": "def send(self, request, timeout=None):\n    adapter = self.adapter\n"
                                                "    return adapter.send(request, timeout)\n"})
    line = candidate_line("Where is the timeout passed on?", longer, ["timeout", "pass"], {})
    assert line == ('- Session\'s `send` in net/session.py:1-10 [1]: shares "timeout" with the question; '
                    "found by keywords, meaning and name.")
    # Code without a docstring shows its line nearest the question (sharing two of its terms), with its number.
    line = candidate_line("Where is the timeout given to the adapter?", longer, ["timeout", "adapter"], {})
    assert line == ('- Session\'s `send` in net/session.py:1-10 [1]: `return adapter.send(request, timeout)` '
                    '(line 3). Shares "timeout", "adapter" with the question; found by keywords, meaning and name.')
    # No body line shares a question word besides the definition's own name: nothing to show but why.
    named = candidate_line("Where is send?", longer, ["send"], {})
    assert named == ('- Session\'s `send` in net/session.py:1-10 [1]: shares "send" with the question; '
                     "found by keywords, meaning and name.")
    # A body of one line is the whole behaviour: it is shown whatever it shares.
    line = candidate_line("Where is the timeout passed on?", SESSION, ["timeout", "pass"], {})
    assert line == ('- Session\'s `send` in net/session.py:1-10 [1]: `return self.adapter.send(request, timeout)` '
                    '(line 2). Shares "timeout" with the question; found by keywords, meaning and name.')
    bare = candidate_line("unrelated", FILE, ["unrelated"], {})
    assert bare == "- setup.cfg:1-10 [3]: found by a file read."  # a whole file is named once, by its path


@pytest.mark.parametrize(("text", "tokens", "expected"), [
    # The lines sharing the most question terms first; what the question says is not repeated.
    ("Set `data_key` to rename a key.\nUse `fields.Email` for addresses.\nSee https://x.org/a_b.html or a@b.io.",
     ["key", "rename", "address"], ["data_key", "fields.Email"]),
    ("Pass `timeout` as seconds.\nSet `retry_count` to retry after a `session.timeout`.", ["timeout", "retry"],
     ["retry_count"]),  # timeout is the question's word, as the last part of a dotted name too
    ("if (!validateStatus(status)) { reject(new AxiosError(msg)); }\nreturn True", ["status", "reject"],
     ["validateStatus", "AxiosError"]),  # called and camelCase names; a literal is no name
    ("x = compute_total(a)\ny = 2", ["nothing"], []),  # no line shares a question term
    ("`a` `b_c` `d_e` `f_g` on one line", ["line"], ["b_c", "d_e", "f_g"]),  # at most three, in reading order
    ("Pass a key (e.g. `cache_key`), i.e. any string, to the cache.", ["cache"], ["cache_key"]),  # no "e.g"
])
def test_api_names(text: str, tokens: list[str], expected: list[str]) -> None:
    assert api_names(_ev(1, "docs/a.md", "A", kind="doc", text=text), tokens) == expected


@pytest.mark.parametrize(("name", "expected"), [
    ("data_key", True), ("JSON.stringify", True), ("d.years", True), ("abc", True),
    ("e.g", False), ("i.e", False), ("E.G", False), ("x.y.z", False),  # dotted letters: an abbreviation
    ("ab", False), ("None", False), ("undefined", False), ("self.fields", False), ("this.options", False),
])
def test_api_name(name: str, expected: bool) -> None:
    assert api_name(name) is expected


def test_api_names_leave_out_the_items_own_name() -> None:
    e = _ev(1, "m.py", "Schema.load", kind="method", symbol="Schema.load",
            text="def load(self, data):\n    return self.parent.load(self.fields, data)")
    assert api_names(e, ["data"]) == []  # the call of its own name says nothing new; self.fields is itself
    documented = e.model_copy(update={"text": 'def load(self, data):\n    """Put `data` in a `Model` of the record."""'})
    assert api_names(documented, ["record"]) == ["Model"]  # a plain word in code is a parameter
    section = _ev(2, "docs/a.md", "A", kind="doc", text="Put `data` in a `Model` of the record.")
    assert api_names(section, ["record"]) == ["data", "Model"]  # in the docs it may be an option's name


@pytest.mark.parametrize(("text", "expected"), [
    ("function isDone(task) {\n  return !!(task && task.finished);\n}", (2, "return !!(task && task.finished);")),
    ('def f(x):\n    """Doc."""\n    return x + 1\n', (3, "return x + 1")),  # the docstring is no body line
    ("def f(\n    x,\n    y,\n):\n    return x + y\n", (5, "return x + y")),  # a header over several lines
    ("def f(x):\n    # add one\n    y = x\n    return y + 1\n", None),  # two lines, neither shares two terms
    ("function f() {\n}\n", None),  # nothing but braces
])
def test_key_line_of_a_body(text: str, expected: tuple[int, str] | None) -> None:
    assert key_line(_ev(1, "m.py" if text.startswith("def") else "m.js", "f", text=text), ["cancel"]) == expected


LONG = "Send the request " + "and wait for it " * 20 + "to finish."


@pytest.mark.parametrize(("e", "expected"), [
    (SESSION.model_copy(update={"docstring": "Send a prepared request.\n\n:param timeout: seconds."}),
     "Send a prepared request."),  # a docstring's summary, its field list left out
    (SESSION, ""),  # code without a docstring says nothing of itself
    (DOC, "Every request takes a timeout argument in seconds."),  # a section's sentence nearest the question
    (SESSION.model_copy(update={"docstring": LONG}), LONG[:159].rsplit(" ", 1)[0] + "…"),  # one line at most
    (DOC.model_copy(update={"text": "Options\n\n- *timeout*: seconds to wait for the reply.\n"}),
     "*timeout*: seconds to wait for the reply."),  # a list item without its bullet
    (DOC.model_copy(update={"text": "Options\n\nSet a timeout like this:\n\n```python\nget(timeout=2)\n```\n"}),
     "Set a timeout like this…"),  # what it introduces is not shown
])
def test_gist_says_what_a_place_holds(e: Evidence, expected: str) -> None:
    assert gist(e, ["timeout"]) == expected


def test_candidate_line_says_what_a_place_holds_before_why() -> None:
    documented = SESSION.model_copy(update={"docstring": "Send a prepared request"})
    line = candidate_line("Where is the timeout passed on?", documented, ["timeout", "pass"], {})
    assert line == ('- Session\'s `send` in net/session.py:1-10 [1]: "Send a prepared request." Shares "timeout" '
                    "with the question; found by keywords, meaning and name.")
    assert candidate_line("Where is the timeout passed on?", documented, ["timeout"], {}, what=False) == (
        '- Session\'s `send` in net/session.py:1-10 [1]: shares "timeout" with the question; '
        "found by keywords, meaning and name.")


def test_pick_keeps_the_cited_first_and_distinct_places() -> None:
    part2 = SESSION.model_copy(update={"id": 7, "start_line": 11, "end_line": 20})
    ranked = [(3.0, DOC), (2.5, part2), (2.0, FILE), (1.0, SESSION)]
    assert [e.id for e in pick(SESSION, ranked)] == [1, 2, 3]  # part2 is the same place as SESSION
    assert [e.id for e in pick(None, ranked, limit=2)] == [2, 7]
    assert pick(None, []) == []
    assert [e.id for e in pick(SESSION, [])] == [1]


def test_hedged_once() -> None:
    assert hedged("X [1].") == f"{UNCERTAIN} X [1]."
    assert hedged(hedged("X [1].")) == hedged("X [1].")


def test_with_candidates_cites_every_candidate() -> None:
    plan = Plan(standalone="Where is the request timeout passed to the session?")
    draft = Draft(text="`send` is defined in net/session.py [1].",
                  citations=[Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    assert out.text.startswith(UNCERTAIN + " The strongest candidates:\n- ")
    lines = [ln for ln in out.text.splitlines() if ln.startswith("- ")]
    assert 2 <= len(lines) <= 3 and lines[0].startswith("- Session's `send` in net/session.py:1-10 [1]")
    assert "\n\nThe first in more detail: " + draft.text in out.text
    assert {c.evidence_id for c in out.citations} == set(cited_ids(out.text))


def test_an_extractive_answer_shows_each_other_candidate_in_more_detail() -> None:
    plan = Plan(standalone="Where is the request timeout passed to the session?")
    draft = Draft(text="`send` is defined in net/session.py [1].",
                  citations=[Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    first, _, rest = out.text.partition("The first in more detail: ")
    assert rest.startswith(draft.text + "\n\nThe second in more detail: ")
    second = rest.split("The second in more detail: ", 1)[1]
    assert "Every request takes a timeout argument in seconds [2]" in second  # what the doc says, cited
    # The file holds no line near the question: its candidate line is all there is to say, no third paragraph.
    assert "The third in more detail" not in out.text and "- setup.cfg:1-10 [3]" in first
    assert {c.evidence_id for c in out.citations} == {1, 2, 3} == set(cited_ids(out.text))


def test_a_candidate_the_answer_only_names_is_shown_in_more_detail() -> None:
    plan = Plan(standalone="Where is the request timeout passed to the session?")
    draft = Draft(text="The docs say every request takes a timeout [2]. The code does it in `send` [1].",
                  citations=[Citation(evidence_id=2, path=DOC.path, start_line=1, end_line=10),
                             Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    detail = out.text.split("The second in more detail: ", 1)[1]
    assert detail.startswith("Session's `send` (method) is defined in net/session.py") and "return self.adapter.send" in detail


def test_a_detail_does_not_point_to_another_candidate() -> None:
    plan = Plan(standalone="Where is the request timeout passed to the session?")
    doc = DOC.model_copy(update={"text": "Every request takes a timeout argument, which Session.send passes on.\n"})
    draft = Draft(text="`send` is defined in net/session.py [1].",
                  citations=[Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, doc, FILE], {})
    second = out.text.split("The second in more detail: ", 1)[1]
    # The docs name `send`, the first candidate, whose own paragraph says where it is: no "The code does it in".
    assert "which Session.send passes on [2]" in second and "The code does it in" not in second


def test_a_model_written_answer_gets_no_extractive_details() -> None:
    plan = Plan(standalone="Where is the request timeout passed to the session?")
    draft = Draft(text="The session passes it on in `send` [1].", mode="llm",
                  citations=[Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    assert out.text.endswith("The first in more detail: " + draft.text)
    assert {c.evidence_id for c in out.citations} == set(cited_ids(out.text))


def test_an_answer_near_in_meaning_says_why_it_is_uncertain() -> None:
    plan = Plan(standalone="Where does the call give up waiting?")
    draft = Draft(text="`send` is defined in net/session.py [1].", note=NEAR_IN_MEANING,
                  citations=[Citation(evidence_id=1, path=SESSION.path, start_line=1, end_line=10)])
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    assert out.text.startswith(IN_OTHER_WORDS + " The strongest candidates:\n- ") and UNCERTAIN not in out.text
    assert hedged(out.text) == out.text  # the final answer does not open twice
    assert with_candidates(draft, plan, [], {}).text == f"{IN_OTHER_WORDS} {draft.text}"


def test_with_candidates_without_evidence_only_says_uncertain() -> None:
    draft = Draft(text="Something [1].")
    assert with_candidates(draft, Plan(standalone="q"), [], {}).text == f"{UNCERTAIN} Something [1]."


def test_with_candidates_leaves_a_list_answer_its_items() -> None:
    plan = Plan(standalone="Which session helpers are there?", question_type="list")
    draft = Draft(text="net/session.py defines these definitions: `send` [1], `Timeouts` [2].")
    out = with_candidates(draft, plan, [SESSION, DOC, FILE], {})
    assert out.text == f"{UNCERTAIN} {draft.text}" and out.citations == draft.citations
    one = Draft(text="`send` is defined in net/session.py [1].")
    assert "The strongest candidates:" in with_candidates(one, plan, [SESSION, DOC, FILE], {}).text
    # One place, cited in the text and in the citations alike, is one place: the candidates still follow.
    cited_once = one.model_copy(update={"citations": [Citation(evidence_id=1, path=SESSION.path, start_line=1,
                                                                end_line=10)]})
    assert "The strongest candidates:" in with_candidates(cited_once, plan, [SESSION, DOC, FILE], {}).text


@pytest.mark.parametrize(("path", "shown"), [
    ("docs/two\nlines.md", "docs/two\\nlines.md"),  # a newline in a name would forge a line of output
    ("pkg/evil\x1b]0;t\x07.py", "pkg/evil\\x1b]0;t\\x07.py"),
    ("docs/gnp.\u202etxt.md", "docs/gnp.\\u202etxt.md"),
])
def test_a_hostile_path_is_written_out_in_a_candidate_line(path, shown):
    line = candidate_line("unrelated", _ev(4, path, path, kind="file", channels=("file",)), ["unrelated"], {})
    assert line == f"- {shown}:1-10 [4]: found by a file read."
