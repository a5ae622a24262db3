"""`sift mcp` end to end with the MCP SDK's own client: over stdio (the README's command, a real subprocess) and
over streamable HTTP (`sift mcp --http`, a real server process with the API keys), against the ingested
``tests/fixtures/docql_repo``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from sift.api.auth import create_key
from sift.config import Settings
from sift.db import open_database
from sift.ingest.pipeline import ingest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docql_repo"
SIFT = Path(sys.executable).with_name("sift")
README = Path(__file__).resolve().parents[2] / "README.md"
TOOLS = {"search", "ask", "docql", "find_definition", "find_callers", "find_calls", "read_file", "list_kbs"}
SECRET = "def globex_only_secret():\n    return 'globex'\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, local_embedder: Any) -> dict[str, Any]:
    """kb ``shop`` (the fixture) of the default tenant, and kb ``vault`` of tenant ``globex``, with a key each."""
    base = tmp_path_factory.mktemp("mcp")
    settings = Settings(data_dir=base / "data")
    ingest(settings, FIXTURE, "shop", embedder=local_embedder)
    vault = base / "vault"
    vault.mkdir()
    (vault / "secret.py").write_text(SECRET)
    ingest(settings, vault, "vault", tenant="globex", embedder=local_embedder)
    engine = open_database(settings)
    keys = {t: create_key(engine, t)[1] for t in ("default", "globex")}
    engine.dispose()
    env = {**os.environ, "SIFT_DATA_DIR": str(settings.data_dir), "HF_HUB_OFFLINE": "1", "SIFT_TENANT": "default"}
    return {"dir": settings.data_dir, "env": env, "keys": keys}


def _readme_stdio_command() -> list[str]:
    """The stdio command the README gives Claude Code (after ``--``), with its kb name."""
    line = next(x for x in README.read_text().splitlines() if x.strip().startswith("claude mcp add sift"))
    return line.split(" -- ", 1)[1].split()


@asynccontextmanager
async def _stdio(env: dict[str, str], *args: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=str(SIFT), args=list(args), env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _call(session: ClientSession, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    return result.structured_content


def _file_lines(path: str, start: int, end: int) -> list[str]:
    return (FIXTURE / path).read_text().splitlines()[start - 1:end]


def test_stdio_readme_command_serves_every_tool(data: dict[str, Any]) -> None:
    command = _readme_stdio_command()
    assert command[:2] == ["sift", "mcp"] and "--kb" in command
    args = [*command[1:]]
    args[args.index("--kb") + 1] = "shop"  # the README's placeholder name, our fixture's kb

    async def main() -> None:
        async with _stdio(data["env"], *args) as session:
            tools = (await session.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for tool in tools:  # --kb fixes the knowledge base: no tool asks for one
                assert "kb" not in tool.input_schema.get("properties", {}), tool.name
                assert tool.description and tool.output_schema is not None, tool.name
            assert "caret" in next(t for t in tools if t.name == "docql").description

            found = await _call(session, "find_definition", name="validate_token")
            (item,) = found["files"]["src/shop/auth.py"]
            assert item["name"] == "validate_token" and (item["start_line"], item["end_line"]) == (12, 14)

            callers = await _call(session, "find_callers", name="validate_token")
            rows = [r for items in callers["files"].values() for r in items]
            assert any(r.get("caller", "").endswith("login") for r in rows), rows
            calls = await _call(session, "find_calls", name="login")
            assert any("validate_token" in (r.get("name") or "") for items in calls["files"].values() for r in items)

            hits = (await _call(session, "search", query="where is the auth token validated", k=5))["hits"]
            assert hits and hits[0]["path"] == "src/shop/auth.py"
            assert all(h["path"].startswith("docs/") for h in
                       (await _call(session, "search", query="token", path="docs/**"))["hits"])

            lines = await _call(session, "read_file", path="src/shop/auth.py", start_line=12, end_line=14)
            assert lines["lines"] == _file_lines("src/shop/auth.py", 12, 14)

            answer = await _call(session, "ask", question="where is the auth token validated?")
            assert answer["citations"] and answer["thread_id"] and answer["confidence"] in ("low", "medium", "high")
            for c in answer["citations"]:
                cited = await _call(session, "read_file", path=c["path"], start_line=c["start_line"],
                                    end_line=c["end_line"])
                assert cited["lines"] == _file_lines(c["path"], c["start_line"], c["end_line"])
            follow = await _call(session, "ask", question="and who calls it?", thread_id=answer["thread_id"])
            assert follow["thread_id"] == answer["thread_id"]

            toc = await _call(session, "docql", query="$.toc[?(@.level == 1)]")
            assert toc["total"] >= 1 and "docs/guide.md" in toc["files"]
            kbs = (await _call(session, "list_kbs"))["kbs"]
            assert [k["name"] for k in kbs] == ["shop"] and kbs[0]["files"] > 0

            text = await session.read_resource("sift://shop/src/shop/auth.py")
            assert text.contents[0].text == (FIXTURE / "src/shop/auth.py").read_text()
            tree = (await session.read_resource("sift://shop")).contents[0].text.splitlines()
            assert "src/shop/auth.py" in tree and "docs/guide.md" in tree
            prompt = await session.get_prompt("explain_codebase", {})
            assert "sift://shop" in prompt.messages[0].content.text

    anyio.run(main)


def test_stdio_errors_are_tool_errors_with_the_cli_messages(data: dict[str, Any]) -> None:
    bad = "$.code.class("
    cli = subprocess.run([str(SIFT), "docql", bad, "--kb", "shop"], env=data["env"], capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 1
    cli_message = cli.stderr.split("error: ", 1)[1].strip()

    async def main() -> None:
        async with _stdio(data["env"], "mcp") as session:
            tools = (await session.list_tools()).tools
            assert all("kb" in t.input_schema["required"] for t in tools if t.name != "list_kbs")
            result = await session.call_tool("docql", {"kb": "shop", "query": bad})
            assert result.is_error and "^" in _text(result) and cli_message in _text(result)
            cases = [
                ("search", {"kb": "nope", "query": "token"}, "knowledge base 'nope' does not exist"),
                ("read_file", {"kb": "shop", "path": "../../etc/passwd"}, "leaves the repository root"),
                ("ask", {"kb": "shop", "question": "   "}, "question is empty"),
                ("search", {"kb": "shop", "query": "   "}, "query is empty"),
                ("find_definition", {"kb": "vault", "name": "globex_only_secret"}, "does not exist"),
            ]
            for name, arguments, message in cases:
                result = await session.call_tool(name, arguments)
                assert result.is_error and message in _text(result), (name, _text(result))
            # the server is still up and answering after every error
            found = await _call(session, "find_definition", kb="shop", name="AuthService")
            assert "src/shop/auth.py" in found["files"]

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def http_url(data: dict[str, Any]) -> Iterator[str]:
    """`sift mcp --http --auth on` as a real process; its URL once it accepts connections."""
    port = _free_port()
    proc = subprocess.Popen([str(SIFT), "mcp", "--http", "--auth", "on", "--port", str(port)], env=data["env"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@asynccontextmanager
async def _http(url: str, key: str) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    async with client, streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def test_http_needs_a_key(http_url: str) -> None:
    r = httpx.post(http_url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "missing Authorization header" in r.json()["detail"]
    r = httpx.post(http_url, json={}, headers={"Authorization": "Bearer sk-sift-nope"})
    assert r.status_code == 401 and r.json()["detail"] == "unknown or revoked API key"


def test_http_tenants_see_only_their_own_kbs(data: dict[str, Any], http_url: str) -> None:
    async def main() -> None:
        async with _http(http_url, data["keys"]["default"]) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            assert [k["name"] for k in (await _call(session, "list_kbs"))["kbs"]] == ["shop"]
            found = await _call(session, "find_definition", kb="shop", name="validate_token")
            assert "src/shop/auth.py" in found["files"]
            hits = (await _call(session, "search", kb="shop", query="order total", k=3))["hits"]
            assert hits and all(h["path"].startswith(("src/", "docs/", "README")) for h in hits)
            for name, arguments in [("search", {"kb": "vault", "query": "globex secret"}),
                                    ("read_file", {"kb": "vault", "path": "secret.py"}),
                                    ("docql", {"kb": "vault", "query": '$.code.function("globex_only_secret")'})]:
                result = await session.call_tool(name, arguments)
                assert result.is_error and "knowledge base 'vault' does not exist" in _text(result), name
        async with _http(http_url, data["keys"]["globex"]) as session:
            assert [k["name"] for k in (await _call(session, "list_kbs"))["kbs"]] == ["vault"]
            lines = await _call(session, "read_file", kb="vault", path="secret.py")
            assert lines["lines"] == SECRET.splitlines()
            result = await session.call_tool("search", {"kb": "shop", "query": "token"})
            assert result.is_error and re.search(r"knowledge base 'shop' does not exist", _text(result))

    anyio.run(main)


def test_sift_serve_mounts_mcp_behind_the_same_keys(data: dict[str, Any], local_embedder: Any) -> None:
    from sift.api.app import create_app
    from sift.api.server import serve_in_thread
    from sift.api.settings import ApiSettings

    app = create_app(ApiSettings(data_dir=data["dir"], auth=True), embedder=local_embedder)

    async def main(url: str) -> None:
        async with _http(url, data["keys"]["globex"]) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            assert [k["name"] for k in (await _call(session, "list_kbs"))["kbs"]] == ["vault"]
            found = await _call(session, "find_definition", kb="vault", name="globex_only_secret")
            assert [i["start_line"] for i in found["files"]["secret.py"]] == [1]
            result = await session.call_tool("read_file", {"kb": "shop", "path": "src/shop/auth.py"})
            assert result.is_error and "knowledge base 'shop' does not exist" in _text(result)
        async with _http(url, data["keys"]["default"]) as session:
            hits = (await _call(session, "search", kb="shop", query="validate token", k=3))["hits"]
            assert hits[0]["path"] == "src/shop/auth.py"

    with serve_in_thread(app) as base:
        assert httpx.post(f"{base}/mcp", json={}).status_code == 401
        anyio.run(main, f"{base}/mcp")
