"""LimitedAskService: at most N graph runs at once, waiters served in arrival order, slots freed on close; the
JSON depth bound on request bodies."""

from __future__ import annotations

import anyio
import pytest

from sift.api.bodies import json_depth
from sift.api.limits import LimitedAskService


class _Recorder:
    """A service whose runs take a moment and record how many overlap."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.started: list[int] = []

    async def ask(self, n: int) -> int:
        self.started.append(n)
        self.running += 1
        self.peak = max(self.peak, self.running)
        await anyio.sleep(0.01)
        self.running -= 1
        return n * 10

    async def stream(self, n: int):  # noqa: ANN201
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            for i in range(3):
                await anyio.sleep(0.005)
                yield n, i
        finally:
            self.running -= 1

    async def history(self, thread_id: str) -> list[str]:
        return [thread_id]


@pytest.mark.anyio
async def test_runs_are_bounded_and_first_come_first_served():
    inner = _Recorder()
    svc = LimitedAskService(inner, 2)
    results: dict[int, int] = {}

    async def one(n: int) -> None:
        results[n] = await svc.ask(n)

    async with anyio.create_task_group() as tg:
        for n in range(8):
            tg.start_soon(one, n)
            await anyio.sleep(0)  # arrivals in order 0..7
    assert inner.peak == 2
    assert inner.started == list(range(8))
    assert results == {n: n * 10 for n in range(8)}
    assert await svc.history("t1") == ["t1"]  # everything else passes through


@pytest.mark.anyio
async def test_a_stream_holds_its_slot_until_closed():
    inner = _Recorder()
    svc = LimitedAskService(inner, 1)
    stream = svc.stream(1)
    assert await stream.__anext__() == (1, 0)
    assert svc.limiter.borrowed_tokens == 1
    await stream.aclose()  # a client that went away mid-stream
    assert svc.limiter.borrowed_tokens == 0 and inner.running == 0
    assert [item async for item in svc.stream(2)] == [(2, 0), (2, 1), (2, 2)]
    assert svc.limiter.borrowed_tokens == 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("body", "depth"),
    [
        (b"", 0),
        (b'{"kb": "x", "query": "y"}', 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'{"q": "[[[[{{{{ \\" [[[[ \\\\"}', 1),  # brackets inside strings, escaped quotes and backslashes
        (b"[" * 400 + b"]" * 400, 400),
        (b"[" * 100_000 + b"]" * 100_000, 401),  # counting stops past the limit
    ],
)
def test_json_depth_counts_nesting_outside_strings(body: bytes, depth: int) -> None:
    assert json_depth(body) == depth
