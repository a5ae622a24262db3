"""The train-set generator end to end on a small repository written under tmp_path: real walk, real tree-sitter
and Markdown/rST parsers, every pair source, the filters, the JSONL records and their loader."""

from __future__ import annotations

from pathlib import Path

from lab.train.make_pairs import dump, generate, load_train, to_records

FILES = {
    "pkg/__init__.py": '"""Tools for turning raw configuration text into settings objects."""\n',
    "pkg/reader.py": (
        '"""Reading helpers."""\n'  # 1
        "\n"
        "import json\n"
        "\n"
        "\n"
        "class ConfigReader:\n"  # 6
        '    """Loads settings from a JSON document on disk."""\n'
        "\n"
        "    def __init__(self, path):\n"  # 9
        '        """Initialize self.  See help(type(self)) for accurate signature."""\n'
        "        self.path = path\n"
        "\n"
        "    def read_settings(self):\n"  # 13
        '        """Read the settings file and return a dictionary of values."""\n'
        "        with open(self.path) as fh:\n"
        "            return json.load(fh)\n"  # 16
        "\n"
        "\n"
        "def merge_layers(base, override):\n"  # 19
        '    """Merge two layers of settings, the second one winning on conflicts."""\n'
        "    out = dict(base)\n"
        "    out.update(override)\n"
        "    return out\n"  # 23
    ),
    "tests/test_reader.py": (
        "from pkg.reader import ConfigReader, merge_layers\n"
        "\n"
        "\n"
        "def test_merge_layers_prefers_the_override():\n"
        '    """Check that later layers replace earlier values."""\n'
        '    assert merge_layers({"a": 1}, {"a": 2}) == {"a": 2}\n'
        "\n"
        "\n"
        "def test_reader_returns_an_empty_dict(tmp_path):\n"
        '    reader = ConfigReader(tmp_path / "x.json")\n'
        "    assert reader.read_settings() == {}\n"
        "\n"
        "\n"
        "def test_short():\n"
        "    merge_layers({}, {})\n"
    ),
    "docs/guide.md": (
        "# Guide\n"  # 1
        "\n"
        "Intro.\n"
        "\n"
        "## Installing the package\n"  # 5
        "\n"
        "Install it from the package index with pip, then import it in your code.\n"  # 7
        "\n"
        "## Layered settings\n"  # 9
        "\n"
        "[![badge](https://ci.example/b.svg)](https://ci.example)\n"
        "\n"
        "Later files override earlier ones, key by key, so a local file can adjust a shared default.\n"  # 13
        "\n"
        "### 1.2.0\n"  # 15
        "\n"
        "Release notes text that should never become a query at all.\n"
    ),
    "docs/api.rst": (
        "API\n"  # 1
        "===\n"
        "\n"
        ".. autoclass:: pkg.reader.ConfigReader\n"
        "\n"
        "Reading files\n"  # 6
        "-------------\n"
        "\n"
        "The reader opens a file on disk and decodes the JSON document inside it::\n"
        "\n"
        '    reader = ConfigReader("settings.json")\n'  # 11
        "\n"
        ".. _merging:\n"
        "\n"
        "Merging\n"  # 15
        "-------\n"
        "\n"
        "- a bullet first\n"
        "\n"
        "Layers are combined from left to right.\n"  # 20
    ),
    "CHANGELOG.md": "# Changes\n\n## Unreleased\n\nAdded a much better reader for settings files.\n",
    "README.md": "# tiny\n\nA tiny project for reading layered settings files from disk.\n",
}

EXPECTED = [
    ("docstring", "Loads settings from a JSON document on disk.", "pkg/reader.py", 6, 16, "class"),
    ("docstring", "the file and return a dictionary of values.", "pkg/reader.py", 13, 16, "method"),
    (
        "docstring",
        "two of settings, the second one winning on conflicts.",
        "pkg/reader.py",
        19,
        23,
        "function",
    ),
    (
        "module_doc",
        "Tools for turning raw configuration text into settings objects.",
        "pkg/__init__.py",
        1,
        1,
        "file",
    ),
    ("doc_section", "A project for reading layered settings files from disk.", "README.md", 1, 3, "heading"),
    (
        "doc_section",
        "The reader opens a on disk and decodes the JSON document inside it",
        "docs/api.rst",
        6,
        11,
        "heading",
    ),
    ("doc_section", "Layers are combined from left to right.", "docs/api.rst", 15, 20, "heading"),
    (
        "doc_section",
        "it from the index with pip, then import it in your code.",
        "docs/guide.md",
        5,
        7,
        "heading",
    ),
    (
        "doc_section",
        "Later files override earlier ones, key by key, so a local file can adjust a shared default.",
        "docs/guide.md",
        9,
        13,
        "heading",
    ),
    ("test_name", "reader returns an empty dict", "pkg/reader.py", 6, 16, "class"),  # shares "reader"
    ("test_name", "merge layers prefers the override", "pkg/reader.py", 19, 23, "function"),
    ("test_doc", "later replace earlier values.", "pkg/reader.py", 19, 23, "function"),
]


def _write(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_generate_pairs_every_source_from_a_small_repo(tmp_path: Path) -> None:
    root = _write(tmp_path / "tiny")
    pairs = generate(root, "tiny")
    got = [(p.source, p.query, p.path, p.start_line, p.end_line, p.target_kind) for p in pairs]
    assert got == EXPECTED


def test_generate_writes_loadable_records_with_the_same_bytes_every_run(tmp_path: Path) -> None:
    root = _write(tmp_path / "tiny")
    data = dump(to_records("tiny", generate(root, "tiny")))
    assert dump(to_records("tiny", generate(root, "tiny"))) == data
    out = tmp_path / "tiny.jsonl"
    out.write_bytes(data)
    loaded = load_train(out)
    assert len(loaded) == len(EXPECTED)
    question, extra = loaded[0]
    assert question.id == "train-tiny-docstring-0001"
    assert question.kind == "locate" and question.kb == "tiny"
    assert question.gold_files == ["pkg/reader.py"]
    assert (question.gold_spans[0].start_line, question.gold_spans[0].end_line) == (6, 16)
    assert extra == {"source": "docstring", "target_kind": "class", "target": "pkg/reader.py::ConfigReader"}
    by_id = {q.id: (q, e) for q, e in loaded}
    assert by_id["train-tiny-doc-section-0001"][0].kind == "doc"
    assert by_id["train-tiny-test-doc-0001"][1]["target"] == "pkg/reader.py::merge_layers"
