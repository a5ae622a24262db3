"""A cold ``sift search`` process ranks exactly as a warm server does: 20 queries, a new process each.

The CLI runs as the real console script (fresh process per query, ``--json``); the server is the real app under
uvicorn on 127.0.0.1, queried over HTTP at ``/v1/search``. Both read the same ingested fixture repository.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.ingest.pipeline import ingest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docql_repo"
SIFT = Path(sys.executable).with_name("sift")
QUERIES = [
    "where is the auth token validated",
    "validate_token",
    "AuthService",
    "how do I rotate the secret",
    "login with a token",
    "checkout an order",
    "order total",
    "constants",
    "shop guide introduction",
    "API reference",
    "bearer token shared secret",
    "PermissionError bad token",
    "hmac compare digest",
    "Orders & Checkout",
    "how often should secrets be rotated",
    "what does login return",
    "AuthService.rotate",
    "command line checkout",
    "configuration",
    "which functions call validate_token",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> Any:
    """The fixture repository as kb ``shop``, and a warm server over it."""
    settings = ApiSettings(data_dir=tmp_path_factory.mktemp("parity") / "data", auth=False)
    ingest(settings, FIXTURE, "shop", embedder=local_embedder)
    with serve_in_thread(create_app(settings, embedder=local_embedder)) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield settings, client


def _ranking(hits: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(h["rank"], h["path"], h["start_line"], h["end_line"], h["chunk_id"], h["type"], h["name"],
             tuple(h["channels"])) for h in hits]


@pytest.mark.parametrize("query", QUERIES)
def test_cli_cold_search_ranks_as_the_warm_server(served: Any, query: str) -> None:
    settings, client = served
    response = client.post("/v1/search", json={"kb": "shop", "query": query, "k": 10})
    assert response.status_code == 200, response.text
    server = response.json()["hits"]
    env = {**os.environ, "SIFT_DATA_DIR": str(settings.data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([str(SIFT), "search", query, "--kb", "shop", "-k", "10", "--json"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    cli = json.loads(out.stdout)["hits"]
    assert server
    assert _ranking(cli) == _ranking(server)
    # A score is exp(w · f) (retrievers/ranker.py), up to about 1e8: compared as w · f, to 1e-5, because the two
    # processes' float32 query vectors may differ in their last bits (BLAS sums in another order).
    for a, b in zip(cli, server, strict=True):
        assert math.log(a["score"]) == pytest.approx(math.log(b["score"]), abs=1e-5)
