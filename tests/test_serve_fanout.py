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


class SlowRange:
    """The store, with `range` reads of one session held until `go` is set (`started` says one began)."""

    def __init__(self, store, session_id: str):
        self._store, self._session_id = store, session_id
        self.started, self.go = asyncio.Event(), asyncio.Event()
        self.reads = 0

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def range(self, session_id: str, first: int, last: int):
        if session_id == self._session_id:
            self.reads += 1
            self.started.set()
            await self.go.wait()
        return await self._store.range(session_id, first, last)


async def collect(stream, into: list[str], arrived: asyncio.Condition) -> None:
    async for batch in stream:
        async with arrived:
            into += [e.data["text"] for e in batch]
            arrived.notify_all()


async def test_another_writers_items_reach_each_session_without_waiting_for_another_sessions_read(db_path):
    """Items another writer (another `serve` worker, staff in the TUI) stored reach the streams
    through the change feed; one session's slow read holds up no other session's streams, and
    the changes announced meanwhile are read together once it is done, not one read each."""
    config = repo_desk()
    async with await SessionStore.open(db_path) as ours, await SessionStore.open(db_path) as other:
        slow, quick = (await other.create_session("triage")).id, (await other.create_session("triage")).id
        store = SlowRange(ours, slow)
        hub = Hub(store, lambda item: customer_event(item, config))
        hub.start()
        got: dict[str, list[str]] = {slow: [], quick: []}
        arrived = asyncio.Condition()
        streams = [await hub.stream(sid, 0) for sid in (slow, quick)]
        readers = [asyncio.create_task(collect(stream, got[sid], arrived)) for stream, sid in zip(streams, (slow, quick))]

        async def until(sid: str, texts: list[str]) -> None:
            async with arrived:
                await arrived.wait_for(lambda: got[sid] == texts)

        try:
            async with asyncio.timeout(10):  # fails, never hangs
                await hub.following.wait()
                # A streamed piece through both streams: once it arrives, each stream has read its
                # (empty) backlog, so what comes next can only come through the follower.
                for sid in (slow, quick):
                    hub.publish_delta(sid, CustomerEvent("delta", {"text": "ready"}))
                    await until(sid, ["ready"])
                    got[sid].clear()
                await other.append(slow, [Message(role="agent", text="slow 1", agent="triage")])
                await store.started.wait()  # the slow session's read is in flight and held
                await other.append(quick, [Message(role="agent", text="quick 1", agent="triage")])
                await until(quick, ["quick 1"])
                for n in (2, 3, 4):
                    await other.append(slow, [Message(role="agent", text=f"slow {n}", agent="triage")])
                await other.append(quick, [Message(role="agent", text="quick 2", agent="triage")])
                await until(quick, ["quick 1", "quick 2"])  # (the feed has announced slow 2-4 by now)
                assert got[slow] == []
                store.go.set()
                await until(slow, ["slow 1", "slow 2", "slow 3", "slow 4"])
            assert store.reads == 2  # the held read, then one for the three announced meanwhile
        finally:
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            for stream in streams:
                await stream.aclose()
            await hub.close()


async def test_a_post_reads_the_conversation_once_and_its_limit_still_holds(db_path, monkeypatch):
    """A customer's POST reads the conversation's row once (`authorize`, which says where it
    ends); the recent messages its per-conversation limit counts are read only when what this
    worker knows of them, plus the items it has not seen, could reach the limit; no read of the
    head of its own. The limit still refuses the message over it."""
    import httpx

    from supportdesk.store import SessionStore as Sqlite
    from tests.serve_harness import new_conversation, say, serving

    reads: list[str] = []
    for name in ("last_seq", "get_session", "of_kind"):
        real = getattr(Sqlite, name)

        def counted(self, *args, _real=real, _name=name, **kwargs):
            reads.append(_name)
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Sqlite, name, counted)
    async with serving(db_path, repo_desk(), messages_per_minute=2) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversations = served.conversations
        conversations.hub._follower.cancel()  # (other writers' follower: its reads are not the POST's)
        monkeypatch.setattr(conversations, "want_turn", lambda session_id: None)  # no turn: only the POST reads
        conversation = await new_conversation(client)
        reads.clear()
        first = await say(client, conversation, "hello")
        assert reads == ["get_session"], reads  # nothing stored yet, one message allowed: no count read
        reads.clear()
        assert await say(client, conversation, "hello again") == first + 1
        assert reads == ["get_session"], reads  # its own "hello" known, nothing unseen: 1 < 2
        reads.clear()
        cid, token = conversation
        refused = await client.post(f"/api/conversations/{cid}/messages", json={"text": "a third"}, headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 429 and "2 messages" in refused.json()["error"]
        assert reads == ["get_session", "of_kind"], reads  # at the limit: counted in the store


async def test_the_stored_limit_counts_another_workers_messages_this_worker_never_saw(db_path):
    """The per-conversation limit holds across workers: messages another worker stored (here the
    runner on the same store, not through this app) count, though this worker's cache of what it
    has read knows only its own. Fails if the POST trusts what it has seen without the items it has not."""
    import httpx

    from tests.serve_harness import new_conversation, say, serving

    async with serving(db_path, repo_desk(), messages_per_minute=3) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversations = served.conversations
        conversations.want_turn = lambda session_id: None  # no turns: only customer messages in the log
        conversation = await new_conversation(client)
        cid, token = conversation
        await say(client, conversation, "from this worker")
        for n in range(2):  # another worker's customer messages: this one never handled them
            await served.desk.runner.receive(cid, f"from another worker {n}")
        refused = await client.post(f"/api/conversations/{cid}/messages", json={"text": "a fourth"}, headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 429 and "3 messages" in refused.json()["error"], refused.text
