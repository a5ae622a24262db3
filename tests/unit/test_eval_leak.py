"""No product module may know the eval questions: their ids, gold paths, projects, expected phrases or wording.

Rules and examples fitted to one question make dev figures lie about projects sift has never seen, so the
product code (everything that installs as ``sift``) is scanned for what the question sets under ``eval/sets``
hold. Python files are read with :mod:`tokenize`: identifiers are code, comments and string literals are prose.
An expected phrase counts when it appears in prose as code (``name``, `name`, ``name(``, ``x.name``) and is not a
name of sift's own code, Python's builtins or its standard library; a plain English word used as prose does not
count. A question's identifier-shaped words (``macOS``, ``to_dict``) count as written, and its wording as any run
of five consecutive words.
"""

from __future__ import annotations

import builtins
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("sift", "graph", "retrievers", "ingest", "api", "cli", "alembic")
SUFFIXES = (".py", ".scm", ".json", ".toml", ".mako")
# Eval projects, and the projects other evaluations use (requests, flask, commander). pytest, the external set's
# other project, is left out: sift names the tool among the words that mark test code (``retrievers/ranker.py``),
# so its set is covered by the question ids, gold paths, phrases and wording below instead.
PROJECTS = (
    "attrs", "marshmallow", "click", "structlog", "axios", "apscheduler", "semver", "loguru", "qs", "peewee", "luxon",
    "sqlparse", "yup", "voluptuous", "markdown", "jsonwebtoken", "ejs", "immer", "cerberus", "tabulate", "mustache",
    "dayjs", "jellyfish", "typer", "xarray", "requests", "flask", "commander",
)
# Project names that are also English words are matched only where they read as the project's code.
ENGLISH = {"click", "requests", "flask", "commander"}
# Project names that are also a format sift reads: matched only where sift would import the project.
FORMATS = {"markdown"}
NGRAM = 5
# Words a question shares with what sift itself is: the spec its REST API publishes, the library its encoder runs on,
# the languages its parsers read, the databases its SQL is written for, the DocQL function for a document's headings,
# the code host its docs name, the npm manifest its walker reads (for a published package's entry points).
# The walker's names: its skip reason for binary files, and tox's environments among the folders it skips.
# And the abbreviations of English prose ("e.g.", "i.e."), which look like dotted names, and the literals every
# language shares (``NaN``, among the literal words the candidate code reads as no one's name).
OWN_TERMS = {"OpenAPI", "NumPy", "JavaScript", "TypeScript", "php", "PostgreSQL", "MySQL", "toc", "GitHub",
             "package.json", "binary", "tox", "e.g", "i.e", "NaN"}


@dataclass
class Source:
    """One product file: its prose (comments and strings) and the names its code uses."""

    path: str
    text: str
    prose: str
    names: set[str] = field(default_factory=set)


def _read(path: Path) -> Source:
    rel = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return Source(rel, text, text)
    prose, names = [], set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME:
            names.add(tok.string)
        elif tok.type in (tokenize.COMMENT, tokenize.STRING) or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            prose.append(tok.string)
    return Source(rel, text, "\n".join(prose), names)


def _product() -> list[Source]:
    return [_read(p) for top in PRODUCT for p in sorted((ROOT / top).rglob("*"))
            if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts]


