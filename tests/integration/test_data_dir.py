"""The data directory under a running server, and moved or copied between servers."""

from __future__ import annotations

import shutil

import httpx
from sqlalchemy import select, text, update

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import Generation
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


def _tiny(root):  # noqa: ANN001, ANN202
    for rel, body in TINY_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    return root


def test_a_data_directory_deleted_under_the_server_makes_it_not_ready_and_refuses_writes(tmp_path, local_embedder):
    settings = ApiSettings(data_dir=tmp_path / "data", auth=False, allowed_roots=[tmp_path])
    ingest(settings, _tiny(tmp_path / "tiny"), "tiny", embedder=local_embedder)
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/ready").json()["status"] == "ready"
        thread = {"kb": "tiny", "message": "what validates tokens?"}
        assert client.put("/v1/threads/t1", json={"kb": "tiny"}).status_code == 201
        shutil.rmtree(settings.data_dir)
        ready = client.get("/ready")
        assert ready.status_code == 503 and ready.json()["status"] == "not_ready", ready.text
        assert ready.json()["data_dir"] is False and "was deleted" in ready.json()["reason"]
        for method, path, body in (("POST", "/v1/chat", thread), ("PUT", "/v1/threads/t2", {"kb": "tiny"}),
                                   ("POST", "/v1/kbs", {"name": "new", "path": str(tmp_path / "tiny")}),
                                   ("DELETE", "/v1/kbs/tiny", None)):
            r = client.request(method, path, json=body)
            assert r.status_code == 503, (path, r.text)
            assert r.json()["error"] == "data_dir_gone" and "restart the server" in r.json()["detail"]


def test_a_moved_or_copied_data_directory_reads_its_own_indexes(tmp_path, local_embedder, capsys):
    first = tmp_path / "first"
    ingest(ApiSettings(data_dir=first), _tiny(tmp_path / "tiny"), "tiny", embedder=local_embedder)
    with open_database(Settings(data_dir=first)).connect() as conn:
        (stored,) = conn.execute(select(Generation.index_path)).scalars().all()
    assert stored == "kb1/g1"  # relative to the index root
    copy, moved = tmp_path / "copy", tmp_path / "moved"
    shutil.copytree(first, copy)
    first.rename(moved)  # the original is gone from where it was built
    for data in (copy, moved):
        assert main(["search", "validate token", "--kb", "tiny", "--data-dir", str(data), "--json"]) == 0
        assert "validate_token" in capsys.readouterr().out
    # The copy reads its own files: damage them, and only the copy's search fails.
    for p in (copy / "indexes" / "kb1" / "g1").glob("*.faiss"):
        p.write_bytes(b"")
    assert main(["search", "validate token", "--kb", "tiny", "--data-dir", str(copy)]) == 1
    assert "cannot be served" in capsys.readouterr().err
    assert main(["search", "validate token", "--kb", "tiny", "--data-dir", str(moved)]) == 0


def test_absolute_index_paths_of_older_databases_become_relative(tmp_path, local_embedder):
    data = tmp_path / "data"
    ingest(ApiSettings(data_dir=data), _tiny(tmp_path / "tiny"), "tiny", embedder=local_embedder)
    engine = open_database(Settings(data_dir=data))
    with engine.begin() as conn:  # as a database written before 0014 holds it
        conn.execute(update(Generation).values(index_path=str(data.resolve() / "indexes" / "kb1" / "g1")))
        conn.execute(text("UPDATE alembic_version SET version_num = '0013_ref_bound_locally'"))
    engine.dispose()
    with open_database(Settings(data_dir=data)).connect() as conn:
        assert conn.execute(select(Generation.index_path)).scalars().all() == ["kb1/g1"]
