"""Two `supportdesk serve` workers on one PostgreSQL database serve the same conversations."""

from __future__ import annotations

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
                lambda ev: final_agent_reply(ev, "duplicate"),
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
                lambda ev: final_agent_reply(ev, "refunded"),
                last_event_id=ids[-1],
                on_open=lambda: say(two, conversation, "yes please refund the duplicate"),
            )
            assert resumed[0].data == {**resumed[0].data, "from": "customer", "text": "yes please refund the duplicate"}
            assert all(e.id > ids[-1] for e in resumed if e.id is not None)
    finally:
        first.stop()
        second.stop()
