"""A turn's streamed pieces on the way to the event streams (issue 34): the piece a reply comes
in goes to each stream in the same write as the reply stored right after it, never after it,
and a piece the turn ends on (a turn given up) still reaches every stream."""

from __future__ import annotations

import asyncio
from typing import Any

from supportdesk.channels.hub import EventStream
from supportdesk.engine.protocol import Answer, StepRequest, TextDelta
from tests.serve_harness import repo_desk, serving


class OnePiece:
    """Says its reply as one streamed piece, then answers with it; from its step `fail_from` on,
    it says a piece and then never answers (the turn's time runs out)."""

    name = "one-piece"

    def __init__(self, fail_from: int | None = None):
        self.fail_from = fail_from
        self.steps = 0

    async def stream(self, request: StepRequest) -> Any:
        self.steps += 1
        yield TextDelta("Here is your answer.")
        if self.fail_from is not None and self.steps >= self.fail_from:
            await asyncio.Event().wait()
        yield Answer("Here is your answer.")

    async def aclose(self) -> None:
        pass


async def _batches(stream: EventStream, until: Any) -> list[list[Any]]:
    seen: list[list[Any]] = []
    async for batch in stream:
        seen.append(batch)
        if until(batch):
            return seen
    raise AssertionError(f"the stream ended first: {seen}")


def _replied(batch: list[Any]) -> bool:
    return any(e.type == "message" and e.data["from"] == "agent" for e in batch)


async def test_a_reply_and_its_piece_reach_a_stream_in_one_write_piece_first(tmp_path):
    async with serving(tmp_path / "desk.db", repo_desk()) as served:
        served.desk.runner.provider = OnePiece()
        conversations = served.conversations
        session_id, _ = await conversations.create()
        streams = [await conversations.hub.stream(session_id, 0) for _ in range(3)]
        try:
            # The first reply read off every stream: each now waits live on its queue, as a
            # served stream does between messages.
            await conversations.post(session_id, "hello, where is my invoice?")
            for stream in streams:
                await asyncio.wait_for(_batches(stream, _replied), 20)
            reading = [asyncio.create_task(_batches(stream, _replied)) for stream in streams]
            await conversations.post(session_id, "and my plan?")
            for batches in await asyncio.wait_for(asyncio.gather(*reading), 20):
                last = [(e.type, e.data["text"]) for e in batches[-1]]
                # The piece and the stored reply: one batch (one write), the piece first.
                assert last[-2:] == [("delta", "Here is your answer."), ("message", "Here is your answer.")], batches
                assert [e.type for e in batches[-1]].count("delta") == 1, batches
        finally:
            for stream in streams:
                await stream.aclose()


async def test_a_piece_the_turn_ends_on_still_reaches_every_stream(tmp_path):
    async with serving(tmp_path / "desk.db", repo_desk()) as served:
        served.desk.runner.provider = OnePiece(fail_from=2)
        conversations = served.conversations
        conversations.turn_seconds = 0.5  # (the turn is given up before the runner's own step limit)
        session_id, _ = await conversations.create()
        streams = [await conversations.hub.stream(session_id, 0) for _ in range(2)]
        try:
            await conversations.post(session_id, "hello, where is my invoice?")
            for stream in streams:
                await asyncio.wait_for(_batches(stream, _replied), 20)
            reading = [
                asyncio.create_task(_batches(stream, lambda b: any(e.type == "status" for e in b))) for stream in streams
            ]
            await conversations.post(session_id, "and my plan?")  # its step hangs after its piece
            for batches in await asyncio.wait_for(asyncio.gather(*reading), 20):
                # The turn given up: the customer is told the answer is late; the piece came first.
                seen = [e.type for b in batches for e in b]
                assert seen.count("delta") >= 1 and seen.index("delta") < seen.index("status"), batches
        finally:
            for stream in streams:
                await stream.aclose()
