"""The hub's follower on a store without SQLite's `data_version` probe (as PostgreSQL is today):
one page of recent sessions finds the followed ones that moved, however many others are busy."""

from __future__ import annotations

import asyncio

from supportdesk.channels import hub as hub_module
from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event
from supportdesk.items import Message
from supportdesk.store import SessionStore
from tests.serve_harness import repo_desk


class WithoutProbe:
    """A store that answers everything but `data_version`."""

    def __init__(self, store):
        self._store = store

    def __getattr__(self, name):
        if name == "data_version":
            raise AttributeError(name)
        return getattr(self._store, name)


async def next_batch(stream, timeout: float = 10.0):
    async with asyncio.timeout(timeout):
        async for batch in stream:
            if batch:
                return batch


async def test_a_followed_session_is_noticed_among_many_busier_ones(db_path, monkeypatch):
    monkeypatch.setattr(hub_module, "FOLLOW_INTERVAL", 0.3)
    monkeypatch.setattr(hub_module, "PAGE_MARGIN", 2)  # so the busy sessions overflow the page
    config = repo_desk()
    async with await SessionStore.open(db_path) as ours, await SessionStore.open(db_path) as other:
        followed = [await other.create_session("triage") for _ in range(3)]
        hub = Hub(WithoutProbe(ours), lambda item: customer_event(item, config))
        hub.start()
        try:
            streams = [await hub.stream(info.id, 0) for info in followed]
            busy = [await other.create_session("triage") for _ in range(10)]
            for info in busy:  # newer activity than the followed sessions (each append is awaited)
                await other.append(info.id, [Message(role="customer", text="busy", agent="triage")])
            # The oldest followed session is off the first page now; a write to it is still seen.
            await other.append(followed[0].id, [Message(role="customer", text="hello from staff's side", agent="triage")])
            [event] = await next_batch(streams[0])
            assert (event.seq, event.data["text"]) == (1, "hello from staff's side")
            await other.append(followed[2].id, [Message(role="customer", text="and here", agent="triage")])
            [event] = await next_batch(streams[2])
            assert event.data["text"] == "and here"
            # Between two polls a followed session moves, then ten busier ones push it off the page:
            # the page reaches back past the last poll, so the sessions missing from it are asked.
            since = ours.clock()
            await other.append(followed[1].id, [Message(role="customer", text="pushed off the page", agent="triage")])
            for info in busy:
                await other.append(info.id, [Message(role="customer", text="busier", agent="triage")])
            assert followed[1].id in await hub._moved_since(since)
            [event] = await next_batch(streams[1])
            assert event.data["text"] == "pushed off the page"
            for stream in streams:
                await stream.aclose()
        finally:
            await hub.close()
