"""Load test of the REST API on loopback: N concurrent clients for a bounded time against /v1/search and /v1/chat.

The server runs as its own process (``sift serve``) so client and server do not share a GIL. Prints throughput,
p50/p95/p99 latency and the error count per endpoint. ``--ingest`` starts an ingest job halfway through the chat
run (a changed file, so a new generation is published mid-run) and then checks that no request failed and that
every client's thread holds exactly the turns it asked for.

Targets on 2 cores: search p95 < 300 ms at 32 clients with zero errors; chat (extractive) p95 < 3 s.

``--fairness`` measures whether search load starves chat: ``--clients`` chat clients alone for ``--seconds``, then
the same chat clients with ``--search-clients`` search clients beside them for as long, in one run against one
server; it prints both chat lines, the search line, the ratio of the two chat medians (target: at most 2x) and
the machine's load average, and fails on any error or a ratio over 2.

``--replicas 2`` measures scale-out instead: a throwaway PostgreSQL cluster (tests/pg.py; binaries from
``$SIFT_PG_BIN`` or ``scripts/pg.sh``) holds the metadata, the kb is ingested once into it and a shared
``SIFT_INDEX_DIR``, and two ``sift serve`` processes (separate ``--data-dir``s, same database and index dir) run
on two loopback ports. Per endpoint the same total clients first load ONE replica (the baseline), then are split
half and half between the two (no proxy); the two/one throughput ratio is printed. Chat threads are re-read
through the other replica. The cluster, the servers and the shared index dir are removed at the end.

Usage: python bench/load.py [--clients 32] [--seconds 20] [--target search,chat] [--ingest] [--repo PATH]
                            [--replicas 2] [--fairness [--search-clients N]]
(default repo: the attrs sdist that tests/conftest.py downloads; its kb is built once into bench/out/load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # bench/ingest.py shadows `ingest`
sys.path.insert(0, str(ROOT))

PHRASES = [
    "how are validators composed", "where is the frozen attribute error raised", "define a class with slots",
    "convert a field value on init", "asdict recursion into collections", "what does evolve do",
    "field default factory", "how do I compare instances", "hash of an instance", "kw_only arguments",
]
# ``--queries mixed`` (default) adds every question of the attrs eval set: full sentences, 42 distinct in all.
QUESTIONS = [json.loads(line)["query"] for line in (ROOT / "eval" / "sets" / "attrs.jsonl").read_text().splitlines()
             if line.strip()]
QUERIES = PHRASES + QUESTIONS


@dataclass
class Stats:
    """Latencies (ms) and errors of one endpoint."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def line(self, name: str, seconds: float) -> str:
        """Throughput, percentiles and errors in one line."""
        lat = sorted(self.latencies)
        if not lat:
            return f"{name:<7} no successful requests, errors {len(self.errors)}"
        q = statistics.quantiles(lat, n=100, method="inclusive") if len(lat) > 1 else [lat[0]] * 99
        return (f"{name:<7} {len(lat) / seconds:7.1f} req/s  n={len(lat):<6} p50 {q[49]:7.1f} ms  "
                f"p95 {q[94]:7.1f} ms  p99 {q[98]:7.1f} ms  max {lat[-1]:7.1f} ms  errors {len(self.errors)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sift(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from sift.cli import main; sys.exit(main())", *args]


def prepare(repo: Path, data_dir: Path, kb: str, env: dict[str, str] | None = None,
            sift_data: Path | None = None) -> Path:
    """Copy ``repo`` under an allowed root and ingest it (incremental: a second run only re-checks hashes)."""
    roots = data_dir / "repos"
    copy = roots / kb
    if not copy.exists():
        shutil.copytree(repo, copy)
    t0 = time.perf_counter()
    subprocess.run(_sift("ingest", str(copy), "--kb", kb, "--data-dir", str(sift_data or data_dir / "data")),
                   check=True, env=env)
    print(f"ingest ready in {time.perf_counter() - t0:.1f}s")
    return copy


async def _client_loop(client: httpx.AsyncClient, endpoint: str, kb: str, deadline: float, stats: Stats,
                       turns: dict[str, int], rng: random.Random, channels: str = "all") -> None:
    thread_id = None
    while time.perf_counter() < deadline:
        query = rng.choice(QUERIES)
        if endpoint == "search":
            body = {"kb": kb, "query": query, "k": 10, "channels": channels}
        else:
            body = {"kb": kb, "message": query, **({"thread_id": thread_id} if thread_id else {})}
        t0 = time.perf_counter()
        try:
            r = await client.post(f"/v1/{endpoint}", json=body)
        except httpx.HTTPError as exc:
            stats.errors.append(f"{type(exc).__name__}: {exc}")
            continue
        ms = (time.perf_counter() - t0) * 1000
        if r.status_code != 200:
            stats.errors.append(f"{r.status_code}: {r.text[:200]}")
            continue
        stats.latencies.append(ms)
        if endpoint == "chat":
            thread_id = r.json()["thread_id"]
            turns[thread_id] = turns.get(thread_id, 0) + 1


