"""Threads over real HTTP: client-named ids, PUT, the id rule in the schema, tenants, and `sift threads`."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest
from sqlalchemy import select

from sift.api.app import create_app
from sift.api.auth import create_key
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.cli import main
from sift.db import open_database
from sift.db.api_tables import QaRecord, Thread
from sift.graph.checkpointer import open_checkpointer
from sift.graph.state import MAX_TURNS
from sift.graph.threads import THREAD_ID
from sift.graph.turns import TurnLock
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


@pytest.fixture(scope="module")
def api(tmp_path_factory, local_embedder):
    """A served app with kb ``tiny`` for tenants acme and globex, and a client for each."""
    base = tmp_path_factory.mktemp("threads")
    repo = base / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = ApiSettings(data_dir=base / "data", auth=True, turn_wait_s=5)
    for tenant in ("acme", "globex"):
        ingest(settings, repo, "tiny", tenant=tenant, embedder=local_embedder)
    engine = open_database(settings)
    keys = {t: create_key(engine, t)[1] for t in ("acme", "globex")}
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url:
        clients = {t: httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {k}"})
                   for t, k in keys.items()}
        yield {"url": url, "engine": engine, "settings": settings, **clients}
        for c in clients.values():
            c.close()
    engine.dispose()


def _chat(client: httpx.Client, message: str, thread_id: str | None = None) -> dict:
    body = {"kb": "tiny", "message": message, **({"thread_id": thread_id} if thread_id else {})}
    r = client.post("/v1/chat", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_client_named_thread_is_created_by_its_first_message_then_continued_and_listed(api):
    acme = api["acme"]
    first = _chat(acme, "what does AuthService do?", "slack-C024BE91L")
    assert first["thread_id"] == "slack-C024BE91L"
    second = _chat(acme, "and where is it tested?", "slack-C024BE91L")
    assert second["thread_id"] == "slack-C024BE91L"
    # the follow-up was resolved against the first turn: the checkpointed state is the thread's
    assert second["plan"]["question_type"] == "follow-up", second["plan"]
    thread = acme.get("/v1/threads/slack-C024BE91L").json()
    assert [m["question"] for m in thread["messages"]] == ["what does AuthService do?", "and where is it tested?"]
    assert thread["turns"] == 2 and thread["title"] == "what does AuthService do?"
    listed = acme.get("/v1/threads").json()["threads"]
    assert "slack-C024BE91L" in [t["thread_id"] for t in listed]


@pytest.mark.parametrize("thread_id", ["slack:C024BE91L", "550e8400-e29b-41d4-a716-446655440000",
                                       "user@example.com", "a" * 128, "_x.y+z=1"])
def test_ids_with_colons_uuids_and_slugs_are_accepted(api, thread_id):
    r = api["acme"].put(f"/v1/threads/{thread_id}", json={"kb": "tiny"})
    assert r.status_code in (200, 201), r.text
    assert api["acme"].get(f"/v1/threads/{thread_id}").json()["thread_id"] == thread_id


@pytest.mark.parametrize(("method", "path", "body"), [
    ("put", "/v1/threads/a%20b", {"kb": "tiny"}),
    ("put", "/v1/threads/" + "a" * 129, {"kb": "tiny"}),
    ("put", "/v1/threads/.hidden", {"kb": "tiny"}),
    ("get", "/v1/threads/tab%09id", None),
    ("delete", "/v1/threads/new%0Aline", None),
    ("post", "/v1/chat", {"kb": "tiny", "message": "hi", "thread_id": "a/b"}),
    ("post", "/v1/chat", {"kb": "tiny", "message": "hi", "thread_id": "a b"}),
    ("post", "/v1/chat", {"kb": "tiny", "message": "hi", "thread_id": ""}),
    ("post", "/v1/chat/stream", {"kb": "tiny", "message": "hi", "thread_id": "x\u0000y"}),
])
def test_bad_thread_ids_get_400_in_the_error_shape_and_change_nothing(api, method, path, body):
    with api["engine"].connect() as conn:
        before = conn.execute(select(Thread.thread_id)).scalars().all()
    r = api["acme"].request(method.upper(), path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_request" and r.json()["field"] == "thread_id", r.json()
    assert set(r.json()) <= {"error", "detail", "field", "position"}
    with api["engine"].connect() as conn:
        assert conn.execute(select(Thread.thread_id)).scalars().all() == before


def test_openapi_declares_the_thread_id_pattern_and_operation_ids(api):
    schema = httpx.get(api["url"] + "/schema/openapi.json").json()
    item = schema["paths"]["/v1/threads/{thread_id}"]
    assert {item[m]["operationId"] for m in ("get", "put", "delete")} == {"get_thread", "put_thread",
                                                                          "delete_thread"}
    assert schema["paths"]["/v1/threads"]["get"]["operationId"] == "list_threads"
    for method in ("get", "put", "delete"):
        (param,) = [p for p in item[method]["parameters"] if p["name"] == "thread_id"]
        assert param["schema"]["pattern"] == THREAD_ID
    assert set(item["put"]["responses"]) >= {"200", "201", "400", "404", "409"}
    chat_id = schema["components"]["schemas"]["ChatRequest"]["properties"]["thread_id"]
    assert THREAD_ID in json.dumps(chat_id), chat_id  # the body's thread_id carries the same rule


def test_put_thread_is_idempotent_and_keeps_metadata(api):
    acme = api["acme"]
    created = acme.put("/v1/threads/ticket-42", json={"kb": "tiny", "metadata": {"channel": "C024BE91L"}})
    assert created.status_code == 201, created.text
    assert created.json()["metadata"] == {"channel": "C024BE91L"} and created.json()["turns"] == 0
    again = acme.put("/v1/threads/ticket-42", json={"kb": "tiny"})
    assert again.status_code == 200 and again.json()["metadata"] == {"channel": "C024BE91L"}
    other_kb = acme.put("/v1/threads/ticket-42", json={"kb": "elsewhere"})
    assert other_kb.status_code == 404  # no such kb for this tenant: checked first
    answer = _chat(acme, "where is login defined?", "ticket-42")
    assert answer["thread_id"] == "ticket-42"
    thread = acme.get("/v1/threads/ticket-42").json()
    assert thread["turns"] == 1 and thread["title"] == "where is login defined?"
    assert thread["metadata"] == {"channel": "C024BE91L"}


def test_same_client_id_in_two_tenants_is_two_threads(api):
    acme, globex = api["acme"], api["globex"]
    _chat(acme, "what does AuthService do?", "shared-id")
    theirs = _chat(globex, "where is the guide?", "shared-id")
    assert theirs["plan"]["question_type"] != "follow-up"  # nothing of acme's turn reached globex's state
    mine = acme.get("/v1/threads/shared-id").json()
    other = globex.get("/v1/threads/shared-id").json()
    assert [m["question"] for m in mine["messages"]] == ["what does AuthService do?"]
    assert [m["question"] for m in other["messages"]] == ["where is the guide?"]
    with api["engine"].connect() as conn:
        keys = conn.execute(select(Thread.tenant, Thread.checkpoint_id).where(Thread.thread_id == "shared-id")).all()
    assert len(keys) == 2 and len({k for _, k in keys}) == 2
    # deleting one tenant's thread leaves the other's
    assert globex.delete("/v1/threads/shared-id").status_code == 204
    assert globex.get("/v1/threads/shared-id").status_code == 404
    assert acme.get("/v1/threads/shared-id").json()["turns"] == 1


def test_cli_thread_is_visible_over_rest_and_rest_thread_continues_in_the_cli(api, capsys, monkeypatch):
    if api["settings"].database_url:  # the CLI reads the database from the environment, as a user's shell sets it
        monkeypatch.setenv("SIFT_DATABASE_URL", api["settings"].database_url)
    data = ["--data-dir", str(api["settings"].data_dir), "--tenant", "acme"]
    assert main(["ask", "what does AuthService do?", "--kb", "tiny", "--thread", "t1", "--json", *data]) == 0
    assert json.loads(capsys.readouterr().out)["thread_id"] == "t1"
    acme = api["acme"]
    assert "t1" in [t["thread_id"] for t in acme.get("/v1/threads").json()["threads"]]
    follow = _chat(acme, "and where is it tested?", "t1")
    assert follow["plan"]["question_type"] == "follow-up", follow["plan"]  # the CLI's turn is in its state
    # the other way round: a thread started over REST goes on in the CLI
    _chat(acme, "where is login defined?", "rest-1")
    assert main(["ask", "and what does it return?", "--kb", "tiny", "--thread", "rest-1", "--json", *data]) == 0
    cli_answer = json.loads(capsys.readouterr().out)
    assert cli_answer["plan"]["question_type"] == "follow-up", cli_answer["plan"]
    thread = acme.get("/v1/threads/rest-1").json()
    assert [m["question"] for m in thread["messages"]] == ["where is login defined?", "and what does it return?"]
    with api["engine"].connect() as conn:
        records = conn.execute(select(QaRecord).where(QaRecord.thread_id == "t1").order_by(QaRecord.id)).all()
    assert [(r.tenant, r.question, r.status) for r in records] == [
        ("acme", "what does AuthService do?", "answered"), ("acme", "and where is it tested?", "answered")]
    assert records[0].answer and records[0].citations and records[0].timings["cli_ms"] > 0


def test_sift_threads_list_show_rm(api, capsys, monkeypatch):
    if api["settings"].database_url:  # the CLI reads the database from the environment, as a user's shell sets it
        monkeypatch.setenv("SIFT_DATABASE_URL", api["settings"].database_url)
    data = ["--data-dir", str(api["settings"].data_dir), "--tenant", "acme"]
    api["acme"].put("/v1/threads/for-cli", json={"kb": "tiny", "metadata": {"team": "auth"}})
    assert main(["threads", "list", "--json", *data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert "for-cli" in [t["thread_id"] for t in listed]
    assert main(["threads", "show", "for-cli", "--json", *data]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["metadata"] == {"team": "auth"} and shown["messages"] == []
    assert main(["threads", "show", "for-cli", "--tenant", "globex", "--data-dir", data[1]]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["threads", "rm", "for-cli", *data]) == 0
    assert api["acme"].get("/v1/threads/for-cli").status_code == 404
    assert main(["threads", "rm", "for-cli", *data]) == 1


def _checkpoint_key(api, thread_id: str) -> str:
    with api["engine"].connect() as conn:
        return conn.execute(select(Thread.checkpoint_id).where(Thread.tenant == "acme",
                                                               Thread.thread_id == thread_id)).scalar_one()


def _checkpointed_questions(api, thread_id: str) -> list[str]:
    """The questions in the thread's latest checkpoint: what the next turn will build on."""
    return _questions_under(api, _checkpoint_key(api, thread_id))


