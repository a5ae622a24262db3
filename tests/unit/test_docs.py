"""The README documents every CLI command, and every command's help carries an example."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from sift.cli import build_parser

README = (Path(__file__).parents[2] / "README.md").read_text()


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_docs_readme_mentions_every_command(name):
    assert f"`sift {name}" in README


@pytest.mark.parametrize("name", sorted(_commands()))
def test_docs_every_command_has_an_example(name):
    parser = _commands()[name]
    assert "example" in (parser.epilog or "").lower() or "example" in parser.format_help().lower()
