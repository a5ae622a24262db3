"""Ingest jobs through the API: a subprocess publishes a new generation while chat and search keep answering."""

from __future__ import annotations

import shutil
import time

import httpx
import pytest

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.locks import kb_lock
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES

BILLING = 'def charge_invoice(amount: int) -> int:\n    """Charge an invoice."""\n    return amount\n'


@pytest.fixture(scope="module")
def served(tmp_path_factory, local_embedder):
    base = tmp_path_factory.mktemp("jobs")
    repos = base / "repos"
    repo = repos / "tiny"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = ApiSettings(data_dir=base / "data", auth=False, allowed_roots=[repos])
    ingest(settings, repo, "tiny", embedder=local_embedder)
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        yield client, settings, repos, app
        app.state.jobs.wait(timeout=120)


def _wait(client: httpx.Client, job_id: int, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in ("succeeded", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish")


def _billing_hits(client: httpx.Client) -> list[str]:
    r = client.post("/v1/search", json={"kb": "tiny", "query": "charge_invoice", "channels": "bm25"})
    assert r.status_code == 200, r.text
    return [h["path"] for h in r.json()["hits"]]


def test_ingest_job_publishes_while_chat_keeps_answering(served):
    client, _, repos, _ = served
    (repos / "tiny" / "pkg" / "billing.py").write_text(BILLING)
    r = client.post("/v1/kbs/tiny/ingest", json={})
    assert r.status_code == 202, r.text
    job = r.json()
    # the server's job runner may already have claimed it by the time the 202 is written
    assert job["status"] in ("queued", "running") and job["kb"] == "tiny"
    seen, answers, readies = set(), 0, set()
    while (state := client.get(f"/v1/jobs/{job['id']}").json())["status"] not in ("succeeded", "failed"):
        seen.add(state["status"])
        readies.add(state["ready"])
        chat = client.post("/v1/chat", json={"kb": "tiny", "message": "where is the token validated?"})
        assert chat.status_code == 200, chat.text
        assert any(c["path"] == "pkg/auth.py" for c in chat.json()["citations"])
        answers += 1
        hits = _billing_hits(client)
        if client.get("/v1/kbs/tiny").json()["generation"] == 1:
            # read after the search: the job had not published yet, so the search was served by generation 1
            assert "pkg/billing.py" not in hits  # the previous generation keeps serving
    assert state["status"] == "succeeded", state
    assert answers >= 1 and seen <= {"queued", "running"}
    assert readies <= {None, "searchable"} and state["ready"] == "complete"
    assert state["generation"] == 2 and state["result"]["added"] == 1 and state["progress"]["files"] == 6
    assert state["started_at"] and state["finished_at"] and state["elapsed_s"] > 0
    assert client.get("/v1/kbs/tiny").json()["generation"] == 2
    deadline = time.monotonic() + 5  # the server re-reads the serving generation at most every half second
    while "pkg/billing.py" not in _billing_hits(client):
        assert time.monotonic() < deadline, "the new generation was not served"
        time.sleep(0.1)


def test_ingest_job_conflict_while_kb_is_locked(served):
    client, settings, _, _ = served
    with kb_lock(settings.data_dir, "default", "tiny"):
        r = client.post("/v1/kbs/tiny/ingest", json={})
    assert r.status_code == 409 and r.json()["error"] == "conflict"


def test_failed_job_is_marked_failed_and_kb_can_be_deleted(served):
    client, _, repos, app = served
    doomed = repos / "doomed"
    doomed.mkdir()
    (doomed / "a.py").write_text("x = 1\n")
    r = client.post("/v1/kbs", json={"name": "doomed", "path": str(doomed)})
    assert r.status_code == 202, r.text
    shutil.rmtree(doomed)  # the subprocess starts after this and finds no directory
    job = _wait(client, r.json()["job"]["id"])
    assert job["status"] == "failed" and "does not exist" in job["error"], job
    assert client.get("/v1/kbs/doomed").json()["generation"] == 0
    r = client.post("/v1/search", json={"kb": "doomed", "query": "x"})
    assert r.status_code == 503 and r.json()["error"] == "index_not_ready"
    assert client.delete("/v1/kbs/doomed").status_code == 204
    assert client.get("/v1/kbs/doomed").status_code == 404
    assert client.get(f"/v1/jobs/{job['id']}").status_code == 404
    assert [k["name"] for k in client.get("/v1/kbs").json()["kbs"]] == ["tiny"]
