"""Fan-out of one stored event to many streams of a conversation (issue 34 §3): the event is
encoded once, whatever number of streams send it, and every stream gets it."""

from __future__ import annotations

import asyncio
import json

from supportdesk.channels import web
from supportdesk.channels.hub import Hub
from supportdesk.channels.view import CustomerEvent, customer_event
from supportdesk.items import Message
from supportdesk.store import SessionStore
from tests.serve_harness import repo_desk


def test_an_event_is_encoded_once_for_every_stream(monkeypatch):
    encoded: list[object] = []
    real = json.dumps
    monkeypatch.setattr(web.json, "dumps", lambda obj, **kw: encoded.append(obj) or real(obj, **kw))
    event = CustomerEvent("message", {"from": "agent", "text": "Hello <b>there</b>"}, 7)
    texts = {web._sse(event) for _ in range(200)}
    assert len(encoded) == 1 and len(texts) == 1
    [text] = texts
    assert text.startswith("id: 7\nevent: message\ndata: ") and text.endswith("\n\n")
    assert json.loads(text.split("data: ", 1)[1]) == {"type": "message", "seq": 7, "from": "agent", "text": "Hello <b>there</b>"}
    # Another event with the same fields is its own encoding (nothing is shared between events).
    other = CustomerEvent("message", {"from": "agent", "text": "Bye"}, 8)
    assert web._sse(other) != text and len(encoded) == 2


async def test_a_stored_answer_reaches_every_stream_of_its_conversation(db_path):
    config = repo_desk()
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        hub = Hub(store, lambda item: customer_event(item, config))
        streams = [await hub.stream(sid, 0) for _ in range(50)]
        [answer] = await store.append(sid, [Message(role="agent", text="Your refund is on its way.", agent="billing")])
        await hub.stored(sid, [answer])
        async with asyncio.timeout(10):
            for stream in streams:
                async for batch in stream:
                    if batch:
                        assert [(e.seq, e.data["text"]) for e in batch] == [(answer.seq, "Your refund is on its way.")]
                        break
        for stream in streams:
            await stream.aclose()
        await hub.close()
