"""Per-tenant ingest roots: a tenant with roots of its own ingests only under them; others use SIFT_ALLOWED_ROOTS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from sift.api.app import create_app
from sift.api.auth import create_key, ingest_roots, tenant_roots
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.errors import InvalidQuery


@pytest.fixture
def served(tmp_path, local_embedder):
    repos = tmp_path / "repos"
    for name in ("a", "b"):
        (repos / name).mkdir(parents=True)
        (repos / name / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    settings = ApiSettings(data_dir=tmp_path / "data", allowed_roots=[repos])
    engine = open_database(settings)
    keys = {"a": create_key(engine, "tenant-a", roots=[repos / "a"])[1],
            "b": create_key(engine, "tenant-b", roots=[repos / "b"])[1],
            "c": create_key(engine, "tenant-c")[1]}
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url:
        clients = {t: httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {k}"})
                   for t, k in keys.items()}
        yield clients, repos
        app.state.jobs.wait(timeout=120)
        for client in clients.values():
            client.close()


def _create(client: httpx.Client, name: str, path) -> httpx.Response:  # noqa: ANN001
    return client.post("/v1/kbs", json={"name": name, "path": str(path)})


def test_tenant_roots_confine_ingest_and_the_global_roots_stay_the_default(served):
    clients, repos = served
    # Tenant A may not reach B's repository through a common parent, nor B's repository itself.
    for path in (repos, repos / "b"):
        r = _create(clients["a"], "steal", path)
        assert r.status_code == 400 and r.json()["error"] == "outside_root", r.text
        assert str(repos / "a") in r.json()["detail"]
    assert _create(clients["a"], "mine", repos / "a").status_code == 202
    assert _create(clients["b"], "mine", repos / "a").status_code == 400
    assert _create(clients["b"], "mine", repos / "b").status_code == 202
    # A tenant without roots of its own keeps SIFT_ALLOWED_ROOTS.
    assert _create(clients["c"], "all", repos).status_code == 202
    r = clients["a"].post("/v1/kbs/mine/ingest", json={"path": str(repos / "b")})
    assert r.status_code == 400 and r.json()["error"] == "outside_root"


def test_keys_create_stores_roots_on_the_tenant(tmp_path, capsys):
    data = ["--data-dir", str(tmp_path / "data")]
    (tmp_path / "r1").mkdir()
    (tmp_path / "r2").mkdir()
    assert main(["keys", "create", "--tenant", "acme", "--root", str(tmp_path / "r1"), "--root",
                 str(tmp_path / "r2" / ".." / "r2"), "--json", *data]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["roots"] == [str(tmp_path / "r1"), str(tmp_path / "r2")]
    assert main(["keys", "create", "--tenant", "acme", "--root", str(tmp_path / "r1"), *data]) == 0  # no duplicate
    capsys.readouterr()
    assert main(["keys", "create", "--tenant", "acme", "--root", str(tmp_path / "missing"), *data]) == 1
    assert "not an existing directory" in capsys.readouterr().err
    engine = open_database(Settings(data_dir=tmp_path / "data"))
    assert tenant_roots(engine, "acme") == [tmp_path / "r1", tmp_path / "r2"]
    assert ingest_roots(engine, "other", [tmp_path]) == [tmp_path]
    assert main(["keys", "list", "--json", *data]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {tuple(k["roots"]) for k in listed} == {(str(tmp_path / "r1"), str(tmp_path / "r2"))}
    with pytest.raises(InvalidQuery):
        create_key(engine, "acme", roots=[tmp_path / "missing"])


CLI = "import sys; from sift.cli import main; sys.exit(main())"


def test_a_path_swapped_for_a_symlink_after_the_202_is_never_read(tmp_path, local_embedder):
    """The real race: the request is confined and answered 202; then, before any job reads it, the directory
    becomes a symlink to the server's ~/.ssh; then a real `sift worker` runs the job."""
    carol = tmp_path / "repos" / "carol"
    (carol / "sub").mkdir(parents=True)
    (carol / "sub" / "ok.py").write_text("def ok():\n    return 1\n")
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    data = tmp_path / "data"
    settings = ApiSettings(data_dir=data, allowed_roots=[tmp_path / "repos"], run_jobs=False)
    key = create_key(open_database(settings), "carol", roots=[carol])[1]
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60,
                                                   headers={"Authorization": f"Bearer {key}"}) as client:
        r = client.post("/v1/kbs", json={"name": "x", "path": str(carol / "sub")})
        assert r.status_code == 202, r.text
        job_id = r.json()["job"]["id"]
        (carol / "sub").rename(carol / "sub.before")
        (carol / "sub").symlink_to(ssh, target_is_directory=True)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        worker = subprocess.run([sys.executable, "-c", CLI, "worker", "--once", "--data-dir", str(data)],
                                capture_output=True, text=True, env=env, timeout=300,
                                cwd=Path(__file__).resolve().parents[2])
        assert worker.returncode == 0, worker.stderr[-2000:]
        job = client.get(f"/v1/jobs/{job_id}").json()
        assert job["status"] == "failed" and "outside the allowed roots" in job["error"], job
        leaked = client.get("/v1/kbs/x/files/id_rsa")
        assert leaked.status_code in (404, 503) and "PRIVATE" not in leaked.text, leaked.text
        hits = client.post("/v1/search", json={"kb": "x", "query": "OPENSSH PRIVATE KEY", "channels": "bm25"})
        assert "PRIVATE" not in hits.text
