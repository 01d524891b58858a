"""serve's followers on PostgreSQL hear another worker's appends through LISTEN/NOTIFY, not a poll
(issue 34 item 4).

The hub of this process follows a session on a PostgreSQL store; another OS process appends to
it. The poll interval is set to an hour and the poll itself made to fail, so the event can only
arrive through the store's change feed, the NOTIFY the append's transaction sends as it commits.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.channels import hub as hub_module
from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event
from supportdesk.store import open_store
from tests.serve_harness import repo_desk

pytestmark = pytest.mark.postgres

WRITER = Path(__file__).resolve().parent / "store_writer.py"


async def test_another_process_append_reaches_a_hub_stream_through_notify_not_a_poll(pg_url, monkeypatch):
    monkeypatch.setattr(hub_module, "FOLLOW_INTERVAL", 3600.0)

    async def no_poll(self: Hub) -> None:
        raise AssertionError("the hub polled instead of following the change feed")

    monkeypatch.setattr(Hub, "_poll", no_poll)
    desk = repo_desk()
    async with await open_store(pg_url) as store:
        info = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, desk))
        hub.start()
        try:
            stream = await hub.stream(info.id, 0)
            async with asyncio.timeout(30):  # fails, never hangs
                await hub.following.wait()
            writer = await asyncio.create_subprocess_exec(
                sys.executable, str(WRITER), pg_url, info.id, "7", "1",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            out, err = await writer.communicate()
            assert writer.returncode == 0, err.decode()
            assert b"committed 0" in out
            async with asyncio.timeout(30):  # an hour's poll interval: only the NOTIFY can bring it
                async for batch in stream:
                    texts = [event.data.get("text", "") for event in batch]
                    if any("writer 7" in text for text in texts):
                        break
            await stream.aclose()
        finally:
            await hub.close()


class CountingReads:
    """The store, with the hub's log reads recorded."""

    def __init__(self, store, reads: list[str]):
        self._store, self._reads = store, reads

    def __getattr__(self, name):
        attr = getattr(self._store, name)
        if name in ("last_seq", "range", "latest", "item", "items_at"):
            async def counted(*args, **kwargs):
                self._reads.append(name)
                return await attr(*args, **kwargs)

            return counted
        return attr


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_a_served_turn_hands_its_stored_items_to_the_streams_without_reading_them_back(db_path, backend):
    """What this worker stores (the posted message, the turn's items) reaches its streams as
    stored (`Hub.stored`): the hub reads where the session ends at the turn's end, and no item
    back, where a poke per append read each one twice."""
    import httpx

    from tests.serve_harness import final_agent_reply, new_conversation, read_events, say, serving

    async with serving(db_path, repo_desk()) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        hub = served.conversations.hub
        hub._follower.cancel()  # other writers' follower: its reads would race the count
        reads: list[str] = []
        hub.store = CountingReads(hub.store, reads)
        conversation = await new_conversation(client)
        events = await read_events(
            client,
            conversation,
            # (The reply asks about the refund: the desk's offer follows its question, issue 33.)
            lambda ev: final_agent_reply(ev, "duplicate") and any(e.event == "offer" for e in ev),
            on_open=lambda: say(client, conversation, "I was charged twice for my subscription this month, dana@example.com"),
        )
        await served.conversations.idle()
        log = await served.desk.store.range(conversation[0], 1, await served.desk.store.last_seq(conversation[0]))
    stored = [e.id for e in events if e.id is not None]
    assert stored == sorted(set(stored)) and len(log) > 6
    shown = [i.seq for i in log if customer_event(i, repo_desk()) is not None]
    assert stored == shown  # every stored event the customer may see, in order, once
    # The stream's subscription and backlog, and the turn's end: a fixed few, however many steps
    # the turn took; no item is read back (a poke per append read twice per item).
    assert len(reads) <= 3 and "range" not in reads, reads


async def test_items_stored_after_a_gap_reach_the_stream_through_a_read(db_path):
    """An item the hub was not handed (another writer's) comes first: the hub reads, and the
    stream gets both, in order."""
    from supportdesk.items import Message
    from supportdesk.store import SessionStore

    desk = repo_desk()
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, desk))
        stream = await hub.stream(info.id, 0)
        await store.append(info.id, [Message(role="customer", text="from another writer", agent="triage")])
        [mine] = await store.append(info.id, [Message(role="agent", text="from this worker's turn", agent="triage")])
        await hub.stored(info.id, [mine])
        async with asyncio.timeout(10):
            async for batch in stream:
                assert [e.data["text"] for e in batch] == ["from another writer", "from this worker's turn"]
                break
        await hub.stored(info.id, [mine])  # handed again: nothing twice
        await stream.aclose()
        await hub.close()


async def test_a_stream_reads_its_backlog_up_to_the_hubs_hand_out_and_no_head_of_its_own(db_path):
    """A stream's backlog ends where the hub's hand-out stood as the stream's queue joined (every
    later item reaches the queue): no read of where the log ends besides the subscription's (one
    statement less a stream, issue 34), and every event once, in order, however the item stored
    meanwhile falls."""
    from supportdesk.store import SessionStore
    from tests.stream_texts import said, texts

    desk = repo_desk()

    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage")
        await store.append(info.id, [said("one"), said("two")])
        reads: list[str] = []
        hub = Hub(CountingReads(store, reads), lambda item: customer_event(item, desk))
        try:
            first = await hub.stream(info.id, 0)  # the session's first stream: the hub reads its head
            assert await texts(first, 2) == ["one", "two"]
            assert reads == ["last_seq", "range"], reads
            [three] = await store.append(info.id, [said("three")])
            await hub.stored(info.id, [three])
            reads.clear()
            second = await hub.stream(info.id, 1)  # the hub's hand-out is at 3: the backlog is 2-3
            late = await hub.stream(info.id, 0)
            [four] = await store.append(info.id, [said("four")])  # after both joined, before their backlogs
            await hub.stored(info.id, [four])
            assert await texts(second, 3) == ["two", "three", "four"]
            assert await texts(late, 4) == ["one", "two", "three", "four"]
            assert await texts(first, 2) == ["three", "four"]
            assert reads == ["range", "range"], reads
            for stream in (first, second, late):
                await stream.aclose()
        finally:
            await hub.close()