async def run(url: str, endpoint: str, kb: str, clients: int, seconds: float, ingest_at: float | None,
              seed: int = 0, channels: str = "all") -> tuple[Stats, dict[str, int], dict | None]:
    """Drive ``clients`` concurrent loops for ``seconds``; optionally start an ingest after ``ingest_at`` s."""
    stats, turns = Stats(), {}
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        deadline = time.perf_counter() + seconds
        loops = [asyncio.create_task(_client_loop(client, endpoint, kb, deadline, stats, turns,
                                                  random.Random(seed + i), channels)) for i in range(clients)]
        job = None
        if ingest_at is not None:
            await asyncio.sleep(ingest_at)
            job = (await client.post(f"/v1/kbs/{kb}/ingest", json={})).json()
            print(f"ingest job {job.get('id')} started at t={ingest_at:.0f}s: {job.get('status')}")
        await asyncio.gather(*loops)
        if job is not None:
            while (job := (await client.get(f"/v1/jobs/{job['id']}")).json())["status"] in ("queued", "running"):
                await asyncio.sleep(0.5)
    return stats, turns, job


async def run_both(url: str, kb: str, chat_clients: int, search_clients: int, seconds: float,
                   channels: str = "all") -> tuple[Stats, dict[str, int], Stats]:
    """Chat and search clients at the same time; (chat stats, chat threads, search stats)."""
    (chat, turns, _), (search, _, _) = await asyncio.gather(
        run(url, "chat", kb, chat_clients, seconds, None, seed=0, channels=channels),
        run(url, "search", kb, search_clients, seconds, None, seed=1000, channels=channels))
    return chat, turns, search


def p50(stats: Stats) -> float:
    """The median latency in ms (nan without a successful request)."""
    return statistics.median(stats.latencies) if stats.latencies else float("nan")


