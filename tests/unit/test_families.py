"""A list question that no module answers lists the family of classes named after what it asks for: which words
name the family, which class names belong to it, and how the answer introduces a family spread over files."""

from __future__ import annotations

import pytest

from sift.graph.models import Evidence
from sift.graph.planner import plan_question
from sift.graph.writer.composition import answer_sentences
from sift.graph.writer.selection import MODULE_CHANNEL, family_member, family_nouns


def ev(n: int, path: str, name: str, text: str, doc: str | None = None) -> Evidence:
    return Evidence(id=n, path=path, start_line=10 * n, end_line=10 * n + len(text.splitlines()) - 1, kind="class",
                    name=name, score=0.0, text=text, docstring=doc, channels=[MODULE_CHANNEL], content_hash=f"h-{path}")


@pytest.mark.parametrize(("question", "nouns"), [
    ("Which exporters come built in?", ["exporter"]),
    ("What workers can I choose from?", ["worker"]),
    ("What error classes does verification raise?", ["error", "class"]),  # a kind word: the word before it first
    ("Which built-in value types are there?", ["value", "type"]),
    ("Which types are there?", ["type"]),  # a kind word alone is the family's word
    ("How do I export a report?", []),  # not a list question
    ("Which are there?", []),  # no subject
])
def test_family_nouns(question: str, nouns: list[str]) -> None:
    assert family_nouns(plan_question(question, "kb"), []) == nouns


def test_no_family_when_the_question_names_a_class_of_the_evidence() -> None:
    plan = plan_question("Which exporters does `XmlExporter` wrap?", "kb")
    console = ev(1, "pkg/markup.py", "XmlExporter", "class XmlExporter:\n    pass")
    assert family_nouns(plan, [console]) == []


@pytest.mark.parametrize(("name", "noun", "member"), [
    ("JsonExporter", "exporter", True),
    ("CsvExporter", "exporter", True),
    ("csv_exporter", "exporter", True),
    ("QuotaExceededError", "error", True),
    ("ThreadPoolWorker", "worker", True),
    ("Exporter", "exporter", False),  # the family's base, not one of its members
    ("_CachedExporter", "exporter", False),  # private
    ("ExporterFactory", "exporter", False),  # named after something else
    ("DateFormatter", "format", False),  # another noun that begins with the word
    ("UrlFormat", "format", True),
])
def test_family_member(name: str, noun: str, member: bool) -> None:
    assert family_member(name, noun) is member


def test_a_family_over_several_files_is_introduced_by_its_common_name_and_each_item_by_its_file() -> None:
    items = [ev(1, "pkg/processors.py", "JsonExporter", "class JsonExporter:\n    pass",
                "Export the report as JSON."),
             ev(2, "pkg/processors.py", "CsvExporter", "class CsvExporter:\n    pass",
                "Export the report as comma-separated rows."),
             ev(3, "pkg/markup.py", "XmlExporter", "class XmlExporter:\n    pass",
                "Export the report as an XML document.")]
    plan = plan_question("Which exporters come built in?", "kb")
    sentences, cited = answer_sentences(plan, items, items, [])
    assert sentences[0] == "3 classes named …Exporter are defined in 2 files:"
    assert sentences[1].startswith("- `JsonExporter` (class) in pkg/processors.py (lines 10-11): Export the report")
    assert sentences[3].startswith("- `XmlExporter` (class) in pkg/markup.py (lines 30-31)")
    assert [s[-4:] for s in sentences[1:]] == ["[1].", "[2].", "[3]."]
    assert cited == items
    # Items of one module are placed by their lines alone, as before.
    one = [e.model_copy(update={"path": "pkg/processors.py"}) for e in items]
    sentences, _ = answer_sentences(plan, one, one, [])
    assert sentences[0] == "pkg/processors.py defines 3 classes:"
    assert sentences[1].startswith("- `JsonExporter` (class) (lines 10-11)")


def test_listed_items_join_the_evidence_marked_and_numbered_on_without_gaps() -> None:
    from sift.graph.nodes.fuse import with_listed

    retrieved = [ev(1, "pkg/a.py", "JsonExporter", "class JsonExporter:\n    pass"),
                 ev(2, "README.md", "Usage", "Export a report.")]
    retrieved = [e.model_copy(update={"channels": ["bm25"]}) for e in retrieved]
    base = ev(3, "pkg/base.py", "BaseExporter", "class BaseExporter(ABC):\n    pass")
    extra = [base, ev(4, "pkg/b.py", "CsvExporter", "class CsvExporter(BaseExporter):\n    pass"),
             ev(5, "pkg/c.py", "XmlExporter", "class XmlExporter(BaseExporter):\n    pass")]
    joined = with_listed(retrieved, extra, {id(retrieved[0]), id(extra[1]), id(extra[2])})
    assert [(e.id, e.name) for e in joined] == [(1, "JsonExporter"), (2, "Usage"), (3, "CsvExporter"),
                                                (4, "XmlExporter")]  # the base left out, no number skipped
    assert [MODULE_CHANNEL in e.channels for e in joined] == [True, False, True, True]
    assert retrieved[0].channels == ["bm25"]  # the given items are not changed in place
