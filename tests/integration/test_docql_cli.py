"""``sift docql``: JSON and text output, and a bad query's exit code and pointed message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.ingest.pipeline import ingest
from sift.models import Filters
from sift.retrievers.docql import DOCQL_TOOL_DESCRIPTION, DocQLChannel, make_docql_tool, resolve_kb

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docql_repo"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding the fixture repository as knowledge base ``shop``."""
    d = tmp_path_factory.mktemp("docql_cli")
    ingest(Settings(data_dir=d), FIXTURE, "shop", build_index=False)
    return d


def test_docql_cli_json(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["docql", '$.code.class("AuthService")', "--kb", "shop", "--json", "--data-dir", str(data_dir)]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (item,) = out["files"]["src/shop/auth.py"]
    assert (out["type"], out["total"], item["start_line"], item["end_line"]) == ("docql_result", 1, 6, 17)


def test_docql_cli_text_and_limit(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["docql", "$.toc", "--kb", "shop", "--limit", "1", "--data-dir", str(data_dir)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == ["README.md", "  L1-3  heading  Shop", "8 result(s) (showing 1; raise --limit for more)"]


@pytest.mark.parametrize(
    ("query", "kb", "fragment"),
    [
        ("$.toc[?(@.level = 1)]", "shop", "column 17"),
        ("$.toc", "nope", "knowledge base 'nope' does not exist"),
    ],
)
def test_docql_cli_errors_exit_1(
    data_dir: Path, capsys: pytest.CaptureFixture[str], query: str, kb: str, fragment: str
) -> None:
    code = main(["docql", query, "--kb", kb, "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 1
    assert fragment in err


def test_docql_channel_and_tool(data_dir: Path) -> None:
    engine = open_database(Settings(data_dir=data_dir))
    hits = DocQLChannel(engine).search('$.code.method("__init__")', Filters(kb="shop"), k=2)
    assert [(h.path, h.start_line, h.end_line, h.rank, h.channel) for h in hits] == [
        ("src/shop/auth.py", 9, 10, 1, "docql"),
        ("src/shop/orders.py", 9, 11, 2, "docql"),
    ]
    assert hits[0].snippet.startswith("    def __init__(self, secret: str)")
    scoped = DocQLChannel(engine).search(
        "$.toc[?(@.level == 1)]", Filters(kb="shop", path_glob="docs/*"), k=10
    )
    assert [h.name for h in scoped] == ["API Reference", "Shop Guide"]
    docql = make_docql_tool(engine, *resolve_kb(engine, "shop"))
    assert docql.__doc__ == DOCQL_TOOL_DESCRIPTION and "$.code.callers" in DOCQL_TOOL_DESCRIPTION
    assert docql("$.code.callers('login')")["total"] == 1
    error = docql("$.code.callers(login)")
    assert (error["type"], error["position"]) == ("docql_error", 16)
