"""A session's first stream takes where the session ends from the change feed, not a read
(issue 34: one statement a followed session on PostgreSQL, where every worker hears each
conversation created and each append).

The hub keeps the head the feed last announced for every session, while it follows without a
break (`Hub._heard`). These tests drive the hub's follower with a feed of their own, so what it
heard, lost or was told deleted is exact, and count the hub's reads of the real store.
"""

from __future__ import annotations

import asyncio

from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event
from supportdesk.store import SessionStore
from supportdesk.store.protocol import Change
from tests.stream_texts import said, texts
from tests.serve_harness import repo_desk
from tests.test_hub_feed import CountingReads


class ScriptedFeed:
    """A change feed that hands out what the test puts in, and says when the hub asked for
    more (every change before it was handled), or fails when told to (a lost connection)."""

    def __init__(self) -> None:
        self.changes: asyncio.Queue[Change | Exception] = asyncio.Queue()
        self.waiting = asyncio.Event()

    async def __aenter__(self) -> ScriptedFeed:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def __aiter__(self) -> ScriptedFeed:
        return self

    async def __anext__(self) -> Change:
        self.waiting.set()
        change = await self.changes.get()
        self.waiting.clear()
        if isinstance(change, Exception):
            raise change
        return change

    async def tell(self, change: Change | Exception) -> None:
        """Hand the hub one change and wait until it was handled."""
        self.waiting.clear()
        await self.changes.put(change)
        async with asyncio.timeout(10):  # fails, never hangs
            while not (self.waiting.is_set() and self.changes.empty()):
                await self.waiting.wait()


async def hub_on(store: SessionStore, reads: list[str]) -> tuple[Hub, list[ScriptedFeed]]:
    """A hub whose follower listens to scripted feeds (a new one each time it (re)starts)."""
    counted = CountingReads(store, reads)
    feeds: list[ScriptedFeed] = []

    async def follow() -> ScriptedFeed:
        feeds.append(ScriptedFeed())
        opened.set()
        return feeds[-1]

    opened = asyncio.Event()

    counted.follow = follow
    hub = Hub(counted, lambda item: customer_event(item, repo_desk()))
    hub.start()
    async with asyncio.timeout(10):
        await hub.following.wait()
    hub.opened = opened  # type: ignore[attr-defined]  (set each time the follower opens a feed)
    return hub, feeds


async def test_a_sessions_first_stream_starts_where_the_feed_said_it_ends_without_reading_it(db_path):
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage")
        reads: list[str] = []
        hub, feeds = await hub_on(store, reads)
        try:
            await store.append(info.id, [said("one"), said("two")])  # (another worker's append)
            await feeds[-1].tell(Change(info.id, 2))
            stream = await hub.stream(info.id, 0)
            assert await texts(stream, 2) == ["one", "two"]
            assert reads == ["range"], reads  # the backlog; where the log ends was heard
            # An append whose change arrives after the stream joined reaches it as any change does.
            await store.append(info.id, [said("three")])
            await feeds[-1].tell(Change(info.id, 3))
            assert await texts(stream, 1) == ["three"]
            await stream.aclose()
        finally:
            await hub.close()


async def test_a_head_heard_before_the_feed_was_lost_or_the_session_deleted_is_read_again(db_path):
    async with await SessionStore.open(db_path) as store:
        lost = (await store.create_session("triage")).id
        deleted = (await store.create_session("triage")).id
        reads: list[str] = []
        hub, feeds = await hub_on(store, reads)
        try:
            await feeds[-1].tell(Change(lost, 0))
            await feeds[-1].tell(Change(deleted, 0))
            await feeds[-1].tell(Change(deleted, 0, deleted=True))
            # (A session's id can come back after a deletion: a channel's thread keeps its id.)
            await store.append(deleted, [said("after the deletion")])
            first = await hub.stream(deleted, 0)
            assert await texts(first, 1) == ["after the deletion"]
            assert reads == ["last_seq", "range"], reads
            await first.aclose()  # (a followed session is read again when the feed comes back)
            # The feed is lost: what it said before may have moved meanwhile, unheard.
            hub.opened.clear()
            await store.append(lost, [said("while nobody listened")])
            feeds[-1].changes.put_nowait(ConnectionError("the feed's connection closed"))
            async with asyncio.timeout(10):  # (the follower waits a second before it listens again)
                await hub.opened.wait()
                await hub.following.wait()
            reads.clear()
            second = await hub.stream(lost, 0)
            assert await texts(second, 1) == ["while nobody listened"]
            assert reads == ["last_seq", "range"], reads
            await second.aclose()
        finally:
            await hub.close()


async def test_what_this_process_stored_moves_the_heard_head_at_once(db_path):
    """Items this process stored on a session no stream follows yet (`Hub.stored`) move where it
    is heard to end, so a stream joining next has them in its backlog before their change
    arrives, and what another writer stored before them too (it was committed first)."""
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage")
        reads: list[str] = []
        hub, feeds = await hub_on(store, reads)
        try:
            await feeds[-1].tell(Change(info.id, 0))
            mine = await store.append(info.id, [said("one")])
            await hub.stored(info.id, mine)  # (its change is still on its way)
            stream = await hub.stream(info.id, 0)
            assert await texts(stream, 1) == ["one"]
            assert reads == ["range"], reads
            await stream.aclose()
            await store.append(info.id, [said("two")])  # another writer's, not heard yet
            mine = await store.append(info.id, [said("three")])
            await hub.stored(info.id, mine)
            reads.clear()
            stream = await hub.stream(info.id, 0)
            assert await texts(stream, 3) == ["one", "two", "three"]
            assert reads == ["range"], reads
            await stream.aclose()
        finally:
            await hub.close()


async def test_what_this_process_stored_before_the_feed_listened_is_no_head_heard(db_path):
    """Items stored before the feed started listening (a lost feed comes back, or the worker had
    just started) on a session it has not announced: another writer may have stored after them,
    unheard, so a stream joining reads where the log ends."""
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage")
        mine = await store.append(info.id, [said("one")])
        await store.append(info.id, [said("two")])  # another writer's, before the feed listened
        reads: list[str] = []
        hub, feeds = await hub_on(store, reads)
        try:
            await hub.stored(info.id, mine)  # (handed over late: after the feed started)
            stream = await hub.stream(info.id, 0)
            assert await texts(stream, 2) == ["one", "two"]
            assert reads == ["last_seq", "range"], reads
            await stream.aclose()
        finally:
            await hub.close()
