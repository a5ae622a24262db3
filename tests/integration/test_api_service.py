"""The REST service over real HTTP: uvicorn on 127.0.0.1, real SQLite, FAISS, BM25 and MiniLM.

Two tenants each own a knowledge base named ``tiny``; the second one also has ``pkg/secret.py``.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from sift.api.app import create_app
from sift.api.auth import create_key, revoke_key
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.db import open_database
from sift.db.api_tables import ApiKey, QaRecord, Thread
from sift.db.tables import File, Generation, IngestJob, KnowledgeBase
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES

SECRET = "def other_tenant_secret_token():\n    return 'globex'\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(scope="module")
def api(tmp_path_factory, local_embedder):
    """A served app with kb ``tiny`` for tenants acme and globex, and a key for each."""
    base = tmp_path_factory.mktemp("api")
    repos = base / "repos"
    acme_repo = _write(repos / "acme", TINY_FILES)
    globex_repo = _write(repos / "globex", {**TINY_FILES, "pkg/secret.py": SECRET})
    settings = ApiSettings(data_dir=base / "data", allowed_roots=[repos], max_body_bytes=64 * 1024)
    ingest(settings, acme_repo, "tiny", tenant="acme", embedder=local_embedder)
    ingest(settings, globex_repo, "tiny", tenant="globex", embedder=local_embedder)
    engine = open_database(settings)
    keys = {t: create_key(engine, t)[1] for t in ("acme", "globex")}
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url:
        clients = {t: httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {k}"})
                   for t, k in keys.items()}
        yield {"url": url, "engine": engine, "settings": settings, "repos": repos, "keys": keys, **clients}
        for c in clients.values():
            c.close()
    engine.dispose()


def snapshot(engine) -> tuple:
    """Row counts and the newest update of every table the API writes."""
    with engine.connect() as conn:
        counts = tuple(conn.execute(select(func.count()).select_from(t)).scalar()
                       for t in (KnowledgeBase, Generation, File, IngestJob, Thread, QaRecord, ApiKey))
        stamp = conn.execute(select(func.max(KnowledgeBase.updated_at))).scalar()
    return (*counts, stamp)


def test_health_and_ready_need_no_key(api):
    with httpx.Client(base_url=api["url"]) as anon:
        assert anon.get("/health").json() == {"status": "ok"}
        ready = anon.get("/ready")
        forged = anon.get("/ready", headers={"Authorization": "Bearer sift_not_a_key"})
    # Without a key: ready or not, nothing about what is loaded for whom.
    assert ready.status_code == 200 and ready.json() == {"status": "ready"}
    assert forged.status_code == 200 and forged.json() == {"status": "ready"}
    detailed = api["acme"].get("/ready").json()
    assert detailed["status"] == "ready" and detailed["indexes_loaded"] == 2 and detailed["database"] is True


def test_openapi_schema_lists_every_endpoint(api):
    paths = httpx.get(api["url"] + "/schema/openapi.json").json()["paths"]
    for path in ("/v1/chat", "/v1/chat/stream", "/v1/threads", "/v1/threads/{thread_id}", "/v1/kbs",
                 "/v1/kbs/{kb}", "/v1/kbs/{kb}/ingest", "/v1/jobs/{job_id}", "/v1/search", "/v1/docql",
                 "/v1/kbs/{kb}/files/{file_path}", "/health", "/ready"):
        assert path in paths, path


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ({}, "missing Authorization header"),
        ({"Authorization": "Basic abc"}, "must be `Bearer <key>`"),
        ({"Authorization": "Bearer"}, "must be `Bearer <key>`"),
        ({"Authorization": "Bearer sk-sift-not-a-key"}, "unknown or revoked"),
    ],
)
def test_auth_rejects_missing_or_unknown_keys(api, headers, detail):
    r = httpx.get(api["url"] + "/v1/kbs", headers=headers)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert r.json()["error"] == "unauthorized" and detail in r.json()["detail"]


def test_auth_revoked_key_stops_working(api):
    key_id, key = create_key(api["engine"], "acme", "temp")
    client = httpx.Client(base_url=api["url"], headers={"Authorization": f"Bearer {key}"})
    assert client.get("/v1/kbs").status_code == 200
    revoke_key(api["engine"], key_id)
    assert client.get("/v1/kbs").status_code == 401


def test_kbs_list_shows_only_own(api):
    for tenant in ("acme", "globex"):
        kbs = api[tenant].get("/v1/kbs").json()["kbs"]
        assert [(k["name"], k["tenant"]) for k in kbs] == [("tiny", tenant)]
        assert kbs[0]["generation"] == 1 and kbs[0]["files"] == (5 if tenant == "acme" else 6)


def test_kb_show_has_generations_and_counts(api):
    kb = api["acme"].get("/v1/kbs/tiny").json()
    assert kb["generations"][0]["status"] == "published" and kb["chunks"] > 0
    assert kb["last_job"]["status"] == "succeeded"


def test_search_returns_hits_grouped_by_file(api):
    r = api["acme"].post("/v1/search", json={"kb": "tiny", "query": "where is the token validated", "k": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["type"] == "search_result" and "pkg/auth.py" in body["files"]
    assert any(h["name"] == "AuthService.validate_token" for h in body["hits"][:3])


def test_concurrent_searches_queue_and_all_answer_the_same(api):
    """More searches than ``search_concurrency`` at once: the rest wait their turn, none fails or differs."""
    from concurrent.futures import ThreadPoolExecutor

    assert api["settings"].search_concurrency < 16
    body = {"kb": "tiny", "query": "where is the token validated", "k": 5}
    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda _: api["acme"].post("/v1/search", json=body), range(32)))
    assert {r.status_code for r in responses} == {200}
    hits = {tuple((h["path"], h["start_line"], h["end_line"]) for h in r.json()["hits"]) for r in responses}
    assert len(hits) == 1


def test_startup_moves_loaded_objects_out_of_the_collector_s_way(api):
    import gc

    assert gc.get_freeze_count() > 100_000  # the model, vocabularies and chunk tables are frozen after warm-up


@pytest.mark.parametrize("channels", ["bm25", ["bm25", "smart"], "vector"])
def test_search_channels_and_filters(api, channels):
    r = api["acme"].post("/v1/search", json={"kb": "tiny", "query": "token", "channels": channels,
                                            "path_glob": "docs/**", "k": 3})
    assert r.status_code == 200, r.text
    assert all(h["path"].startswith("docs/") for h in r.json()["hits"])


def test_docql_finds_the_class(api):
    r = api["acme"].post("/v1/docql", json={"kb": "tiny", "query": '$.code.class("AuthService")'})
    assert r.status_code == 200, r.text
    (item,) = r.json()["files"]["pkg/auth.py"]
    assert (item["name"], item["start_line"], item["end_line"]) == ("AuthService", 6, 14)


def test_file_lines_slice(api):
    r = api["acme"].get("/v1/kbs/tiny/files/pkg/auth.py", params={"start_line": 6, "end_line": 7})
    assert r.status_code == 200, r.text
    assert r.json()["lines"] == ["class AuthService:", '    """Validates bearer tokens against a shared secret."""']
    assert r.json()["total_lines"] == 21


BAD_INPUTS = [
    # (method, path, kwargs, status, error, field, position)
    ("post", "/v1/search", {"content": b'{"kb": "tiny", "query": '}, 400, "invalid_request", None, None),
    ("post", "/v1/search", {"content": b"[1, 2]"}, 400, "invalid_request", None, None),
    # 30,000 nested arrays (60 KB) would make the decoder recurse past Python's limit: refused before decoding.
    ("post", "/v1/search", {"content": b'{"kb": "tiny", "query": "x", "k": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"},
     400, "invalid_request", None, None),
    ("put", "/v1/threads/deep", {"content": b'{"kb": "tiny", "metadata": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001},
     400, "invalid_request", None, None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "x", "k": "many"}}, 400, "invalid_request", "k", None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "x", "k": 0}}, 400, "invalid_request", "k", None),
    ("post", "/v1/search", {"json": {"kb": "tiny"}}, 400, "invalid_request", "query", None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "x", "extra": 1}}, 400, "invalid_request", "extra",
     None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "x", "channels": "grep"}}, 400, "invalid_request",
     "channels", None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "   "}}, 400, "invalid_query", "query", None),
    ("post", "/v1/search", {"json": {"kb": "nope", "query": "x"}}, 404, "not_found", None, None),
    ("post", "/v1/search", {"json": {"kb": "tiny", "query": "x" * 70_000}}, 413, "body_too_large", None, None),
    ("post", "/v1/docql", {"json": {"kb": "tiny", "query": '$.code.class("AuthService"'}}, 400, "invalid_query",
     None, 27),
    ("post", "/v1/docql", {"json": {"kb": "tiny", "query": "$.nothing"}}, 400, "invalid_query", None, 3),
    ("post", "/v1/docql", {"json": {"kb": "nope", "query": "$.toc"}}, 404, "not_found", None, None),
    ("get", "/v1/kbs/tiny/files/pkg/%2E%2E/%2E%2E/etc/passwd", {}, 400, "outside_root", "path", None),
    ("get", "/v1/kbs/tiny/files/pkg%2F..%2F..%2Fetc%2Fpasswd", {}, 400, "outside_root", "path", None),
    ("get", "/v1/kbs/tiny/files/%2Fetc%2Fpasswd", {}, 404, "not_found", None, None),
    ("get", "/v1/kbs/tiny/files/pkg/missing.py", {}, 404, "not_found", None, None),
    ("get", "/v1/kbs/tiny/files/pkg/auth.py?start_line=0", {}, 400, "invalid_request", "start_line", None),
    ("get", "/v1/kbs/tiny/files/pkg/auth.py?start_line=9&end_line=3", {}, 400, "invalid_query", "end_line", None),
    ("get", "/v1/kbs/nope", {}, 404, "not_found", None, None),
    ("delete", "/v1/kbs/nope", {}, 404, "not_found", None, None),
    ("get", "/v1/jobs/999999", {}, 404, "not_found", "job_id", None),
    ("get", "/v1/jobs/abc", {}, 404, "not_found", None, None),
    ("get", "/v1/threads/0123456789abcdef0123456789abcdef", {}, 404, "not_found", "thread_id", None),
    ("delete", "/v1/threads/0123456789abcdef0123456789abcdef", {}, 404, "not_found", "thread_id", None),
    ("post", "/v1/kbs", {"json": {"name": "new", "path": "/etc"}}, 400, "outside_root", "path", None),
    ("post", "/v1/kbs", {"json": {"name": "new", "path": "relative/dir"}}, 400, "outside_root", "path", None),
    ("post", "/v1/kbs", {"json": {"name": "new", "path": "{repos}/acme/../../.."}}, 400, "outside_root", "path",
     None),
    ("post", "/v1/kbs", {"json": {"name": "new", "path": "{repos}/missing"}}, 400, "outside_root", "path", None),
    ("post", "/v1/kbs", {"json": {"name": "bad name!", "path": "{repos}/acme"}}, 400, "invalid_request", "name",
     None),
    ("post", "/v1/kbs", {"json": {"name": "tiny", "path": "{repos}/acme"}}, 409, "conflict", "name", None),
    ("post", "/v1/kbs/tiny/ingest", {"json": {"path": "/tmp"}}, 400, "outside_root", "path", None),
    ("post", "/v1/kbs/nope/ingest", {"json": {}}, 404, "not_found", None, None),
    ("post", "/v1/chat", {"json": {"kb": "tiny", "message": ""}}, 400, "invalid_request", "message", None),
    ("post", "/v1/chat", {"json": {"kb": "tiny", "message": " \n\t "}}, 400, "invalid_request", "message", None),
    ("post", "/v1/chat", {"json": {"kb": "tiny", "message": "x" * 2001}}, 400, "invalid_request", "message", None),
    ("post", "/v1/chat/stream", {"json": {"kb": "tiny", "message": "   "}}, 400, "invalid_request", "message",
     None),
    ("post", "/v1/chat", {"json": {"kb": "tiny", "message": "hi", "thread_id": "../x"}}, 400, "invalid_request",
     "thread_id", None),
    ("put", "/v1/search", {"json": {}}, 405, "method_not_allowed", None, None),
    ("get", "/v1/nothing-here", {}, 404, "not_found", None, None),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "error", "field", "position"), BAD_INPUTS,
                         ids=[f"{m} {p} {s}" for m, p, _, s, *_ in BAD_INPUTS])
def test_bad_input_gets_clear_4xx_and_changes_nothing(api, method, path, kwargs, status, error, field, position):
    if "json" in kwargs and "{repos}" in str(kwargs["json"].get("path", "")):
        kwargs = {"json": {**kwargs["json"], "path": kwargs["json"]["path"].format(repos=api["repos"])}}
    if "content" in kwargs:
        kwargs = {**kwargs, "headers": {"content-type": "application/json"}}
    before = snapshot(api["engine"])
    r = api["acme"].request(method.upper(), path, **kwargs)
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"] == error and body["detail"], body
    assert body.get("field") == field
    assert body.get("position") == position
    assert set(body) <= {"error", "detail", "field", "position"}
    assert snapshot(api["engine"]) == before


def _other_tenant_ids(api) -> dict[str, str]:
    """A thread and a job of globex's, made through the API or the database."""
    from sift.graph.threads import open_thread

    thread = open_thread(api["engine"], "globex", "tiny", None, "a globex question")["thread_id"]
    with api["engine"].connect() as conn:
        job = conn.execute(select(IngestJob.id).where(IngestJob.tenant == "globex")).scalar()
    return {"thread": thread, "job": str(job)}


