"""Ingest of hostile repositories: bad names and deep trees are skipped or walked, and the run still publishes."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import select

from sift.config import Settings
from sift.db import open_database, visible_in
from sift.db.tables import File
from sift.ingest.pipeline import ingest
from sift.ingest.store import get_kb


def _paths(engine, kb: str) -> list[str]:
    ref = get_kb(engine, kb)
    with engine.connect() as conn:
        return sorted(conn.execute(select(File.path).where(File.kb_id == ref.id,
                                                           visible_in(File, ref.generation))).scalars())


def test_ingest_publishes_past_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "good.py").write_text("def good():\n    return 1\n")
    first = ingest(settings, repo, "r", build_index=False)
    assert first["generation"] == 1
    # A bad name appears in an existing kb: the update must still publish.
    with open(os.fsencode(repo) + b"/bad\xffname.py", "wb") as fh:
        fh.write(b"x\n")
    (repo / "more.py").write_text("def more():\n    return 2\n")
    second = ingest(settings, repo, "r", build_index=False)
    assert (second["status"], second["generation"]) == ("published", 2)
    assert second["skipped"] == {"undecodable_name": 1}
    assert _paths(open_database(settings), "r") == ["good.py", "more.py"]