def _questions_under(api, key: str) -> list[str]:
    """The questions in the latest checkpoint under the checkpointer key ``key`` (none when it has no state)."""
    async def read() -> list[str]:
        async with open_checkpointer(api["settings"]) as saver:
            saved = await saver.aget_tuple({"configurable": {"thread_id": key, "checkpoint_ns": ""}})
        turns = saved.checkpoint["channel_values"]["turns"] if saved else []
        return [t["question"] if isinstance(t, dict) else t.question for t in turns]
    return asyncio.run(read())


def test_deleting_a_kb_deletes_the_checkpointed_state_of_its_threads(api, local_embedder, tmp_path):
    repo = tmp_path / "doomed"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    ingest(api["settings"], repo, "doomed", tenant="acme", embedder=local_embedder)
    r = api["acme"].post("/v1/chat", json={"kb": "doomed", "message": "where is login defined?",
                                          "thread_id": "on-doomed"})
    assert r.status_code == 200, r.text
    key = _checkpoint_key(api, "on-doomed")
    assert key != "on-doomed"  # the checkpointer key is the server's own, not the client's id
    assert _questions_under(api, key) == ["where is login defined?"]
    assert api["acme"].delete("/v1/kbs/doomed").status_code == 204
    assert api["acme"].get("/v1/threads/on-doomed").status_code == 404
    assert _questions_under(api, key) == []  # no state left behind under the deleted thread's key


