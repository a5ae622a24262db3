"""The OpenAPI document as a contract: typed bodies, readable operation ids, real examples, the SSE stream,
the limits the server enforces, and Swagger UI served from the package (no CDN)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar.testing import TestClient

from sift.api.app import create_app
from sift.api.errors import HTTP_CODES, SIFT_CODES, ErrorBody
from sift.api.schemas import (
    KB_NAME,
    THREAD_ID,
    ChatRequest,
    DocqlRequest,
    IngestRequest,
    KbCreate,
    SearchRequest,
)
from sift.api.settings import ApiSettings
from sift.api.sse import EVENTS
from sift.graph.intake import MAX_QUESTION_CHARS

OPERATIONS = {
    "health", "ready", "list_kbs", "create_kb", "get_kb", "delete_kb", "ingest_kb", "get_job", "search", "docql",
    "get_file_lines", "chat", "chat_stream",
}
_SUBSCHEMA_LISTS = ("oneOf", "anyOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains")


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> TestClient:
    """The app without its lifespan: the schema and the docs pages need no database or model."""
    return TestClient(create_app(ApiSettings(data_dir=tmp_path_factory.mktemp("openapi"))))


@pytest.fixture(scope="module")
def doc(client: TestClient) -> dict[str, Any]:
    r = client.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, item in doc["paths"].items() for method, op in item.items()
            if isinstance(op, dict) and "responses" in op]


def _empty_schemas(schema: Any, where: str, doc: dict[str, Any], seen: set[str]) -> list[str]:
    """Places under ``schema`` (following $refs) where a schema is ``{}``, i.e. says nothing about the value."""
    if schema is True or schema == {}:
        return [where]
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return []
        seen.add(name)
        return _empty_schemas(doc["components"]["schemas"][name], name, doc, seen)
    found = []
    for key, sub in (schema.get("properties") or {}).items():
        found += _empty_schemas(sub, f"{where}.{key}", doc, seen)
    for key in _SUBSCHEMAS:
        if key in schema and schema[key] is not True:  # additionalProperties: true is an explicit choice
            found += _empty_schemas(schema[key], f"{where}.{key}", doc, seen)
    for key in _SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or []):
            found += _empty_schemas(sub, f"{where}.{key}[{i}]", doc, seen)
    return found


def test_openapi_types_every_response_body(doc) -> None:
    untyped = []
    for method, path, op in _operations(doc):
        for code, response in op["responses"].items():
            if code == "204":
                assert not response.get("content"), f"{method} {path} 204 has a body"
                continue
            content = response.get("content") or {}
            if code.startswith("2"):
                assert content, f"{method} {path} {code} declares no body"
            for media, body in content.items():
                assert "schema" in body, f"{method} {path} {code} {media} has no schema"
                untyped += [f"{method} {path} {code}: {w}" for w in _empty_schemas(body["schema"], "body", doc, set())]
    assert not untyped, untyped


def test_openapi_operation_ids_are_readable_and_unique(doc) -> None:
    ids = [op["operationId"] for _, _, op in _operations(doc)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", i) for i in ids), ids
    assert set(ids) >= OPERATIONS, sorted(set(ids))
    by_route = {f"{m} {p}": op["operationId"] for m, p, op in _operations(doc)}
    assert by_route["POST /v1/chat/stream"] == "chat_stream" and by_route["GET /v1/kbs"] == "list_kbs"


def test_openapi_chat_stream_is_an_event_stream_naming_every_event(doc) -> None:
    ok = doc["paths"]["/v1/chat/stream"]["post"]["responses"]["200"]
    assert list(ok["content"]) == ["text/event-stream"]
    for event in EVENTS:
        assert f"`{event}`" in ok["description"], event
    example = next(iter(ok["content"]["text/event-stream"]["examples"].values()))["value"]
    assert "id: 1\nevent: plan\n" in example and ": keep-alive" in example


def test_openapi_error_examples_are_real_error_bodies(doc) -> None:
    codes = {name for _, name in SIFT_CODES} | set(HTTP_CODES.values())
    seen = 0
    for method, path, op in _operations(doc):
        for code, response in op["responses"].items():
            if not code.startswith(("4", "5")):
                continue
            body_schema = response["content"]["application/json"]["schema"]
            if body_schema.get("$ref", "").rsplit("/", 1)[-1] != "ErrorBody":
                continue  # /ready answers 503 with its own body
            examples = response["content"]["application/json"].get("examples") or {}
            assert examples, f"{method} {path} {code} has no example"
            for example in examples.values():
                body = ErrorBody.model_validate(example["value"])
                assert body.error in codes and len(body.detail) > 20, body
                seen += 1
    assert seen >= 30


_LIMITS = ("pattern", "minLength", "maxLength", "minimum", "maximum")


def _limits(schema: dict[str, Any]) -> set[tuple[str, Any]]:
    """Every limit a property's schema states, at its top or on a member of its union."""
    parts = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    return {(k, float(p[k]) if isinstance(p[k], int | float) else p[k]) for p in parts for k in _LIMITS if k in p}


@pytest.mark.parametrize("model", [ChatRequest, SearchRequest, DocqlRequest, KbCreate, IngestRequest])
def test_openapi_declares_every_limit_the_request_models_enforce(doc, model) -> None:
    enforced = model.model_json_schema()["properties"]
    declared = doc["components"]["schemas"][model.__name__]["properties"]
    for name, schema in enforced.items():
        assert _limits(schema) <= _limits(declared[name]), (model.__name__, name, declared[name])


def test_openapi_declares_the_limits_the_server_enforces(doc) -> None:
    chat = doc["components"]["schemas"]["ChatRequest"]["properties"]
    assert chat["kb"]["pattern"] == KB_NAME
    assert chat["message"]["maxLength"] == MAX_QUESTION_CHARS and chat["message"]["minLength"] == 1
    assert chat["thread_id"]["pattern"] == THREAD_ID
    for path in ("/v1/kbs/{kb}", "/v1/kbs/{kb}/ingest", "/v1/kbs/{kb}/files/{file_path}"):
        for op in doc["paths"][path].values():
            if not isinstance(op, dict) or "parameters" not in op:
                continue
            kb = next(p for p in op["parameters"] if p["name"] == "kb")
            assert kb["schema"]["pattern"] == KB_NAME, path


def test_swagger_page_loads_only_files_the_app_serves(client: TestClient) -> None:
    for page in ("/schema", "/schema/swagger"):
        html = client.get(page).text
        assert "SwaggerUIBundle" in html
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
        assert urls and not [u for u in urls if "://" in u or u.startswith("//")], urls
        for url in urls:
            r = client.get(url)
            assert r.status_code == 200 and len(r.content) > 500, url
    js = client.get("/schema/static/swagger-ui/swagger-ui-bundle.js")
    assert "javascript" in js.headers["content-type"]


def test_openapi_answer_declares_its_confidence(doc) -> None:
    props = doc["components"]["schemas"]["Answer"]["properties"]
    assert props["confidence"]["enum"] == ["high", "medium", "low"]
    assert props["confidence_score"]["type"] == "number" and props["confidence_score"]["maximum"] == 1.0
