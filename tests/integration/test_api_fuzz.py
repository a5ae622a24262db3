"""Property-based fuzzing of the OpenAPI schema with schemathesis: no 5xx, every response matches the schema.

The suite runs a bounded budget per operation and mode (``EXAMPLES`` valid and as many invalid inputs);
``python bench/fuzz_api.py`` runs 200 of each per operation against the same kind of server.
"""

from __future__ import annotations

import os

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from sift.api.app import create_app
from sift.api.auth import create_key
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.db import open_database
from sift.ingest.pipeline import ingest
from tests.conftest import TINY_FILES

#: cases per operation; bench/fuzz_api.py sets 200
EXAMPLES = int(os.environ.get("SIFT_API_FUZZ_EXAMPLES", "15"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory, local_embedder):
    """A served app (auth on) whose tenant owns ``myproject``, the name the schema's examples use."""
    base = tmp_path_factory.mktemp("fuzz")
    repo = base / "repo"
    for rel, text in TINY_FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    cfg = ApiSettings(data_dir=base / "data", max_body_bytes=64 * 1024)
    ingest(cfg, repo, "myproject", tenant="fuzz", embedder=local_embedder)
    engine = open_database(cfg)
    key = create_key(engine, "fuzz")[1]
    engine.dispose()
    with serve_in_thread(create_app(cfg, embedder=local_embedder)) as url:
        yield url, {"Authorization": f"Bearer {key}"}


def _operations(url: str) -> list:
    schema = schemathesis.openapi.from_url(f"{url}/schema/openapi.json")
    # deleting the knowledge base would turn every later case into a 404; test_api_jobs covers it
    return [r.ok() for r in schema.get_all_operations() if r.ok().label != "DELETE /v1/kbs/{kb}"]


def _fuzz(operation, headers: dict[str, str], examples: int, mode: GenerationMode) -> tuple[int, list[str]]:
    """Run up to ``examples`` generated cases (valid or invalid per ``mode``) against one operation; returns
    (cases run, failures)."""
    failures: list[str] = []
    calls = [0]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
    def run(case) -> None:
        calls[0] += 1
        try:
            case.call_and_validate(headers=headers, checks=CHECKS, timeout=60)
        except Exception as exc:  # noqa: BLE001 - collect every kind of check failure
            failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:600]}")

    run()
    return calls[0], failures


def test_api_fuzz_no_5xx_and_responses_match_schema(fuzz_server):
    url, headers = fuzz_server
    operations = _operations(url)
    assert len(operations) >= 14
    failures: list[str] = []
    counts = {}
    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            counts[f"{op.label} {mode.value}"], found = _fuzz(op, headers, EXAMPLES, mode)
            failures.extend(found)
    print("cases per operation:", counts)
    assert not failures, "\n\n".join(dict.fromkeys(failures))
    with_inputs = [n for label, n in counts.items() if "/v1/" in label and "positive" in label]
    assert min(with_inputs) >= EXAMPLES // 2, counts


def test_api_fuzz_server_still_serves_after_fuzzing(fuzz_server):
    url, headers = fuzz_server
    r = httpx.post(f"{url}/v1/search", json={"kb": "myproject", "query": "validate token"}, headers=headers)
    assert r.status_code == 200 and r.json()["hits"]