def _questions() -> list[dict]:
    out = []
    for path in sorted((ROOT / "eval" / "sets").rglob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


SOURCES = _product()
QUESTIONS = _questions()
OWN_NAMES = set().union(*(s.names for s in SOURCES)) | set(dir(builtins)) | set(sys.stdlib_module_names)
_WORD = re.compile(r"[a-z0-9]+")


def _as_code(phrase: str) -> re.Pattern[str]:
    """``phrase`` written as code inside prose: in backquotes, called, or after a dot."""
    p = re.escape(phrase)
    return re.compile(rf"`{p}`|`{p}[.(]|\.{p}\b(?!\.\w)|\b{p}\(|`[\w.]*\.{p}`")


def _project(name: str) -> re.Pattern[str]:
    if name in FORMATS:
        return re.compile(rf"\bimport {name}\b|\bfrom {name} import\b")
    if name in ENGLISH:  # the project's code, not the word: ``click.echo``, ``import requests``, ``"flask"``
        return re.compile(rf"\b{name}\.\w|\bimport {name}\b|\bfrom {name} import\b|[`'\"]{name}[`'\"]|\b{name}:\w")
    return re.compile(rf"\b{name}\b", re.I)


def _violations() -> list[str]:
    found: list[str] = []
    ids = {q["id"] for q in QUESTIONS}
    gold = {g for q in QUESTIONS for g in q.get("gold_files", []) if "/" in g}
    phrases = {p for q in QUESTIONS for p in q.get("answer_contains", [])}
    code_phrases = {p: _as_code(p) for p in phrases if re.fullmatch(r"[A-Za-z_][\w.]*", p)
                    and p not in OWN_NAMES | OWN_TERMS and p.split(".")[0] not in OWN_NAMES}
    # Identifier-shaped words of the questions (``macOS``, ``to_dict``, ``obj.attr``), in prose as written.
    shaped = {w.rstrip(".") for q in QUESTIONS for w in re.findall(r"[A-Za-z_][\w.]*", q["query"])
              if re.search(r"[a-z][A-Z]|\w[._]\w", w) and w.rstrip(".") not in OWN_NAMES | OWN_TERMS}
    shaped_rx = {w: re.compile(rf"(?<![\w.]){re.escape(w)}(?![\w])") for w in shaped}
    grams = set()
    for q in QUESTIONS:
        words = _WORD.findall(q["query"].lower())
        grams |= {" ".join(words[i:i + NGRAM]) for i in range(len(words) - NGRAM + 1)}
    projects = {name: _project(name) for name in PROJECTS}
    for src in SOURCES:
        found += [f"{src.path}: question id {i!r}" for i in ids if i in src.text]
        found += [f"{src.path}: gold path {g!r}" for g in gold if g in src.text]
        found += [f"{src.path}: eval project {n!r}" for n, rx in projects.items() if rx.search(src.prose)]
        found += [f"{src.path}: expected phrase {p!r}" for p, rx in code_phrases.items() if rx.search(src.prose)]
        found += [f"{src.path}: question word {w!r}" for w, rx in shaped_rx.items() if rx.search(src.prose)]
        prose_words = " ".join(_WORD.findall(src.prose.lower()))
        found += [f"{src.path}: question wording {g!r}" for g in grams if f" {g} " in f" {prose_words} "]
    return sorted(found)


def test_the_scan_sees_the_question_sets_and_the_product() -> None:
    assert len(QUESTIONS) >= 150 and any(q["kb"] == "axios" for q in QUESTIONS)
    assert {"pytest", "xarray"} <= {q["kb"] for q in QUESTIONS}  # the external set
    assert any(s.path == "graph/nodes/check.py" for s in SOURCES) and any(s.path.endswith(".scm") for s in SOURCES)


@pytest.mark.parametrize(("prose", "leaks"), [
    ("# a method named like ``Attribute.evolve``", True),
    ("# call `evolve` to copy", True),
    ("# evolve the state", False),  # the English word
    ("# see resolve_types( for", True),
])
def test_expected_phrases_count_when_written_as_code(prose: str, leaks: bool) -> None:
    assert bool(_as_code("evolve").search(prose) or _as_code("resolve_types").search(prose)) is leaks


@pytest.mark.parametrize(("name", "prose", "leaks"), [
    ("click", "a ``.. click:example::`` directive", True),
    ("click", "users click the button", False),
    ("requests", "import requests", True),
    ("requests", "concurrent requests wait", False),
    ("attrs", "like Attrs does", True),
    ("axios", "clients such as axios.get('/x')", True),
])
def test_project_names(name: str, prose: str, leaks: bool) -> None:
    assert bool(_project(name).search(prose)) is leaks


def test_no_product_module_knows_the_eval_questions() -> None:
    assert _violations() == []
