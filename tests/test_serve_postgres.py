"""Two `supportdesk serve` workers on one PostgreSQL database serve the same conversations."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.serve_harness import final_agent_reply, new_conversation, read_events, say
from tests.test_serve_process import ServeProcess

pytestmark = pytest.mark.postgres

CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"


async def test_a_message_posted_to_one_worker_reaches_a_stream_held_on_the_other(pg_url):
    first, second = ServeProcess(pg_url), ServeProcess(pg_url)
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as one, httpx.AsyncClient(
            base_url=second.url, timeout=30
        ) as two:
            conversation = await new_conversation(one)  # created on the first worker
            events = await read_events(
                two,  # streamed from the second
                conversation,
                # The reply asks about the refund: the desk's offer (issue 33) follows its question.
                lambda ev: final_agent_reply(ev, "duplicate") and any(e.event == "offer" for e in ev),
                on_open=lambda: say(one, conversation, CHARGED_TWICE),
            )
            stored = [e for e in events if e.id is not None]
            assert stored[0].data["text"] == CHARGED_TWICE
            assert any(e.event == "handoff" and e.data["agent"] == "Billing" for e in stored)
            ids = [e.id for e in stored]
            assert ids == sorted(set(ids))
            # And the other way round: the second worker takes the next message, the first streams it.
            resumed = await read_events(
                one,
                conversation,
                # The yes to the agent's question (the desk's offer, issue 33) runs the refund.
                lambda ev: final_agent_reply(ev, "refunded"),
                last_event_id=ids[-1],
                on_open=lambda: say(two, conversation, "yes please refund the duplicate"),
            )
            assert resumed[0].data == {**resumed[0].data, "from": "customer", "text": "yes please refund the duplicate"}
            assert all(e.id > ids[-1] for e in resumed if e.id is not None)
    finally:
        first.stop()
        second.stop()


# More conversations at once than a worker's store pool has connections (PostgresStore.open's
# pool_size, 8): a turn lease that pinned a pooled connection starved the turns themselves.
AT_ONCE = 16


async def test_more_conversations_at_once_than_the_pool_has_connections_all_reach_the_other_worker(pg_url):
    first, second = ServeProcess(pg_url), ServeProcess(pg_url)
    logs = ""
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=60) as one, httpx.AsyncClient(
            base_url=second.url, timeout=60
        ) as two:
            conversations = [await new_conversation(one) for _ in range(AT_ONCE)]
            opened = asyncio.Barrier(AT_ONCE + 1)  # (cyclic: ready for the second round once passed)

            def answered(events):  # an agent's message after the customer's (the demo refunds dana once)
                said = [e.id for e in events if e.event == "message" and e.data["from"] == "customer"]
                return bool(said) and any(
                    e.event == "message" and e.data["from"] == "agent" and e.id > said[-1] for e in events
                )

            async def follow(client, conversation, last_event_id=None):
                return await read_events(
                    client,
                    conversation,
                    answered,
                    last_event_id=last_event_id,
                    timeout=120,
                    on_open=opened.wait,
                )

            async def all_at_once(streams_on, posts_to, text, after=None):
                streams = [
                    asyncio.create_task(follow(streams_on, c, after[i] if after else None))
                    for i, c in enumerate(conversations)
                ]
                await opened.wait()  # every stream is subscribed: post everything at once
                seqs = await asyncio.gather(*(say(posts_to, c, text) for c in conversations))
                return seqs, await asyncio.gather(*streams)

            seqs, streamed = await all_at_once(two, one, CHARGED_TWICE)
            for seq, events in zip(seqs, streamed):
                assert any(e.id == seq and e.data["text"] == CHARGED_TWICE for e in events)
            # the other way round: every conversation's next message to the second worker
            lasts = [max(e.id for e in events if e.id is not None) for events in streamed]
            seqs, streamed = await all_at_once(one, two, "How do I reset my password?", lasts)
            for seq, last, events in zip(seqs, lasts, streamed):
                stored = [e.id for e in events if e.id is not None]
                assert stored == sorted(set(stored)) and stored[0] > last and seq in stored
    finally:
        logs = first.stop() + second.stop()
        print(logs)  # shown when the test fails
    assert "Traceback" not in logs and "ERROR" not in logs, logs


async def test_a_worker_opens_and_prepares_its_connections_before_it_serves(pg_url):
    """A `serve` worker pays its PostgreSQL connections' start-up before its first customer
    (issue 34): `bench_serve --pg` opened 8 backends during its load, each warming its catalog
    caches and parsing the turn's statements while customers waited. When the worker says it is
    listening, the store's main pool (its reads prepared), its append connections, its lease's
    lock connection and the business pool are all open."""
    import asyncpg

    from supportdesk.store import postgres as pg

    worker = ServeProcess(pg_url)
    try:
        conn = await asyncpg.connect(pg_url)
        try:
            rows = await conn.fetch(
                "SELECT application_name, count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY application_name"
            )
        finally:
            await conn.close()
    finally:
        worker.stop()
    opened = dict((r[0], r[1]) for r in rows)
    # The main pool, the append connections, the lease's lock connection (the feed's may be there too).
    assert opened.get("supportdesk", 0) >= pg.SERVE_CONNECTIONS + pg.WRITE_CONNECTIONS + 1, opened
    assert opened.get("supportdesk-business") == 4, opened
