"""The chat stream's framing: ``id:`` lines, ``: keep-alive`` comments while a step is slow, and cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from sift.api.sse import KEEPALIVE, chat_events, with_keepalive
from sift.config import Settings
from sift.db import open_database
from sift.graph.threads import open_thread


class SlowService:
    """A chat service whose run is quiet for ``pause_s`` between its plan and its answer."""

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s
        self.closed = False

    async def stream(self, question: str, kb: str, **_: Any) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        try:
            yield "plan", {"question_type": "locate"}
            await asyncio.sleep(self.pause_s)
            yield "answer", {"text": "found [1]", "citations": [], "grounded": True}
            yield "done", {"thread_id": "t1"}
        finally:
            self.closed = True


def test_chat_events_send_ids_and_keep_alive_comments_during_a_slow_step(tmp_path) -> None:
    engine = open_database(Settings(data_dir=tmp_path))

    async def collect() -> list[Any]:
        thread = open_thread(engine, "default", "tiny", "t1", "where?")
        events = chat_events(SlowService(0.35), engine, tenant="default", kb="tiny", thread=thread,
                             question="where?", keepalive_s=0.05)
        return [m async for m in events]

    messages = asyncio.run(collect())
    wire = b"".join(m.encode() for m in messages).decode()
    kinds = ["keep-alive" if m is KEEPALIVE else m.event for m in messages]
    assert kinds[0] == "plan" and kinds[-2:] == ["answer", "done"]
    assert kinds.count("keep-alive") >= 3, kinds  # about one per 50 ms of the 350 ms pause
    assert [m.id for m in messages if m is not KEEPALIVE] == [1, 2, 3]
    assert ": keep-alive\r\n\r\n" in wire and "data: \r\n" not in wire  # a comment, not an empty event
    assert wire.startswith("id: 1\r\nevent: plan\r\n")


def test_with_keepalive_closing_early_closes_the_source() -> None:
    service = SlowService(30)

    async def first_two() -> list[Any]:
        items = []
        gen = with_keepalive(service.stream("q", "kb"), 0.05)
        async for item in gen:
            items.append(item)
            if len(items) == 2:
                break
        await gen.aclose()
        return items

    items = asyncio.run(first_two())
    assert items[0][0] == "plan" and items[1] is None  # then quiet: a keep-alive tick
    assert service.closed  # the run was cancelled, not left sleeping
