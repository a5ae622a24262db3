"""Chat and search share the server fairly: searches run in their own threads with their own searcher, never on
the event loop or in chat's channel threads, and while a chat run is asked for they get half of their slots.

Timing is measured by ``bench/load.py --fairness``; this checks the arrangement that makes it hold.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest
from httpx_sse import connect_sse

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


@pytest.fixture(scope="module")
def served(tmp_path_factory, local_embedder):
    base = tmp_path_factory.mktemp("fair")
    repo = base / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = ApiSettings(data_dir=base / "data", auth=False, search_concurrency=4, chat_concurrency=4)
    ingest(settings, repo, "tiny", embedder=local_embedder)
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        yield app, client


def _search(client: httpx.Client) -> dict:
    r = client.post("/v1/search", json={"kb": "tiny", "query": "where is the token validated", "k": 5})
    assert r.status_code == 200, r.text
    return r.json()


def test_search_runs_in_its_own_threads_with_its_own_searcher(served):
    app, client = served
    assert any(h["path"] == "pkg/auth.py" for h in _search(client)["hits"])
    names = {t.name for t in threading.enumerate()}
    assert any(n.startswith("sift-search") for n in names), names
    chat_searcher = app.state.ask.service.searcher
    assert chat_searcher is not app.state.searcher and chat_searcher._pool is not app.state.searcher._pool
    assert chat_searcher.cache is app.state.searcher.cache  # one copy of the indexes


def test_searches_get_half_their_slots_while_a_chat_runs_and_all_after(served):
    app, client = served
    slots = app.state.search_slots
    assert (slots.limit, slots.shared, slots.limiter.total_tokens) == (4, 2, 4)
    with connect_sse(client, "POST", "/v1/chat/stream",
                     json={"kb": "tiny", "message": "where is login defined?"}) as source:
        events = source.iter_sse()
        first = next(events)  # the run holds its chat slot until the stream ends
        assert first.event != "error", first.data
        assert slots.chats == 1 and slots.limiter.total_tokens == 2
        assert _search(client)["hits"]  # searches still answer meanwhile, two at a time
        rest = [(e.event, json.loads(e.data)) for e in events]
    assert rest[-1][0] == "done"
    r = client.post("/v1/chat", json={"kb": "tiny", "message": "where is login defined?"})
    assert r.status_code == 200, r.text
    assert slots.chats == 0 and slots.limiter.total_tokens == 4 and slots.limiter.borrowed_tokens == 0
