"""Chat over real HTTP: answers with citations, two-turn threads, SSE order, disconnects and restarts."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from httpx_sse import connect_sse
from sqlalchemy import select

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.db import open_database
from sift.db.api_tables import QaRecord
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES

PROGRESS_ORDER = ["plan", "retrieve", "fuse", "check", "answer", "done"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, local_embedder):
    """Settings (auth off, the single-user mode) and an ingested tiny repository."""
    base = tmp_path_factory.mktemp("chat")
    repo = base / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = ApiSettings(data_dir=base / "data", auth=False)
    ingest(settings, repo, "tiny", embedder=local_embedder)
    engine = open_database(settings)
    yield settings, engine
    engine.dispose()


@pytest.fixture(scope="module")
def client(setup, local_embedder):
    settings, _ = setup
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
            httpx.Client(base_url=url, timeout=120) as c:
        yield c


def _records(engine, thread_id: str) -> list:
    with engine.connect() as conn:
        return conn.execute(select(QaRecord).where(QaRecord.thread_id == thread_id).order_by(QaRecord.id)).all()


def test_chat_answers_with_citations_and_records_it(client, setup):
    r = client.post("/v1/chat", json={"kb": "tiny", "message": "where is the auth token validated?"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["text"] and answer["thread_id"] and answer["mode"] == "extractive"
    assert any(c["path"] == "pkg/auth.py" for c in answer["citations"]), answer["citations"]
    assert answer["confidence"] in ("high", "medium", "low") and 0.0 <= answer["confidence_score"] <= 1.0
    assert set(answer["confidence_signals"]) == {"margin", "coverage", "agreement", "share"}
    (rec,) = _records(setup[1], answer["thread_id"])
    assert (rec.tenant, rec.kb, rec.question, rec.status) == ("default", "tiny", "where is the auth token validated?",
                                                               "answered")
    assert rec.answer == answer["text"] and rec.citations == answer["citations"]
    assert rec.grounded == answer["grounded"] and rec.plan and rec.elapsed_ms > 0


def test_chat_two_turn_thread(client):
    first = client.post("/v1/chat", json={"kb": "tiny", "message": "what does AuthService do?"}).json()
    second = client.post("/v1/chat", json={"kb": "tiny", "message": "and how do I rotate the secret?",
                                           "thread_id": first["thread_id"]})
    assert second.status_code == 200, second.text
    assert second.json()["thread_id"] == first["thread_id"]
    assert second.json()["citations"], second.json()
    thread = client.get(f"/v1/threads/{first['thread_id']}").json()
    assert [m["question"] for m in thread["messages"]] == ["what does AuthService do?",
                                                           "and how do I rotate the secret?"]
    assert thread["turns"] == 2 and all(m["citations"] for m in thread["messages"])
    listed = client.get("/v1/threads").json()["threads"]
    assert first["thread_id"] in [t["thread_id"] for t in listed]


def test_chat_stream_event_order(client, setup):
    with connect_sse(client, "POST", "/v1/chat/stream",
                     json={"kb": "tiny", "message": "where is login defined?"}) as source:
        assert source.response.headers["content-type"].startswith("text/event-stream")
        sse = list(source.iter_sse())
        events = [(e.event, json.loads(e.data)) for e in sse]
    assert [e.id for e in sse] == [str(i) for i in range(1, len(sse) + 1)]  # `id:` lines, 1, 2, … per stream
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("answer") == 1 and "error" not in names
    firsts = [names.index(n) for n in PROGRESS_ORDER]
    assert firsts == sorted(firsts), names
    retrieve = [d for n, d in events if n == "retrieve"]
    assert {d["channel"] for d in retrieve} and all("hits" in d for d in retrieve)
    answer = dict(events)["answer"]
    assert any(c["path"] == "pkg/auth.py" for c in answer["citations"])
    (rec,) = _records(setup[1], answer["thread_id"])
    assert rec.status == "answered" and rec.answer == answer["text"]


def test_chat_stream_disconnect_leaves_thread_usable(client, setup):
    first = client.post("/v1/chat", json={"kb": "tiny", "message": "what does login do?"}).json()
    tid = first["thread_id"]
    with connect_sse(client, "POST", "/v1/chat/stream",
                     json={"kb": "tiny", "message": "where is the guide?", "thread_id": tid}) as source:
        first_event = next(source.iter_sse())
    assert first_event.event == "plan"
    after = client.post("/v1/chat", json={"kb": "tiny", "message": "where is validate_token?", "thread_id": tid})
    assert after.status_code == 200, after.text
    statuses = [r.status for r in _records(setup[1], tid)]
    assert statuses[0] == "answered" and statuses[-1] == "answered"
    assert statuses[1] in ("cancelled", "answered")
    thread = client.get(f"/v1/threads/{tid}").json()
    assert thread["messages"][-1]["question"] == "where is validate_token?"


def test_chat_stream_bad_request_is_json_not_sse(client):
    r = client.post("/v1/chat/stream", json={"kb": "missing", "message": "hi"})
    assert r.status_code == 404 and r.json()["error"] == "not_found"


def test_thread_delete_forgets_it(client):
    tid = client.post("/v1/chat", json={"kb": "tiny", "message": "what is the guide about?"}).json()["thread_id"]
    assert client.delete(f"/v1/threads/{tid}").status_code == 204
    assert client.get(f"/v1/threads/{tid}").status_code == 404
    assert client.delete(f"/v1/threads/{tid}").status_code == 404
    # the id is free again: a message to it starts a new conversation, with nothing of the old one
    r = client.post("/v1/chat", json={"kb": "tiny", "message": "what does login do?", "thread_id": tid})
    assert r.status_code == 200 and r.json()["plan"]["question_type"] != "follow-up", r.text
    assert [m["question"] for m in client.get(f"/v1/threads/{tid}").json()["messages"]] == ["what does login do?"]


def test_thread_history_survives_restart(setup, local_embedder):
    settings, engine = setup
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
            httpx.Client(base_url=url, timeout=120) as c:
        tid = c.post("/v1/chat", json={"kb": "tiny", "message": "what does AuthService do?"}).json()["thread_id"]
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
            httpx.Client(base_url=url, timeout=120) as c:
        thread = c.get(f"/v1/threads/{tid}").json()
        assert [m["question"] for m in thread["messages"]] == ["what does AuthService do?"]
        follow = c.post("/v1/chat", json={"kb": "tiny", "message": "and where is it tested?", "thread_id": tid})
        assert follow.status_code == 200, follow.text
        assert c.get(f"/v1/threads/{tid}").json()["turns"] == 2
    # the graph's checkpointed conversation has both turns too
    from sift.graph.checkpointer import open_checkpointer
    from sift.graph.service import AskService
    from sift.graph.threads import checkpoint_id

    async def history() -> list[dict]:
        async with open_checkpointer(settings) as saver:
            return await AskService(settings, engine, None, saver).history(checkpoint_id(engine, "default", tid))

    assert [t["question"] for t in asyncio.run(history())] == ["what does AuthService do?",
                                                                "and where is it tested?"]
