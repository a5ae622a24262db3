"""Damaged index files: each is caught, named and confined to its own knowledge base.

Real generations are built by a real ingest, then a file is deleted, truncated or overwritten on disk, and a real
server is started over them (or `sift kb check` run).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.catalog import generation_dir, get_kb
from sift.cli import main
from sift.db import open_database
from sift.db.tables import Generation
from sift.index.generation import MANIFEST, load_indexes
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES

NAMES = ("good", "nofile", "short")


@pytest.fixture
def built(tmp_path, local_embedder) -> tuple[ApiSettings, dict[str, Path]]:
    repo = tmp_path / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = ApiSettings(data_dir=tmp_path / "data", auth=False)
    dirs = {}
    for name in NAMES:
        ingest(settings, repo, name, embedder=local_embedder)
        kb = get_kb(open_database(settings), name)
        dirs[name] = generation_dir(settings.resolved_index_dir(), kb.id, kb.generation)
    return settings, dirs


def test_every_index_file_is_listed_with_its_checksum(built):
    _, dirs = built
    manifest = json.loads((dirs["good"] / MANIFEST).read_text())
    on_disk = sorted(p.name for p in dirs["good"].iterdir() if p.name != MANIFEST)
    assert sorted(manifest["files"]) == on_disk and "doc.faiss" in on_disk and "bm25.npz" in on_disk
    for name, entry in manifest["files"].items():
        assert entry["bytes"] == (dirs["good"] / name).stat().st_size and len(entry["sha256"]) == 64


def test_one_damaged_kb_answers_503_and_the_others_serve(built, local_embedder):
    settings, dirs = built
    (dirs["nofile"] / "doc.faiss").unlink()
    function = dirs["short"] / "function.faiss"
    function.write_bytes(function.read_bytes()[:100])
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        ok = client.post("/v1/search", json={"kb": "good", "query": "validate token", "channels": "bm25"})
        assert ok.status_code == 200 and ok.json()["hits"], ok.text
        for name, says in (("nofile", "doc.faiss is missing"), ("short", "function.faiss has 100 bytes")):
            r = client.post("/v1/search", json={"kb": name, "query": "validate token"})
            assert r.status_code == 503, r.text
            body = r.json()
            assert body["error"] == "index_damaged" and says in body["detail"], body
            assert "sift ingest" in body["detail"] and f"sift kb check {name}" in body["detail"]


def test_kb_check_hashes_every_byte_and_a_rerun_ingest_repairs(built, capsys, local_embedder):
    settings, dirs = built
    data = ["--data-dir", str(settings.data_dir)]
    assert main(["kb", "check", "good", "--json", *data]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and {f["name"] for f in report["files"]} >= {"doc.faiss", "bm25.npz"}
    # Garbage in the middle of a vector file: same size, same first bytes; only the full hash sees it.
    target = dirs["good"] / "function.faiss"
    raw = bytearray(target.read_bytes())
    middle = len(raw) // 2
    raw[middle:middle + 64] = bytes(255 - b for b in raw[middle:middle + 64])
    target.write_bytes(bytes(raw))
    load_indexes(dirs["good"])  # the cheap check at load passes: its size and header are intact
    assert main(["kb", "check", "good", *data]) == 1
    out = capsys.readouterr().out
    assert "BAD  function.faiss: function.faiss does not match its checksum" in out and "sift ingest" in out
    # Garbage over the header is caught at load already; an ingest with no changes rebuilds the damaged index.
    target.write_bytes(b"\0" * 16 + bytes(raw[16:]))
    assert main(["kb", "check", "good", "--json", *data]) == 1
    assert "does not start with the bytes" in json.loads(capsys.readouterr().out)["problem"]
    summary = ingest(settings, Path(get_kb(open_database(settings), "good").root_path), "good",
                     embedder=local_embedder)
    assert summary["status"] == "published"
    assert main(["kb", "check", "good", *data]) == 0
    with open_database(settings).connect() as conn:
        assert conn.execute(select(Generation.status).where(Generation.number == 2)).scalar() is not None
