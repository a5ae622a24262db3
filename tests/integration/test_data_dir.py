"""The data directory under a running server, and moved or copied between servers."""

from __future__ import annotations

import shutil

import httpx

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


def _tiny(root):  # noqa: ANN001, ANN202
    for rel, text in TINY_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
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
