"""List questions through the real graph: the module a list question names is enumerated from the code tree,
not only from what retrieval ranked, and in a long module only the definitions the question is about are cited;
with no such module, the classes named after what it asks for (a family over several files) are."""

from __future__ import annotations

import asyncio

import pytest

from sift.graph import retrieval
from sift.graph.checkpointer import open_checkpointer
from sift.graph.service import AskService
from tests.conftest import ingested_repo

VALIDATORS = '''"""Validators for form fields."""


class Validator:
    """Base class of every validator."""

    def __call__(self, value):
        raise NotImplementedError


class Range(Validator):
    """Succeeds when the value lies between a minimum and a maximum."""


class Length(Validator):
    """Succeeds when the length of the value is within bounds."""


class OneOf(Validator):
    """Succeeds when the value is one of the allowed choices."""


class Regexp(Validator):
    """Succeeds when the value matches a regular expression."""


class Predicate(Validator):
    """Calls a named method of the value and checks its result."""


def _helper(value):
    return value
'''

_PLAIN_FIELDS = ["String", "Integer", "Float", "Boolean", "Date", "Time", "List", "Dict", "Tuple", "Url", "Uuid",
                 "Decimal", "Enum", "Constant", "Method", "Function", "Raw", "Nested"]
FIELDS = '"""Field types."""\n\n\nclass Field:\n    """Base class of every field."""\n' + "".join(
    f'\n\nclass {name}(Field):\n    """A {name.lower()} field that (de)serializes {name.lower()} values."""\n'
    for name in _PLAIN_FIELDS
) + (
    '\n\nclass IPv4(Field):\n    """An IPv4 address field."""\n'
    '\n\nclass IPv6(Field):\n    """An IPv6 address field."""\n'
    '\n\nclass IPInterface(Field):\n    """An IP network interface field."""\n'
)

README = "# Forms\n\nA small form library with validators and field types.\n"

# Exporters spread over files that no module is named after: the family is found by the classes' names.
RENDER_FILES = {
    "forms/output/base.py": '"""Output."""\n\n\nclass Exporter:\n    """Base of every exporter."""\n\n'
                            '    def __call__(self, form):\n        raise NotImplementedError\n',
    "forms/output/structured.py": '"""Machine-readable output."""\n\nfrom forms.output.base import Exporter\n\n\n'
                                  'class JsonExporter(Exporter):\n    """Exports a form as a JSON document."""\n\n\n'
                                  'class _CachedExporter(Exporter):\n    """Keeps the last export."""\n',
    "forms/output/plain.py": '"""Human-readable output."""\n\nfrom forms.output.base import Exporter\n\n\n'
                             'class TextExporter(Exporter):\n    """Exports a form as aligned plain text."""\n\n\n'
                             'class HtmlExporter(Exporter):\n    """Exports a form as an HTML table."""\n',
    "tests/test_output.py": 'class FakeExporter:\n    """Records what it was asked to export."""\n',
    # A family whose abstract base is named like its members: the base is left out of the list.
    "forms/input/base.py": '"""Input."""\n\nfrom abc import ABC\n\n\nclass BaseImporter(ABC):\n'
                           '    """Abstract base class of every importer."""\n',
    "forms/input/csv_in.py": 'from forms.input.base import BaseImporter\n\n\nclass CsvImporter(BaseImporter):\n'
                             '    """Reads a form from comma-separated rows."""\n',
    "forms/input/json_in.py": 'from forms.input.base import BaseImporter\n\n\nclass JsonImporter(BaseImporter):\n'
                              '    """Reads a form from a JSON document."""\n',
    "forms/input/xml_in.py": 'from forms.input.base import BaseImporter\n\n\nclass XmlImporter(BaseImporter):\n'
                             '    """Reads a form from an XML document."""\n',
}


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    files = {"forms/__init__.py": '"""Forms."""\n', "forms/validate.py": VALIDATORS, "forms/fields.py": FIELDS,
             "README.md": README, **RENDER_FILES}
    with ingested_repo(tmp_path_factory.mktemp("lists"), files, "forms", local_embedder) as ready:
        yield ready


def _ask(env, question: str):
    settings, engine, searcher = env

    async def go():
        async with open_checkpointer(settings) as saver:
            return await AskService(settings, engine, searcher, saver).ask(question, "forms")

    return asyncio.run(go())


def _line(text: str, name: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(f"class {name}"))


def test_list_question_enumerates_the_whole_module(env) -> None:
    answer = _ask(env, "Which validators does the library provide?")
    assert answer.grounded
    cited = {c.start_line for c in answer.citations if c.path == "forms/validate.py"}
    for name in ("Range", "Length", "OneOf", "Regexp", "Predicate"):
        assert f"`{name}`" in answer.text
        assert _line(VALIDATORS, name) in cited
    assert "_helper" not in answer.text  # private definitions are not part of the public list
    assert "`Validator`" not in answer.text  # nor is the base class the listed ones derive from
    listed = [e for e in answer.evidence if e.path == "forms/validate.py"]
    assert len(listed) >= 5


def test_list_question_in_a_long_module_keeps_only_what_it_asks_about(env) -> None:
    answer = _ask(env, "What field types exist for IP addresses and network interfaces?")
    assert answer.grounded
    names = {c.snippet.splitlines()[0] for c in answer.citations}
    assert {"class IPv4(Field):", "class IPv6(Field):", "class IPInterface(Field):"} <= names
    assert not any(f"class {n}(" in line for n in _PLAIN_FIELDS for line in names), names


def test_list_question_without_a_module_lists_the_classes_named_after_it(env) -> None:
    answer = _ask(env, "Which exporters come with the library?")
    assert answer.grounded
    assert "3 classes named …Exporter are defined in 2 files:" in answer.text
    cited = {(c.path, c.snippet.splitlines()[0]) for c in answer.citations}
    # File by file, each in its file's order.
    assert answer.text.index("`TextExporter`") < answer.text.index("`HtmlExporter`") < answer.text.index("`JsonExporter`")
    assert {("forms/output/structured.py", "class JsonExporter(Exporter):"),
            ("forms/output/plain.py", "class TextExporter(Exporter):"),
            ("forms/output/plain.py", "class HtmlExporter(Exporter):")} <= cited
    # Not the base the others derive from, a private class, or a test's stand-in.
    for name in ("`Exporter`", "_CachedExporter", "FakeExporter"):
        assert name not in answer.text


def test_a_family_without_its_abstract_base_is_numbered_without_gaps(env) -> None:
    answer = _ask(env, "Which importers come with the library?")
    assert answer.grounded
    assert "3 classes named …Importer are defined in 3 files:" in answer.text
    for name in ("`CsvImporter`", "`JsonImporter`", "`XmlImporter`"):
        assert name in answer.text
    assert "- `BaseImporter`" not in answer.text  # not one of the listed items
    # The base was read with the family and left out: the evidence is still numbered 1..n.
    assert [e.id for e in answer.evidence] == list(range(1, len(answer.evidence) + 1))


def test_a_family_query_cut_off_by_its_limit_lists_nothing(env, monkeypatch) -> None:
    _, engine, _ = env
    found = retrieval.family_evidence(engine, "forms", "default", "exporter", [])
    assert found is not None and len(found[1]) == 3  # JsonExporter, TextExporter, HtmlExporter
    # Six classes' names hold the stem; with room for four, the members read may not be all of them.
    monkeypatch.setattr(retrieval, "MAX_MODULE_DEFS", 4)
    assert retrieval.family_evidence(engine, "forms", "default", "exporter", []) is None