def test_concurrent_turns_on_one_thread_all_reach_its_state(api):
    """8 clients x 3 turns on one thread id at once: turns run one at a time, so none is lost by a later write."""
    url, key = api["url"], api["acme"].headers["Authorization"]
    statuses: list[int] = []
    failures: list[str] = []

    def client(n: int) -> None:
        with httpx.Client(base_url=url, timeout=120, headers={"Authorization": key}) as c:
            for turn in range(3):
                body = {"kb": "tiny", "message": f"where is login defined? (client {n}, turn {turn})",
                        "thread_id": "crowded"}
                while True:
                    r = c.post("/v1/chat", json=body)
                    statuses.append(r.status_code)
                    if r.status_code != 409:
                        break
                    time.sleep(float(r.headers["Retry-After"]))  # busy thread: told when to come back
                if r.status_code != 200:
                    failures.append(r.text)

    clients = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in clients:
        t.start()
    for t in clients:
        t.join()
    assert failures == []
    assert set(statuses) <= {200, 409}
    asked = {f"where is login defined? (client {n}, turn {t})" for n in range(8) for t in range(3)}
    recorded = [m["question"] for m in api["acme"].get("/v1/threads/crowded").json()["messages"]]
    assert sorted(recorded) == sorted(asked)
    # Each turn built on the one recorded before it: the state holds the last MAX_TURNS, in recorded order.
    assert _checkpointed_questions(api, "crowded") == recorded[-MAX_TURNS:]


def test_a_turn_that_cannot_get_its_thread_is_409_with_retry_after_and_not_recorded(api):
    _chat(api["acme"], "where is login defined?", "held")
    lock = TurnLock(api["engine"], api["settings"].data_dir, "acme", _checkpoint_key(api, "held"))
    assert lock.try_acquire()  # another replica's turn, still running
    try:
        for path in ("/v1/chat", "/v1/chat/stream"):
            r = api["acme"].post(path, json={"kb": "tiny", "message": "and what does it return?", "thread_id": "held"})
            assert r.status_code == 409, r.text
            assert r.headers["Retry-After"] == "2" and r.json()["error"] == "conflict"
            assert "still answering another message" in r.json()["detail"]
    finally:
        lock.release()
    assert api["acme"].get("/v1/threads/held").json()["turns"] == 1
    follow = _chat(api["acme"], "and what does it return?", "held")
    assert follow["plan"]["question_type"] == "follow-up"
    assert _checkpointed_questions(api, "held") == ["where is login defined?", "and what does it return?"]
