"""Failures of the machine, not of sift: a full disk, a damaged database or manifest.

Each is a user-facing error (exit 1 from the CLI, 503 from the API) saying what to do, never "internal error",
and an ingest job records the real cause. The disk fills for real: the ingest runs in a process whose files may
not grow past a limit (RLIMIT_FSIZE: the kernel refuses the write, SQLite reports its disk full).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.catalog import generation_dir, get_kb
from sift.cli import main
from sift.config import Settings
from sift.db import open_database
from sift.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
CLI = "import sys; from sift.cli import main; sys.exit(main())"


def _on_sqlite() -> None:
    """These faults are of the SQLite file in the data directory (it is what fills the disk, what is malformed or
    replaced); on a PostgreSQL database (the suite's second pass sets SIFT_DATABASE_URL) there is no such file."""
    if os.environ.get("SIFT_DATABASE_URL"):
        pytest.skip("a fault of the SQLite database file; this run keeps the database in PostgreSQL")


def _repo(path: Path, files: int, lines: int) -> Path:
    path.mkdir(parents=True)
    for i in range(files):
        body = "".join(f"def f{i}_{j}(value):\n    return value * {j}  # padding text {i} {j}\n\n" for j in range(lines))
        (path / f"m{i}.py").write_text(body)
    return path


def test_disk_full_mid_ingest_is_a_user_error_and_the_job_says_so(tmp_path):
    """The data directory is a 3 MB tmpfs (in a user and mount namespace of its own): the disk fills for real."""
    _on_sqlite()
    data = tmp_path / "data"
    data.mkdir()
    small, big = _repo(tmp_path / "small", 1, 2), _repo(tmp_path / "big", 300, 60)  # big: ~1.5 MB of text
    sift = f"{sys.executable} -c '{CLI}'"
    script = (f"mount -t tmpfs -o size=3m tmpfs {data} && "
              f"{sift} ingest {small} --kb small --no-index --data-dir {data} >/dev/null && "
              f"{{ {sift} ingest {big} --kb big --no-index --data-dir {data}; echo exit=$?; "
              f"{sift} kb show big --json --data-dir {data}; "
              f"{sift} kb show small --json --data-dir {data}; }}")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SIFT_INGEST_BATCH_SIZE": "20"}
    run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    out, err = run.stdout, run.stderr
    assert "exit=1" in out, (out[-2000:], err[-3000:])
    assert "disk is full" in err and "free disk space" in err, err[-3000:]
    assert "Traceback" not in err and "internal error" not in err, err[-3000:]
    shown, rest = [], out.split("exit=1", 1)[1].strip()
    while rest:  # the two `kb show --json` documents, one after the other
        doc, end = json.JSONDecoder().raw_decode(rest)
        shown.append(doc)
        rest = rest[end:].strip()
    job = shown[0]["last_job"]
    assert job["status"] == "failed" and "disk is full" in job["error"] and "SIGKILL" not in job["error"], job
    assert shown[1]["generation"] == 1  # what was served before still is


def test_a_read_only_data_directory_is_a_user_error(tmp_path):
    """The data directory is mounted read-only (a bind mount in a namespace of its own): the kernel refuses writes."""
    data = tmp_path / "data"
    data.mkdir()
    repo = _repo(tmp_path / "repo", 1, 2)
    script = (f"mount --bind {data} {data} && mount -o remount,bind,ro {data} && "
              f"{sys.executable} -c '{CLI}' ingest {repo} --kb kb --no-index --data-dir {data}")
    run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                         capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 1, run.stderr[-3000:]
    assert "permission" in run.stderr.lower() and "SIFT_DATA_DIR" in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_a_malformed_database_or_manifest_is_a_user_error(tmp_path, capsys, local_embedder):
    _on_sqlite()
    data = tmp_path / "data"
    settings = Settings(data_dir=data)
    ingest(settings, _repo(tmp_path / "repo", 2, 3), "kb", embedder=local_embedder)
    kb = get_kb(open_database(settings), "kb")
    manifest = generation_dir(settings.resolved_index_dir(), kb.id, kb.generation) / "manifest.json"
    manifest.write_text('{"version": 2, "model_id": ')
    assert main(["search", "f0_1", "--kb", "kb", "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert "manifest.json" in err and "sift ingest" in err and "internal error" not in err, err
    _damage(data)
    assert main(["kb", "list", "--json", "--data-dir", str(data)]) == 1
    err = capsys.readouterr().err
    assert "database file is damaged" in err and "restore sift.db" in err and "internal error" not in err, err


def _damage(data: Path) -> None:
    """sift.db overwritten with text, its WAL gone with it (as after a bad copy or a disk fault)."""
    (data / "sift.db").write_bytes(b"this is no database " * 4096)
    for suffix in ("-wal", "-shm"):
        (data / f"sift.db{suffix}").unlink(missing_ok=True)


def test_a_database_damaged_under_a_running_server_answers_503(tmp_path, local_embedder):
    _on_sqlite()
    settings = ApiSettings(data_dir=tmp_path / "data", auth=False)
    ingest(settings, _repo(tmp_path / "repo", 2, 3), "kb", embedder=local_embedder)
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/v1/kbs").status_code == 200
        app.state.engine.dispose()  # the next request opens the file afresh
        _damage(settings.data_dir)
        r = client.get("/v1/kbs")
        assert r.status_code == 503, r.text
        body = json.loads(r.text)
        assert body["error"] == "storage_damaged" and "restore sift.db" in body["detail"], body
