"""The thread store on both databases: migration 0006 keeps old threads, and a CLI thread is a REST thread."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import httpx
import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import insert, select, text

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.cli import main
from sift.db import make_engine, migrations_dir, upgrade
from sift.db.api_tables import QaRecord, Thread
from sift.errors import Conflict
from sift.graph.threads import get_thread, open_thread, put_thread
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES


def _alembic(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def test_migration_0006_keeps_existing_threads_and_their_records(any_database: str) -> None:
    engine = make_engine(any_database)  # creates a SQLite file's folder
    command.upgrade(_alembic(any_database), "0005_generation_leases")

    with engine.begin() as conn:
        conn.execute(text("INSERT INTO threads (thread_id, tenant, kb, title, turns) "
                          "VALUES ('0123abcd', 'acme', 'tiny', 'old question', 1)"))
        conn.execute(text("INSERT INTO qa_records (tenant, kb, thread_id, question, status) "
                          "VALUES ('acme', 'tiny', '0123abcd', 'old question', 'answered')"))
    upgrade(any_database)
    with engine.connect() as conn:
        row = conn.execute(select(Thread)).one()
    # the old id is still the checkpointer key, so the thread's graph state is where it was
    assert (row.tenant, row.thread_id, row.checkpoint_id, row.turns) == ("acme", "0123abcd", "0123abcd", 1)
    assert [m["question"] for m in get_thread(engine, "acme", "0123abcd")["messages"]] == ["old question"]
    command.downgrade(_alembic(any_database), "0005_generation_leases")
    upgrade(any_database)
    assert get_thread(engine, "acme", "0123abcd")["turns"] == 1
    engine.dispose()


def test_thread_store_per_tenant_ids_conflicts_and_races(any_database: str) -> None:
    engine = make_engine(any_database)
    upgrade(any_database)
    a = open_thread(engine, "acme", "tiny", "slack:C1", "first")
    b = open_thread(engine, "globex", "tiny", "slack:C1", "other")
    assert a["checkpoint_id"] != b["checkpoint_id"]
    assert open_thread(engine, "acme", "tiny", "slack:C1", "again")["checkpoint_id"] == a["checkpoint_id"]
    with pytest.raises(Conflict):
        open_thread(engine, "acme", "docs", "slack:C1", "wrong kb")
    with pytest.raises(Conflict):
        put_thread(engine, "acme", "slack:C1", "docs")
    # many first messages to one new id at once: one thread, one checkpointer key
    keys: list[str] = []
    workers = [threading.Thread(target=lambda: keys.append(open_thread(engine, "acme", "tiny", "race", "q")
                                                            ["checkpoint_id"])) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(keys) == 8 and len(set(keys)) == 1
    with engine.begin() as conn:  # a record of another incarnation of the id is not shown
        conn.execute(insert(QaRecord).values(tenant="acme", kb="tiny", thread_id="race", checkpoint_id="gone",
                                             question="old", status="answered"))
    assert get_thread(engine, "acme", "race")["messages"] == []
    engine.dispose()


def test_cli_and_rest_share_threads(any_database: str, tmp_path: Path, local_embedder,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "tiny"
    for rel, content in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    settings = ApiSettings(data_dir=tmp_path / "data", auth=False)
    ingest(settings, repo, "tiny", embedder=local_embedder)
    data = ["--data-dir", str(settings.data_dir)]
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
            httpx.Client(base_url=url, timeout=120) as http:
        assert main(["ask", "what does AuthService do?", "--kb", "tiny", "--thread", "t1", "--json", *data]) == 0
        assert json.loads(capsys.readouterr().out)["thread_id"] == "t1"
        assert [t["thread_id"] for t in http.get("/v1/threads").json()["threads"]] == ["t1"]
        follow = http.post("/v1/chat", json={"kb": "tiny", "message": "and where is it tested?", "thread_id": "t1"})
        assert follow.status_code == 200 and follow.json()["plan"]["question_type"] == "follow-up", follow.text
        first = http.post("/v1/chat", json={"kb": "tiny", "message": "where is login defined?",
                                            "thread_id": "slack-C024BE91L"})
        assert first.status_code == 200, first.text
    assert main(["threads", "list", "--json", *data]) == 0
    assert {t["thread_id"]: t["turns"] for t in json.loads(capsys.readouterr().out)} == {"t1": 2,
                                                                                       "slack-C024BE91L": 1}
    assert main(["threads", "show", "t1", "--json", *data]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [m["question"] for m in shown["messages"]] == ["what does AuthService do?", "and where is it tested?"]
