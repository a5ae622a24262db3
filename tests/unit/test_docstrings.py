"""Docstrings in plain words: field lists (reST, Google, NumPy, JSDoc) as sentences, summaries said of a name."""

from __future__ import annotations

import pytest

from sift.graph.docstrings import Field, field_sentence, predicate, split_fields


@pytest.mark.parametrize(("summary", "expected"), [
    ("Return the tuple of attributes.", "returns the tuple of attributes"),
    ("Keeps bucket state in a dict.", "keeps bucket state in a dict"),
    ("Applies the change", "applies the change"),
    ("Called by acquire when no token is left.", "is called by acquire when no token is left"),
    ("A quick way to create a class.", "is a quick way to create a class"),
    ("The choice type checks a value.", None),  # a sentence with its own verb
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
JSDOC = ("Format a wait time.\n\n@param {number} seconds - The wait time.\n@param {boolean} [short=false] - Use the "
         "short form.\n@returns {string} The wait time as text.")


@pytest.mark.parametrize(("doc", "prose", "fields"), [
    (REST, "Take one token.", [Field("param", "key", "The bucket to use."), Field("returns", "", "True when allowed.")]),
    (GOOGLE, "Allow calls.", [Field("param", "rate", "Tokens added per second."),
                              Field("param", "burst", "The most tokens."), Field("returns", "", "True when allowed."),
                              Field("raises", "ValueError", "If rate is negative.")]),
    (NUMPY, "Sum.", [Field("param", "x", "The first number."), Field("returns", "", "The sum.")]),
    (JSDOC, "Format a wait time.", [Field("param", "seconds", "The wait time."),
                                    Field("param", "short", "Use the short form."),
                                    Field("returns", "", "The wait time as text.")]),
    ("No fields here.", "No fields here.", []),
])
def test_split_fields(doc: str, prose: str, fields: list[Field]) -> None:
    text, found = split_fields(doc)
    assert text.strip() == prose and found == fields


@pytest.mark.parametrize(("field", "expected"), [
    (Field("param", "key", "The bucket to use."), "`key` is the bucket to use."),
    (Field("param", "rate", "Tokens added per second."), "`rate` is tokens added per second."),
    (Field("param", "short", "Use the short form."), "Set `short` to use the short form."),
    (Field("param", "mode", "Selects the mode."), "`mode` selects the mode."),
    (Field("param", "eq", "If True, compare it."), "For `eq`, if True, compare it."),
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
