"""The walk ahead of the parse: every file listed, texts kept within a budget, else read again in a second walk."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.ingest.listing import list_files, texts
from sift.ingest.walk import WalkStats

FILES = {"a.py": "x = 1\n" * 10, "b/c.py": "y = 2\n" * 20, "b/d.md": "# D\n\ntext\n", "e.bin": "\x00\x01"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_list_files_keeps_only_the_texts_the_parse_needs(repo: Path) -> None:
    stats, seen = WalkStats(), []
    listing = list_files(repo, needs_text=lambda wf: wf.path != "a.py", max_file_bytes=1 << 20, stats=stats,
                         progress=seen.append)
    assert [f.path for f in listing.files] == ["a.py", "b/c.py", "b/d.md"] and seen == [1, 2, 3]
    assert not listing.streamed and stats.skipped == {"binary": 1}
    assert {f.path: f.text for f in texts(listing, repo, max_file_bytes=1 << 20)} == {
        "a.py": "", "b/c.py": FILES["b/c.py"], "b/d.md": FILES["b/d.md"]}


@pytest.mark.parametrize("budget", [0, 100, 150])
def test_list_files_past_the_budget_keeps_no_text_and_walks_again(repo: Path, budget: int) -> None:
    listing = list_files(repo, needs_text=lambda wf: True, max_file_bytes=1 << 20, stats=WalkStats(), budget=budget)
    assert listing.streamed and all(f.text == "" for f in listing.files)
    again = list(texts(listing, repo, max_file_bytes=1 << 20))
    assert [(f.path, f.text, f.content_hash) for f in again] == [
        (f.path, FILES[f.path], f.content_hash) for f in listing.files]


def test_list_files_within_the_budget_walks_once(repo: Path) -> None:
    listing = list_files(repo, needs_text=lambda wf: True, max_file_bytes=1 << 20, stats=WalkStats(), budget=10**6)
    assert not listing.streamed
    assert texts(listing, repo, max_file_bytes=1 << 20) is listing.files
