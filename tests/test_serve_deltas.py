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


async def test_a_piece_never_follows_its_stored_reply_on_a_stream(tmp_path):
    """The change feed's read may hand a stored reply out before the turn does (`Hub.stored`
    finds it handed out): the reply's piece is then not handed out after it (the chat page would
    draw it as a reply still being written, under the reply)."""
    from supportdesk.channels.hub import Hub
    from supportdesk.channels.view import CustomerEvent
    from supportdesk.items import Message
    from supportdesk.store import SessionStore

    def view(item: Any) -> CustomerEvent:
        return CustomerEvent("message", {"text": item.text}, item.seq)

    async with await SessionStore.open(tmp_path / "desk.db") as store:
        session = await store.create_session("triage")
        hub = Hub(store, view)
        queue = await hub.subscribe(session.id)
        [reply] = await store.append(session.id, [Message(role="agent", text="Here is your answer.", agent="triage")])
        await hub.poke(session.id)  # the feed's read came first: the reply is handed out
        await hub.stored(session.id, [reply], piece=CustomerEvent("delta", {"text": "Here is your answer."}))
        got = [queue.get_nowait() for _ in range(queue.qsize())]
        assert [(e.type if e else None) for e in got] == ["message"]
        # In order, a piece and its reply go together, the piece first.
        [second] = await store.append(session.id, [Message(role="agent", text="And more.", agent="triage")])
        await hub.stored(session.id, [second], piece=CustomerEvent("delta", {"text": "And more."}))
        assert [(e.type, e.data["text"]) for e in (queue.get_nowait() for _ in range(queue.qsize())) if e] == [
            ("delta", "And more."), ("message", "And more."),
        ]


async def test_a_stream_opened_as_a_reply_is_stored_gets_no_piece_after_the_reply(tmp_path):
    """A stream subscribed before a reply's append gets the reply from its queue, its piece
    before it (its backlog ends where the hub's hand-out stood as it joined). One whose reader
    already has the reply (it reconnects after it, the hub not yet told) skips it, and the piece
    put before the reply in its queue is not sent after it either."""
    from supportdesk.channels.hub import Hub
    from supportdesk.channels.view import CustomerEvent
    from supportdesk.items import Message
    from supportdesk.store import SessionStore

    def view(item: Any) -> CustomerEvent:
        return CustomerEvent("message", {"text": item.text}, item.seq)

    async def events(stream: Any) -> list[tuple[str, str]]:
        seen = []
        async for batch in stream:
            seen += [(e.type, e.data["text"]) for e in batch]
            if any(text == "Next." for _, text in seen):
                return seen
        return seen

    async with await SessionStore.open(tmp_path / "desk.db") as store:
        session = await store.create_session("triage")
        hub = Hub(store, view)
        stream = await hub.stream(session.id, 0)  # subscribed now; its backlog is read when first iterated
        [reply] = await store.append(session.id, [Message(role="agent", text="Here is your answer.", agent="triage")])
        # A reader that already has the reply (from another worker, say) joins before this hub is
        # told of it: its queue gets the piece, then the reply, which it skips, and so the piece.
        had = await hub.stream(session.id, 1)
        try:
            await hub.stored(session.id, [reply], piece=CustomerEvent("delta", {"text": "Here is your answer."}))
            hub.publish_delta(session.id, CustomerEvent("delta", {"text": "Next."}))
            assert await events(stream) == [
                ("delta", "Here is your answer."), ("message", "Here is your answer."), ("delta", "Next.")
            ]
            assert await events(had) == [("delta", "Next.")]
        finally:
            await stream.aclose()
            await had.aclose()