ISOLATION = [
    ("get", "/v1/kbs/tiny", None),
    ("get", "/v1/jobs/{job}", None),
    ("get", "/v1/threads/{thread}", None),
    ("delete", "/v1/threads/{thread}", None),
    ("post", "/v1/chat", {"kb": "tiny", "message": "what is the secret?", "thread_id": "{thread}"}),
    ("post", "/v1/chat/stream", {"kb": "tiny", "message": "what is the secret?", "thread_id": "{thread}"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ISOLATION, ids=[f"{m} {p}" for m, p, _ in ISOLATION])
def test_tenant_isolation_other_ids_are_404(api, method, path, body):
    ids = _other_tenant_ids(api)
    nobody = httpx.Client(base_url=api["url"], headers={"Authorization": f"Bearer {create_key(api['engine'], 'initech')[1]}"})
    url = path.format(**ids)
    if body is not None:
        body = {k: v.format(**ids) for k, v in body.items()}
    before = snapshot(api["engine"])
    r = nobody.request(method.upper(), url, json=body)
    assert r.status_code == 404, r.text
    assert "globex" not in r.text and "secret" not in r.json()["detail"]
    assert snapshot(api["engine"]) == before
    # globex itself still sees its resources
    if method == "get":
        assert api["globex"].get(url).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "mine_status"),
    [
        ("post", "/v1/search", {"kb": "tiny", "query": "other tenant secret token", "k": 20}, 200),
        ("post", "/v1/docql", {"kb": "tiny", "query": '$.code.function("other_tenant_secret_token")'}, 200),
        ("get", "/v1/kbs/tiny/files/pkg/secret.py", None, 404),
    ],
)
def test_tenant_isolation_same_kb_name_never_leaks(api, method, path, body, mine_status):
    mine = api["acme"].request(method.upper(), path, json=body)
    theirs = api["globex"].request(method.upper(), path, json=body)
    assert theirs.status_code == 200
    assert "pkg/secret.py" in theirs.json().get("files", {}) or theirs.json().get("path") == "pkg/secret.py"
    assert mine.status_code == mine_status
    assert "pkg/secret.py" not in mine.json().get("files", {})
    assert "globex" not in mine.text and "return 'globex'" not in mine.text


def test_tenant_isolation_unknown_tenant_sees_nothing(api):
    nobody = httpx.Client(base_url=api["url"], headers={"Authorization": f"Bearer {create_key(api['engine'], 'initech')[1]}"})
    assert nobody.get("/v1/kbs").json() == {"kbs": []}
    assert nobody.get("/v1/threads").json() == {"threads": []}
    for method, path, body in [("post", "/v1/search", {"kb": "tiny", "query": "token"}),
                               ("post", "/v1/docql", {"kb": "tiny", "query": "$.toc"}),
                               ("get", "/v1/kbs/tiny/files/pkg/auth.py", None),
                               ("delete", "/v1/kbs/tiny", None),
                               ("post", "/v1/kbs/tiny/ingest", {})]:
        r = nobody.request(method.upper(), path, json=body)
        assert r.status_code == 404, (path, r.text)


def test_body_limit_applies_before_parsing(api):
    r = api["acme"].post("/v1/docql", content=b"{" + b" " * 100_000, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"] == "body_too_large"
