"""The checkpointer a fresh data directory opens: its tables exist before the first write, however many open it at once."""

from __future__ import annotations

import asyncio
import threading

from sift.config import Settings
from sift.graph.checkpointer import open_checkpointer


async def _forget_and_count(settings: Settings, thread_id: str) -> int:
    async with open_checkpointer(settings) as saver:
        await saver.adelete_thread(thread_id)  # reads no table lazily: it fails when the tables were never made
        return len([c async for c in saver.alist(None)])


def test_a_fresh_checkpointer_can_forget_a_thread_before_any_write(tmp_path):
    # A batch question deletes its thread when it ends, also when it failed before the graph wrote anything.
    assert asyncio.run(_forget_and_count(Settings(data_dir=tmp_path / "data"), "never-written")) == 0


def test_checkpointers_opened_at_once_on_a_fresh_data_dir_all_work(tmp_path):
    # `sift eval --concurrency N` opens one checkpointer per question, each on a thread and event loop of its own.
    settings = Settings(data_dir=tmp_path / "data")
    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def one(n: int) -> None:
        start.wait()
        try:
            asyncio.run(_forget_and_count(settings, f"t{n}"))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
