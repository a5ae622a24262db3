"""Docstrings in plain words: field lists (reST, Google, NumPy, JSDoc) as sentences, summaries said of a name."""

from __future__ import annotations

import pytest

from sift.graph.writer.docstrings import (
    Field,
    field_rest,
    field_sentence,
    is_data,
    predicate,
    split_fields,
    third_person,
)


@pytest.mark.parametrize(("summary", "expected"), [
    ("Return the tuple of attributes.", "returns the tuple of attributes"),
    ("Stores bucket state in a dict.", None),  # "store" opens too few train summaries: quoted, not conjugated
    ("Wraps bucket state in a dict.", "wraps bucket state in a dict"),
    ("Match the name.", "matches the name"),  # the third person as the data file spells it
    ("Apply the change.", "applies the change"),
    ("Do the work.", "does the work"),
    ("Raised when it fails.", "is raised when it fails"),
    ("Stopped early.", "is stopped early"),  # a doubled consonant before "-ed"
    ("True if it is set.", None),  # no third person "Trues": not a verb
    ("Given a name, find it.", None),
    ("Base class for stores.", None),
    ("RETURN the value.", None),  # not an ordinary capitalised word
    ("Applies the change", "applies the change"),
    ("Called by acquire when no token is left.", "is called by acquire when no token is left"),
    ("A quick way to create a class.", "is a quick way to create a class"),
    ("The choice type checks a value.", None),  # a sentence with its own verb
    ('A token is "option-like" if it begins with a dash.', None),  # ... and with "is" for its verb
    ("An empty list can be passed.", None),
    ("A frozen/immutable instance or attribute have been attempted to be modified.", None),  # a long subject
    ("A simple class to store and query basic error information.",
     "is a simple class to store and query basic error information"),
    ("A validator that raises an error.", "is a validator that raises an error"),  # the relative clause's verb
    ("The position where the number should begin.", "is the position where the number should begin"),
    ("Helper method that raises.", None),  # a noun opens it: quoted, not conjugated
    ("List of things.", None),  # "List of": a noun, not the verb
    ("", None),
])
def test_predicate(summary: str, expected: str | None) -> None:
    assert predicate(summary) == expected


REST = "Take one token.\n\n:param key: The bucket to use.\n:type key: str\n:returns: True when allowed.\n:rtype: bool\n"
GOOGLE = ("Allow calls.\n\nArgs:\n    rate: Tokens added per\n        second.\n    burst (int): The most tokens.\n\n"
          "Returns:\n    bool: True when allowed.\n\nRaises:\n    ValueError: If rate is negative.\n")
NUMPY = "Sum.\n\nParameters\n----------\nx : int\n    The first number.\n\nReturns\n-------\nint\n    The sum.\n"
# A NumPy section runs to the next heading of any name: "Notes" and its list are prose, not exceptions raised.
NUMPY_NOTES = ("Add a sink.\n\nRaises\n------\nValueError\n    If an argument is invalid.\n\nNotes\n-----\n"
               "A sink can take many forms:\n\n- A file-like object like ``sys.stderr``.\n- A callable.\n")
RST_TABLE = ("Run in a thread.\n\nExtra options:\n\n========== ==============================\n"
             "``daemon`` Set the ``daemon`` option\n           (defaults to ``True``).\n"
             "``name``   The thread's name.\n========== ==============================\n")
RST_HEADED = ("Modes.\n\n=====  ==========\nMode   Meaning\n=====  ==========\nr+     read and write\n"
              "w      write\n=====  ==========\n\nAfter.\n")
JSDOC = ("Format a wait time.\n\n@param {number} seconds - The wait time.\n@param {boolean} [short=false] - Use the "
         "short form.\n@returns {string} The wait time as text.")


