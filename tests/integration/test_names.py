"""Identifiers that become paths (tenant, knowledge base) are validated where they enter and where they are used."""

from __future__ import annotations

from pathlib import Path

import pytest

from sift.api.auth import create_key
from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.errors import InvalidQuery
from sift.ingest.locks import kb_lock


def _files_outside(tmp_path: Path, data: Path) -> list[Path]:
    return [p for p in tmp_path.rglob("*.lock") if not p.is_relative_to(data)]


@pytest.mark.parametrize(("tenant", "kb"), [("../../pwn", "r"), ("default", "../../pwn"), ("a/b", "r"),
                                            ("default", ".hidden"), ("default", ""), ("t", "x" * 101)])
def test_ingest_rejects_names_that_would_become_paths_outside(tmp_path, capsys, tenant, kb) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("a = 1\n")
    data = tmp_path / "deep" / "data"
    code = main(["ingest", str(repo), "--kb", kb, "--tenant", tenant, "--no-index", "--data-dir", str(data)])
    assert code == 1
    assert "name" in capsys.readouterr().err
    assert _files_outside(tmp_path, data) == []


def test_kb_lock_validates_before_touching_the_disk(tmp_path) -> None:
    with pytest.raises(InvalidQuery, match="invalid tenant name"), kb_lock(tmp_path / "data", "../../pwn", "r"):
        pass
    assert not (tmp_path / "pwn__r.lock").exists()


def test_keys_create_rejects_a_tenant_that_is_not_a_name(tmp_path, capsys) -> None:
    engine = open_database(Settings(data_dir=tmp_path / "data"))
    with pytest.raises(InvalidQuery, match="invalid tenant name"):
        create_key(engine, "../../pwn")
    assert main(["keys", "create", "--tenant", "../x", "--data-dir", str(tmp_path / "data")]) == 1
    assert "invalid tenant name" in capsys.readouterr().err
    assert create_key(engine, "acme-1.prod_2")[0] >= 1
