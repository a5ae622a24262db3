"""Two API replicas on one PostgreSQL database and one shared index directory, each with its own data dir."""

from __future__ import annotations

import httpx

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


def test_pg_thread_started_on_replica_a_continues_on_replica_b(tmp_path, pg_url, local_embedder):
    repo = tmp_path / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    shared = {"database_url": pg_url, "index_dir": tmp_path / "shared-indexes", "auth": False}
    a = ApiSettings(data_dir=tmp_path / "replica-a", **shared)
    b = ApiSettings(data_dir=tmp_path / "replica-b", **shared)
    ingest(a, repo, "tiny", embedder=local_embedder)
    with serve_in_thread(create_app(a, embedder=local_embedder)) as url_a, \
            serve_in_thread(create_app(b, embedder=local_embedder)) as url_b, \
            httpx.Client(timeout=120) as http:
        first = http.post(f"{url_a}/v1/chat", json={"kb": "tiny", "message": "where is the token validated?"})
        assert first.status_code == 200, first.text
        thread_id = first.json()["thread_id"]
        second = http.post(f"{url_b}/v1/chat", json={"kb": "tiny", "message": "and where is it called?",
                                                     "thread_id": thread_id})
        assert second.status_code == 200, second.text
        assert second.json()["thread_id"] == thread_id
        # Replica B read the first turn from the shared checkpointer: the follow-up was resolved against it.
        plan = second.json()["plan"]
        assert plan["question_type"] == "follow-up", plan
        assert "token" in plan["standalone"].lower() or "validat" in plan["standalone"].lower(), plan
        for url in (url_a, url_b):
            thread = http.get(f"{url}/v1/threads/{thread_id}").json()
            assert [m["question"] for m in thread["messages"]] == ["where is the token validated?",
                                                                   "and where is it called?"]
    # Nothing about the thread lives in either replica's own data directory.
    assert not (tmp_path / "replica-a" / "checkpoints.db").exists()
    assert not (tmp_path / "replica-b" / "checkpoints.db").exists()