@pytest.mark.parametrize(("doc", "prose", "fields"), [
    (REST, "Take one token.", [Field("param", "key", "The bucket to use."), Field("returns", "", "True when allowed.")]),
    (GOOGLE, "Allow calls.", [Field("param", "rate", "Tokens added per second."),
                              Field("param", "burst", "The most tokens."), Field("returns", "", "True when allowed."),
                              Field("raises", "ValueError", "If rate is negative.")]),
    (NUMPY, "Sum.", [Field("param", "x", "The first number."), Field("returns", "", "The sum.")]),
    (NUMPY_NOTES, "Add a sink.\n\n\nNotes\n-----\nA sink can take many forms:\n\n- A file-like object like ``sys.stderr``.\n"
     "- A callable.", [Field("raises", "ValueError", "If an argument is invalid.")]),
    (JSDOC, "Format a wait time.", [Field("param", "seconds", "The wait time."),
                                    Field("param", "short", "Use the short form."),
                                    Field("returns", "", "The wait time as text.")]),
    ("No fields here.", "No fields here.", []),
    # An reStructuredText simple table of names and descriptions lists options: fields, without the line that
    # introduces it; a wrapped description goes on in the rows below.
    (RST_TABLE, "Run in a thread.", [Field("param", "daemon", "Set the ``daemon`` option (defaults to ``True``)."),
                                    Field("param", "name", "The thread's name.")]),
    # A header row (above the second border) is left out; a table of other rows stays prose, row by row.
    (RST_HEADED, "Modes.\n\n\nr+: read and write\n\n\nw: write\n\n\nAfter.", []),
    ("Broken.\n\n==== ====\nx    y\n", "Broken.", [Field("param", "x", "y")]),  # never closed: ends with the text
    # Text right under the closing border (no blank line) is prose after the table, not rows under a header.
    ("Run it.\n\nOptions:\n\n======  ====\ndaemon  Run as a daemon.\nname    The name.\n======  ====\nMore after.",
     "Run it.\n\nMore after.", [Field("param", "daemon", "Run as a daemon."), Field("param", "name", "The name.")]),
    # A first paragraph that is only the call's signature (for Sphinx) is no prose; a sentence about a call is.
    ("\n    add(func, name=None, \\\n        run=False)\n\n    Adds the job.\n", "Adds the job.", []),
    ("parse(text) -> Tree\n\nParse it.", "Parse it.", []),
    ("parse(text) returns a tree.", "parse(text) returns a tree.", []),
    ("parse(a) -> dict. Parses.", "parse(a) -> dict. Parses.", []),
])
def test_split_fields(doc: str, prose: str, fields: list[Field]) -> None:
    text, found = split_fields(doc)
    assert text.strip() == prose and found == fields


JSDOC_EXAMPLES = ("Format a wait time.\n@param {number} seconds - The wait time.\n@example formatWait(90) //=> '1m 30s'\n"
                  "@example <caption>The short form</caption>\n  formatWait(90, true)\n\n  // '1m'\n"
                  "@returns {string} The wait time as text.")


def test_a_jsdoc_example_is_code_in_the_prose_not_a_field() -> None:
    text, found = split_fields(JSDOC_EXAMPLES)
    assert found == [Field("param", "seconds", "The wait time."), Field("returns", "", "The wait time as text.")]
    assert text.split("\n") == ["Format a wait time.", "", "```", "formatWait(90) //=> '1m 30s'", "```", "", "",
                                 "```", "formatWait(90, true)", "", "// '1m'", "```", ""]
    # An object literal is code, not a {type}; an example fenced as written keeps its own fence.
    text, _ = split_fields("Merge.\n@example {a: 1}\n@example\n```js\nmerge(a, b)\n```")
    assert text.split("\n") == ["Merge.", "", "```", "{a: 1}", "```", "", "", "```js", "merge(a, b)", "```", ""]


