"""`sift mcp` against the REST API: cold start, and search / ask latency over the same questions in one run.

Ingests click and attrs (the pinned sdists of ``tests/sources.py``) into ``bench/out/mcp`` once (reused later),
then:

- cold start: a fresh ``sift mcp`` process over stdio, from spawn to ``initialize`` + ``tools/list`` answered
  (the SDK's own client), ``--runs`` times, beside ``python -c pass`` and a bare ``import mcp.server.mcpserver``;
- warm latency: the first ``--questions`` questions of ``eval/sets/click.jsonl`` and ``attrs.jsonl``, each asked
  as a ``search`` (k 10) and an ``ask`` over one MCP stdio session and over REST (``sift serve``, POST
  ``/v1/search`` and ``/v1/chat``), the two interleaved question by question (which goes first alternates), so
  both see the same machine load. Prints p50 / p95 per call and MCP's p95 over REST's (target ≤ 1.10), and the
  cold start's median (target ≤ 1 s).

    python bench/mcp.py [--questions 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
# This file's own folder comes first on the path, and its name would hide the `mcp` package.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
from tests.sources import fetch_sdist  # noqa: E402

OUT = ROOT / "bench" / "out" / "mcp"
SIFT = Path(sys.executable).with_name("sift")
PROJECTS = ["click", "attrs"]


def prepare() -> Path:
    """The data directory with click and attrs ingested (once)."""
    data = OUT / "data"
    for name in PROJECTS:
        marker = data / f".{name}-complete"
        if not marker.exists():
            t0 = time.perf_counter()
            subprocess.run([str(SIFT), "ingest", str(fetch_sdist(name)), "--kb", name, "--json"], env=_env(data),
                           check=True, capture_output=True)
            print(f"ingested {name} in {time.perf_counter() - t0:.0f} s")
            marker.write_text("ok")
    return data


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "SIFT_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def questions(n: int) -> list[tuple[str, str]]:
    """(kb, question) pairs, alternating between the projects' sets, the first ``n``."""
    sets = [[(kb, json.loads(line)["query"]) for line in (ROOT / "eval" / "sets" / f"{kb}.jsonl").read_text().splitlines()
             if line.strip()] for kb in PROJECTS]
    mixed = [q for pair in zip(*sets, strict=False) for q in pair]
    rest = [q for s in sets for q in s[min(len(x) for x in sets):]]
    return (mixed + rest)[:n]


def _wall(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - t0


async def cold_start(env: dict[str, str]) -> float:
    """Seconds from spawning ``sift mcp`` to ``initialize`` and ``tools/list`` answered."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    t0 = time.perf_counter()
    params = StdioServerParameters(command=str(SIFT), args=["mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        elapsed = time.perf_counter() - t0
    assert len(tools) == 8, tools
    return elapsed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _timed(fn: Callable[[], Awaitable[Any]]) -> float:
    t0 = time.perf_counter()
    await fn()
    return (time.perf_counter() - t0) * 1000


async def warm(env: dict[str, str], pairs: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Per-call milliseconds of search and ask over MCP (stdio) and REST, interleaved question by question."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    port = _free_port()
    server = subprocess.Popen([str(SIFT), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    times: dict[str, list[float]] = {f"{t} {c}": [] for t in ("mcp", "rest") for c in ("search", "ask")}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=300) as rest:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if (await rest.get("/ready")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline and server.poll() is None, "sift serve did not start"
                await anyio.sleep(0.2)
            params = StdioServerParameters(command=str(SIFT), args=["mcp"], env=env)
            async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
                await mcp.initialize()

                async def mcp_call(tool: str, args: dict[str, Any]) -> None:
                    result = await mcp.call_tool(tool, args)
                    assert not result.is_error, result.content

                async def rest_call(path: str, body: dict[str, Any]) -> None:
                    r = await rest.post(path, json=body)
                    assert r.status_code == 200, r.text

                calls: dict[str, Callable[[str, str], Callable[[], Awaitable[None]]]] = {
                    "mcp search": lambda kb, q: lambda: mcp_call("search", {"kb": kb, "query": q, "k": 10}),
                    "rest search": lambda kb, q: lambda: rest_call("/v1/search", {"kb": kb, "query": q, "k": 10}),
                    "mcp ask": lambda kb, q: lambda: mcp_call("ask", {"kb": kb, "question": q}),
                    "rest ask": lambda kb, q: lambda: rest_call("/v1/chat", {"kb": kb, "message": q}),
                }
                for kb in PROJECTS:  # first use: MCP loads models and indexes here, REST already has
                    for name in calls:
                        await calls[name](kb, "where is the command line parsed?")()
                for i, (kb, q) in enumerate(pairs):
                    for kind in ("search", "ask"):
                        order = ["mcp", "rest"] if i % 2 == 0 else ["rest", "mcp"]
                        for transport in order:
                            name = f"{transport} {kind}"
                            times[name].append(await _timed(calls[name](kb, q)))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return times


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5, help="cold starts (median reported)")
    args = ap.parse_args()
    env = _env(prepare())
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    base = statistics.median(_wall([sys.executable, "-c", "pass"]) for _ in range(args.runs))
    sdk = statistics.median(_wall([sys.executable, "-c", "import mcp.server.mcpserver"]) for _ in range(args.runs))
    anyio.run(cold_start, env)  # bytecode and page cache warm, as for an agent's second start
    colds = [anyio.run(cold_start, env) for _ in range(args.runs)]
    cold = statistics.median(colds)
    print(f"cold start, spawn to initialize + tools/list: median {cold:.2f} s (min {min(colds):.2f}, "
          f"max {max(colds):.2f}; target ≤ 1 s: {'OK' if cold <= 1 else 'OVER'})")
    print(f"  beside: python -c pass {base:.2f} s, python -c 'import mcp.server.mcpserver' {sdk:.2f} s\n")
    pairs = questions(args.questions)
    times = anyio.run(warm, env, pairs)
    print(f"{len(pairs)} questions, warm, ms per call")
    print(f"{'call':<12} {'p50':>8} {'p95':>8}")
    for name, values in times.items():
        print(f"{name:<12} {_p(values, 50):8.1f} {_p(values, 95):8.1f}")
    for kind in ("search", "ask"):
        ratio = _p(times[f"mcp {kind}"], 95) / _p(times[f"rest {kind}"], 95)
        print(f"{kind}: MCP p95 / REST p95 = {ratio:.3f} (target ≤ 1.10: {'OK' if ratio <= 1.10 else 'OVER'})")


if __name__ == "__main__":
    main()