def fairness(url: str, kb: str, args: argparse.Namespace) -> bool:
    """Chat alone, then chat beside search, in one run; True when it failed (errors, or chat p50 over 2x)."""
    _warm_up([url], kb, ["search", "chat"])
    load = os.getloadavg()
    t0 = time.perf_counter()
    alone, turns, _ = asyncio.run(run(url, "chat", kb, args.clients, args.seconds, None, channels=args.channels))
    print(alone.line("chat", time.perf_counter() - t0) + f"  [chat alone, {args.clients} clients]")
    t0 = time.perf_counter()
    chat, more, search = asyncio.run(run_both(url, kb, args.clients, args.search_clients, args.seconds,
                                              args.channels))
    elapsed = time.perf_counter() - t0
    print(chat.line("chat", elapsed) + f"  [with {args.search_clients} search clients]")
    print(search.line("search", elapsed) + f"  [beside {args.clients} chat clients]")
    ratio = p50(chat) / p50(alone)
    print(f"chat p50 beside search / alone: {ratio:.2f}x (target <= 2x); load average before "
          f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for err in sorted(set(alone.errors + chat.errors + search.errors))[:5]:
        print(f"  error: {err}")
    lost = check_threads(url, turns) + check_threads(url, more)
    print(f"  threads: {len(turns) + len(more)}, lost or inconsistent: {len(lost)}")
    return bool(alone.errors or chat.errors or search.errors or lost) or not ratio <= 2


def check_threads(url: str, turns: dict[str, int]) -> list[str]:
    """Every thread a client used holds exactly the answered turns it counted."""
    lost = []
    with httpx.Client(base_url=url, timeout=60) as c:
        for tid, n in turns.items():
            r = c.get(f"/v1/threads/{tid}")
            got = sum(m["status"] == "answered" for m in r.json().get("messages", [])) if r.status_code == 200 else -1
            if got != n:
                lost.append(f"thread {tid}: expected {n} turns, found {got}")
    return lost


def main(argv: list[str] | None = None) -> int:
    """Prepare a knowledge base, start the server, run the load, print the numbers."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=20.0, help="duration per endpoint")
    p.add_argument("--target", default="search,chat")
    p.add_argument("--ingest", action="store_true", help="publish a new generation during the chat run")
    p.add_argument("--repo", type=Path, default=None)
    p.add_argument("--out", type=Path, default=HERE / "out" / "load")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--channels", default="all", help="search channels: all, bm25, vector or smart")
    p.add_argument("--queries", choices=("mixed", "phrases"), default="mixed",
                   help="mixed: 10 short phrases + the 32 attrs eval questions; phrases: the 10 phrases only")
    p.add_argument("--fairness", action="store_true",
                   help="chat alone, then chat beside --search-clients search clients, in one run")
    p.add_argument("--search-clients", type=int, default=None, help="search clients beside chat (default --clients)")
    p.add_argument("--replicas", type=int, choices=(1, 2), default=1,
                   help="2: PostgreSQL + shared index dir, two servers vs one in the same run")
    args = p.parse_args(argv)
    if args.queries == "phrases":
        QUERIES[:] = PHRASES
    if args.replicas == 2 and (args.ingest or args.fairness):
        p.error("--ingest and --fairness are not combined with --replicas 2")
    if args.search_clients is None:
        args.search_clients = args.clients
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.repo is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from conftest import fetch_sdist

        args.repo = fetch_sdist("attrs")
    kb = "load"
    if args.replicas == 2:
        return replicas(args, kb)
    copy = prepare(args.repo, args.out, kb)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(_sift("serve", "--port", str(port), "--data-dir", str(args.out / "data"),
                                    "--allow-root", str(args.out / "repos"), "--workers", str(args.workers)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failed = False
    try:
        _wait_ready(url)
        if args.fairness:
            print(f"server pid {server.pid} on {url}; {args.clients} chat clients alone, then beside "
                  f"{args.search_clients} search clients, {args.seconds:.0f}s each")
            return 1 if fairness(url, kb, args) else 0
        print(f"server pid {server.pid} on {url}; {args.clients} clients, {args.seconds:.0f}s per endpoint")
        for endpoint in [t.strip() for t in args.target.split(",") if t.strip()]:
            ingest_at = args.seconds / 3 if (args.ingest and endpoint == "chat") else None
            if ingest_at is not None:
                (copy / "bench_marker.py").write_text(f"MARKER = {time.time()!r}\n")
            t0 = time.perf_counter()
            stats, turns, job = asyncio.run(run(url, endpoint, kb, args.clients, args.seconds, ingest_at,
                                                  channels=args.channels))
            print(stats.line(endpoint, time.perf_counter() - t0))
            for err in sorted(set(stats.errors))[:5]:
                print(f"  error: {err}")
            failed |= bool(stats.errors)
            if endpoint == "chat":
                lost = check_threads(url, turns)
                print(f"  threads: {len(turns)}, lost or inconsistent: {len(lost)}")
                failed |= bool(lost)
            if job is not None:
                print(f"  ingest job {job['id']}: {job['status']}, generation {job.get('generation')}, "
                      f"{job.get('elapsed_s')}s")
                failed |= job["status"] != "succeeded"
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 1 if failed else 0


def _serve(port: int, data_dir: Path, roots: Path, workers: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start one ``sift serve`` on 127.0.0.1:``port`` with its output in ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(_sift("serve", "--port", str(port), "--data-dir", str(data_dir), "--allow-root",
                                      str(roots), "--workers", str(workers)),
                                stdout=out, stderr=subprocess.STDOUT, env=env)


def _stop(proc: subprocess.Popen) -> None:
    """Terminate a server, killing it when it does not exit within 30 s."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def split(clients: int, parts: int) -> list[int]:
    """``clients`` spread over ``parts`` as evenly as possible (the first ones take the remainder)."""
    return [clients // parts + (i < clients % parts) for i in range(parts)]


async def run_split(urls: list[str], endpoint: str, kb: str, clients: int, seconds: float,
                    channels: str = "all") -> tuple[list[Stats], list[dict[str, int]]]:
    """The same load as :func:`run`, with the clients split between ``urls``; per-URL stats and threads."""
    seeds = [0, *[sum(split(clients, len(urls))[:i]) for i in range(1, len(urls))]]
    results = await asyncio.gather(*(run(url, endpoint, kb, n, seconds, None, seed=seed, channels=channels)
                                     for url, n, seed in zip(urls, split(clients, len(urls)), seeds, strict=True)
                                     if n > 0))
    return [r[0] for r in results], [r[1] for r in results]


def merged(parts: list[Stats]) -> Stats:
    """One Stats holding every part's latencies and errors."""
    return Stats([ms for s in parts for ms in s.latencies], [e for s in parts for e in s.errors])


def _warm_up(urls: list[str], kb: str, targets: list[str]) -> None:
    """One request per endpoint and replica, so neither replica pays its lazy loading inside a measurement."""
    for url in urls:
        with httpx.Client(base_url=url, timeout=120) as c:
            for endpoint in targets:
                body = {"kb": kb, "query": QUERIES[0], "k": 10} if endpoint == "search" else {
                    "kb": kb, "message": QUERIES[0]}
                r = c.post(f"/v1/{endpoint}", json=body)
                if r.status_code != 200:
                    raise RuntimeError(f"warm-up {endpoint} on {url}: {r.status_code} {r.text[:200]}")


def _measure(urls: list[str], endpoint: str, kb: str, args: argparse.Namespace, label: str) -> tuple[Stats, float, bool]:
    """Run one load over ``urls``, print the combined and per-replica lines; (stats, req/s, failed)."""
    t0 = time.perf_counter()
    parts, turns = asyncio.run(run_split(urls, endpoint, kb, args.clients, args.seconds, args.channels))
    elapsed = time.perf_counter() - t0
    stats = merged(parts)
    print(stats.line(endpoint, elapsed) + f"  [{label}]")
    if len(parts) > 1:
        for i, part in enumerate(parts):
            print("  " + part.line(f"r{i + 1}", elapsed))
    for err in sorted(set(stats.errors))[:5]:
        print(f"  error: {err}")
    failed = bool(stats.errors)
    if endpoint == "chat":  # read every thread back through the replica that did NOT serve it
        lost = [x for i, t in enumerate(turns) for x in check_threads(urls[(i + 1) % len(urls)], t)]
        print(f"  threads: {sum(map(len, turns))}, lost or inconsistent (read via the other replica): {len(lost)}")
        failed |= bool(lost)
    return stats, len(stats.latencies) / elapsed, failed


def replicas(args: argparse.Namespace, kb: str) -> int:
    """Two replicas on one throwaway PostgreSQL and a shared index dir vs one replica, in the same run."""
    from tests.pg import PgServer

    if not os.environ.get("SIFT_PG_BIN"):
        found = subprocess.run(["bash", str(ROOT / "scripts" / "pg.sh")], check=True, capture_output=True, text=True)
        os.environ["SIFT_PG_BIN"] = found.stdout.strip().splitlines()[-1]
    work = args.out / "replicas"
    shutil.rmtree(work, ignore_errors=True)  # a fresh database needs fresh generations
    work.mkdir(parents=True)
    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    pg = PgServer()
    servers: list[subprocess.Popen] = []
    failed = False
    try:
        pg.start()
        env = {**os.environ, "SIFT_DATABASE_URL": pg.create_database("sift_load"),
               "SIFT_INDEX_DIR": str(work / "indexes")}
        print(f"postgresql {pg.port} ({os.environ['SIFT_PG_BIN']}); shared index dir {work / 'indexes'}")
        prepare(args.repo, args.out, kb, env=env, sift_data=work / "ingest")
        urls = []
        for name in ("a", "b"):
            port = _free_port()
            servers.append(_serve(port, work / name, args.out / "repos", args.workers, env, work / f"{name}.log"))
            urls.append(f"http://127.0.0.1:{port}")
        for url in urls:
            _wait_ready(url)
        _warm_up(urls, kb, targets)
        print(f"replicas: pids {[s.pid for s in servers]} on {urls}; {args.clients} clients in total, "
              f"{args.seconds:.0f}s per run (one replica, then both, per endpoint)")
        ratios = {}
        for endpoint in targets:
            _, one, bad_one = _measure(urls[:1], endpoint, kb, args, "1 replica")
            _, two, bad_two = _measure(urls, endpoint, kb, args, f"2 replicas, {'+'.join(map(str, split(args.clients, 2)))} clients")
            ratios[endpoint] = two / one if one else float("nan")
            print(f"  {endpoint}: two/one throughput {ratios[endpoint]:.2f}x ({two:.1f} vs {one:.1f} req/s)")
            failed |= bad_one or bad_two
        print("two/one: " + ", ".join(f"{e} {r:.2f}x" for e, r in ratios.items()) + f" ({os.cpu_count()} cores)")
    finally:
        for server in servers:
            _stop(server)
        pg.stop()
        shutil.rmtree(work / "indexes", ignore_errors=True)
    return 1 if failed else 0


def _wait_ready(url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError("server did not become ready")


if __name__ == "__main__":
    sys.exit(main())