@pytest.mark.parametrize(("field", "expected"), [
    (Field("param", "key", "The bucket to use."), "`key` is the bucket to use."),
    (Field("param", "rate", "Tokens added per second."), "`rate` is tokens added per second."),
    (Field("param", "short", "Use the short form."), "Set `short` to use the short form."),
    (Field("param", "mode", "Selects the mode."), "`mode` selects the mode."),
    (Field("param", "on", "Controls whether it runs."), "`on` controls whether it runs."),  # off the list
    (Field("param", "n", "Tracks the count."), "`n` tracks the count."),
    (Field("param", "n", "Always the same."), "`n` is always the same."),  # "-ys": an adverb, not a verb
    (Field("param", "n", "Options for the run."), "`n` is options for the run."),  # no object word: a noun
    (Field("param", "delay", "Spread the delay."), "Set `delay` to spread the delay."),  # off the list
    (Field("param", "path", "Access the file."), "Set `path` to access the file."),
    (Field("param", "n", "For the first run."), "`n` is for the first run."),  # a preposition, not a verb
    (Field("param", "n", "Only the first run."), "`n` is only the first run."),
    (Field("param", "n", "Default value."), "`n` is default value."),  # no object word follows
    (Field("param", "n", "Thus the value."), "`n` is thus the value."),
    (Field("param", "eq", "If True, compare it."), "For `eq`, if True, compare it."),
    (Field("param", "daemon", "Set the daemon option."), "For `daemon`, set the daemon option."),  # not "to set"
    (Field("param", "mode", "the default behavior is to run."), "For `mode`, the default behavior is to run."),
    (Field("param", "flag", "True turns it on."), "`flag` is True turns it on."),  # a constant keeps its case
    (Field("returns", "", "The delay in seconds."), "It returns the delay in seconds."),
    (Field("returns", "", "True when allowed."), "It returns True when allowed."),
    (Field("yields", "", "Each row."), "It yields Each row."),
    (Field("raises", "ValueError", "If rate is negative."), "It raises `ValueError` if rate is negative."),
    (Field("raises", "KeyError", "Unknown key."), "It raises `KeyError`: Unknown key."),
    (Field("param", "", "No name."), ""),
    (Field("returns", "", ""), ""),
])
def test_field_sentence(field: Field, expected: str) -> None:
    assert field_sentence(field) == expected


@pytest.mark.parametrize(("verb", "third"), [
    ("return", "returns"), ("match", "matches"), ("push", "pushes"), ("fix", "fixes"), ("pass", "passes"),
    ("go", "goes"), ("apply", "applies"), ("play", "plays"), ("cache", "caches"), ("buzz", "buzzes"),
])
def test_third_person(verb: str, third: str) -> None:
    assert third_person(verb) == third


@pytest.mark.parametrize(("docstring", "data"), [
    ("{'type': 'boolean'}", True),  # a rule's schema kept in its docstring
    ("{'type': ['string', 'list'],\n 'nullable': True}", True),  # over several lines
    ("['a', 'b']", True),
    ("(1, 2)", True),
    ("(deprecated) Load a config.", False),  # prose in brackets first
    ("{name} is formatted with the record.", False),  # a placeholder, then prose
    ("Load a config.", False),
    ("[" * 1000 + "]" * 1000, False),  # too deeply nested to be parsed: no crash, and not read as data
    ("{" + ", ".join(f"'k{i}': {i}" for i in range(1000)) + "}", False),  # longer than MAX_DATA_CHARS: not parsed
    ("1", False),  # a bare number is no container
])
def test_is_data(docstring: str, data: bool) -> None:
    assert is_data(docstring) is data


@pytest.mark.parametrize(("field", "sentence", "expected"), [
    (Field("param", "align", ""), "Possible values are: None, \"left\".", "For `align`, possible values are: None, \"left\"."),
    (Field("param", "align", ""), "None keeps the column's own.", "For `align`, None keeps the column's own."),
    (Field("param", "mode", ""), "JSON output is the default.", "For `mode`, JSON output is the default."),
    (Field("returns", "", ""), "Possible keys are a and b.", "Possible keys are a and b."),  # no name to say
])
def test_field_rest(field: Field, sentence: str, expected: str) -> None:
    assert field_rest(field, sentence) == expected
