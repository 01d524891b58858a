"""The event stream sends each stored item once: the backlog read after subscribing and the live
events queued meanwhile overlap, and the overlap is skipped by seq (`EventStream._run`). On a real
SQLite file, in one process, with the pokes made by hand so the overlap is certain, not timed."""

from __future__ import annotations

import asyncio

from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event
from supportdesk.items import Message
from supportdesk.store import SessionStore
from tests.serve_harness import repo_desk


def said(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


async def collect_until_three(stream, after_batch=None) -> list[tuple[int | None, str]]:
    """(seq, text) of every event the stream sends until "three" arrives; `after_batch(seen)` runs
    after each batch (to store more once the backlog is in). Closes the stream; fails, not hangs."""
    seen: list[tuple[int | None, str]] = []
    async with asyncio.timeout(10):
        async for batch in stream:
            seen += [(event.seq, event.data["text"]) for event in batch]
            if after_batch is not None:
                await after_batch(seen)
            if any(text == "three" for _, text in seen):
                break
    await stream.aclose()
    return seen


async def test_events_queued_while_the_backlog_is_read_are_not_sent_twice(db_path):
    config = repo_desk()
    async with await SessionStore.open(db_path) as store:
        session = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, config))  # not started: pokes by hand
        try:
            stream = await hub.stream(session.id, 0)  # subscribed; its backlog is read at first use
            for text in ("one", "two"):  # stored and queued live before the reader starts
                await store.append(session.id, [said(text)])
                await hub.poke(session.id)

            async def then_three(seen: list[tuple[int | None, str]]) -> None:
                if len(seen) == 2:  # the backlog: now one more, live only
                    await store.append(session.id, [said("three")])
                    await hub.poke(session.id)

            seen = await collect_until_three(stream, then_three)
        finally:
            await hub.close()
    assert seen == [(1, "one"), (2, "two"), (3, "three")]


async def test_a_stream_resumed_past_what_this_hub_handed_out_skips_what_the_client_saw(db_path):
    """A client that saw up to seq 2 on another worker resumes here (its Last-Event-ID) while this
    hub has handed out nothing yet: the backlog is empty (it ends where the hub stood), and the
    live events up to 2 are skipped by seq, so the last one it saw does not come again."""
    config = repo_desk()
    async with await SessionStore.open(db_path) as store:
        session = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, config))  # not started: pokes by hand
        try:
            stream = await hub.stream(session.id, 2)
            for text in ("one", "two", "three"):
                await store.append(session.id, [said(text)])
                await hub.poke(session.id)
            seen = await collect_until_three(stream)
        finally:
            await hub.close()
    assert seen == [(3, "three")]


async def test_a_quiet_live_stream_gets_keep_alives_and_then_every_event(db_path):
    """The keep-alive (an empty batch) comes from the stream's own timer once it has been quiet
    for `idle`/2 to `idle` s, never while events flow, and the events after it all arrive in order."""
    config = repo_desk()
    idle = 0.2
    async with await SessionStore.open(db_path) as store:
        session = await store.create_session("triage")
        hub = Hub(store, lambda item: customer_event(item, config))
        try:
            stream = await hub.stream(session.id, 0, idle=idle)
            loop = asyncio.get_running_loop()
            got: list[object] = []
            quiet_since = loop.time()
            async with asyncio.timeout(10):
                async for batch in stream:
                    if not batch:
                        assert loop.time() - quiet_since >= idle / 2 - 0.02  # (timer slack)
                        got.append("keep-alive")
                        if got.count("keep-alive") == 2:
                            for text in ("one", "two", "three"):
                                await store.append(session.id, [said(text)])
                                await hub.poke(session.id)
                        continue
                    got += [event.data["text"] for event in batch]
                    quiet_since = loop.time()
                    if "three" in got:
                        break
            await stream.aclose()
        finally:
            await hub.close()
    assert got == ["keep-alive", "keep-alive", "one", "two", "three"]
