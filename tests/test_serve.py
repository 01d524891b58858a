"""`supportdesk serve`: the web API over a real uvicorn server on 127.0.0.1 and a real SQLite file."""

from __future__ import annotations

import asyncio
import hashlib
import json

import httpx
import pytest

from supportdesk.wiring import open_desk
from supportdesk.engine.runner import drain
from supportdesk.store import open_store
from tests.serve_harness import (
    final_agent_reply,
    new_conversation,
    parse_sse,
    read_events,
    repo_desk,
    say,
    serving,
)

CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"
# What the log holds and the customer must never see.
INTERNAL_KEYS = {"call_id", "arguments", "output", "reason", "approval_id", "key", "value", "writer", "session_id", "meta"}


@pytest.fixture
def desk_config():
    return repo_desk()


async def test_a_conversation_gets_a_token_of_its_own_and_only_its_hash_is_stored(db_path, desk_config):
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        cid, token = await new_conversation(client)
        other_cid, other_token = await new_conversation(client)
        assert cid != other_cid and token != other_token and len(token) >= 40
        info = await served.desk.store.get_session(cid)
        assert info is not None and info.channel == "web"
        assert info.meta == {"token_sha256": hashlib.sha256(token.encode()).hexdigest()}
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    assert token.encode() not in raw and other_token.encode() not in raw


async def test_the_message_is_stored_before_202_and_the_turn_runs_in_the_background(db_path, desk_config):
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        seq = await say(client, conversation, CHARGED_TWICE)
        # Another connection, the way a staff terminal reads: the message is committed already.
        async with await open_store(db_path) as other:
            stored = await other.item(conversation[0], seq)
        assert stored is not None and stored.kind == "message" and stored.role == "customer"
        assert stored.text == CHARGED_TWICE
        events = await read_events(client, conversation, lambda ev: final_agent_reply(ev, "duplicate"))
    kinds = [(e.event, e.data.get("from")) for e in events if e.event != "delta"]
    assert kinds[0] == ("message", "customer")
    assert ("handoff", None) in kinds
    handoff = next(e for e in events if e.event == "handoff")
    assert handoff.data["text"] == "You are now talking to Billing." and handoff.data["agent"] == "Billing"


async def test_the_stream_shows_only_what_the_customer_may_see(db_path, desk_config):
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        events = await read_events(
            client,
            conversation,
            lambda ev: final_agent_reply(ev, "duplicate"),
            on_open=lambda: say(client, conversation, CHARGED_TWICE),
        )
        await served.conversations.idle()
        log = await served.desk.store.range(conversation[0], 1, await served.desk.store.last_seq(conversation[0]))
    # The log holds tool calls, results and context writes; none of them reached the stream.
    assert {i.kind for i in log} >= {"tool_call", "tool_result", "context_set", "handoff"}
    assert {e.event for e in events} <= {"message", "delta", "handoff", "status"}
    for event in events:
        assert not INTERNAL_KEYS & set(event.data), event
        # Agents are named by their titles; the desk's internal names (and the session id) never appear.
        assert not {"triage", "billing", "senior", conversation[0]} & {str(v) for v in event.data.values()}
    for item in log:
        if item.kind == "tool_result":
            assert not any(item.output in json.dumps(e.data) for e in events)
    stored_ids = [e.id for e in events if e.id is not None]
    assert stored_ids == sorted(set(stored_ids))
    # Each stored event carries its seq as the SSE id; the streamed pieces carry none.
    assert all((e.id is None) == (e.event == "delta") for e in events)
    assert all(e.data["seq"] == e.id for e in events if e.id is not None)
    streamed = "".join(e.data["text"] for e in events if e.event == "delta" and e.data["agent"] == "Billing")
    final = next(e for e in events if e.event == "message" and e.data.get("agent") == "Billing")
    assert streamed == final.data["text"]


async def test_a_stream_resumed_with_last_event_id_gets_exactly_what_follows(db_path, desk_config):
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        await say(client, conversation, CHARGED_TWICE)
        # (The reply asks about the refund: the desk's offer follows its question, issue 33.)
        first = await read_events(client, conversation, lambda ev: any(e.event == "offer" for e in ev))
        stored = [e for e in first if e.id is not None]
        cut = stored[1].id
        resumed = await read_events(
            client, conversation, lambda ev: any(e.event == "offer" for e in ev), last_event_id=cut
        )
        assert [(e.id, e.data) for e in resumed if e.id is not None] == [(e.id, e.data) for e in stored[2:]]
        # EventSource cannot send headers: the token and the resume point also work in the query.
        again = await read_events(client, conversation, lambda ev: len(ev) >= 1, token_in_query=True)
        assert again[0].id == stored[0].id


async def test_a_second_message_sent_while_the_first_turn_runs_is_answered_in_order(db_path, desk_config):
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        # The first turn is held at billing's first step (triage's handoff held for the turn's
        # next append, issue 34) while the second message is sent: "while the first turn runs"
        # is a fact of the test, not of the machine's speed.
        runner = served.desk.runner
        entered, go = asyncio.Event(), asyncio.Event()
        steps = 0
        real = runner.provider.stream

        async def stream(request):
            nonlocal steps
            steps += 1
            if steps == 2:
                entered.set()
                await go.wait()
            async for out in real(request):
                yield out

        runner.provider.stream = stream
        conversation = await new_conversation(client)
        first = await say(client, conversation, CHARGED_TWICE)
        await asyncio.wait_for(entered.wait(), 20)
        second = await say(client, conversation, "yes please refund the duplicate")
        go.set()
        # Stored at once (issue 32), before anything of the turn: the turn's later steps read it
        # there, and billing asks the question its yes cannot answer (a yes comes after the
        # desk's offer), once; that question answers both messages.
        events = await read_events(client, conversation, lambda ev: any(e.event == "offer" for e in ev))
        await served.conversations.idle()
        assert await runner.unfinished_turn(conversation[0]) is None
        assert not any(e.event == "message" and "not run" in e.data["text"] for e in events)
        # The customer's yes after the question runs the refund.
        third = await say(client, conversation, "yes")
        after = await read_events(client, conversation, lambda ev: final_agent_reply(ev, "refunded"), last_event_id=events[-1].id)
        await served.conversations.idle()
    assert second == first + 1
    customer_seqs = [e.id for e in events + after if e.event == "message" and e.data["from"] == "customer"]
    assert customer_seqs == [first, second, third]
    [offer] = [e for e in events + after if e.event == "offer"]
    question = next(e for e in events if e.event == "message" and e.data["from"] == "agent" and e.id == offer.id - 1)
    assert "$29.99" in question.data["text"] and question.data["text"].rstrip().endswith("?")
    refund = next(e for e in after if e.event == "message" and "refunded" in e.data["text"])
    assert first < second < offer.id < third < refund.id
    # The question's step saw the second message: nothing was said between the offer and the yes
    # (a turn that had not seen it would answer it after the offer, asking again).
    assert [e.event for e in after if e.id is not None and offer.id < e.id < third] == []


async def test_staff_approval_from_another_connection_reaches_the_stream(db_path, tmp_path):
    config = repo_desk(approval_threshold=20.0)
    async with serving(db_path, config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        await say(client, conversation, CHARGED_TWICE)
        # The agent's question is the desk's offer of the exact refund (issue 33): the stream
        # carries the offer with its buttons' labels, and the page's "Yes" button sends a
        # structured answer naming it.
        offered = await read_events(client, conversation, lambda ev: any(e.event == "offer" for e in ev))
        offer = next(e for e in offered if e.event == "offer")
        assert offer.data["yes"] == "Yes, refund $29.99 on charge CH-9004 (duplicate charge)" and offer.data["no"] == "No"
        assert not INTERNAL_KEYS & set(offer.data)
        cid, token = conversation
        for wrong in ({"offer_id": offer.data["offer_id"]}, {"offer_id": 7, "yes": True}, "yes"):
            refused = await client.post(f"/api/conversations/{cid}/messages", json={"text": "Yes", "answer": wrong},
                                        headers={"Authorization": f"Bearer {token}"})
            assert refused.status_code == 422 and "answer" in refused.json()["error"]
        pressed = await client.post(
            f"/api/conversations/{cid}/messages", json={"text": offer.data["yes"], "answer": {"offer_id": offer.data["offer_id"], "yes": True}},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert pressed.status_code == 202, pressed.text

        def checking(ev):
            return any(e.event == "status" and e.data["status"] == "checking" for e in ev)

        events = await read_events(client, conversation, checking, last_event_id=offer.id)
        assert any(e.event == "answer" and e.data == {"type": "answer", "seq": e.id, "offer_id": offer.data["offer_id"], "answer": "yes"} for e in events)
        notice = next(e for e in events if e.event == "status")
        assert notice.data["text"].startswith("A colleague is checking this")
        assert not INTERNAL_KEYS & set(notice.data)
        await served.conversations.idle()
        # Staff decide in their own process: a desk opened on the same file, as the TUI opens it.
        async with await open_desk(db_path, config) as staff:
            [pending] = await staff.runner.pending_approvals(conversation[0])
            await drain(staff.runner.decide_approval(conversation[0], pending.data["approval_id"], True))
        after = await read_events(
            client, conversation, lambda ev: final_agent_reply(ev, "approved and processed"), last_event_id=notice.id
        )
    statuses = [e.data["status"] for e in after if e.event == "status"]
    assert statuses == ["checked"]
    assert after[-1].data["text"].startswith("Good news: the refund was approved and processed: $29.99")


async def test_a_live_stream_sees_another_connections_writes_without_reconnecting(db_path, desk_config, monkeypatch):
    from supportdesk.channels import web

    # A keep-alive comes only from a stream past its backlog, waiting live: the staff's write is
    # made then, so it can only reach the stream live (not as backlog of a stream that opened late).
    monkeypatch.setattr(web, "KEEPALIVE_SECONDS", 0.05)
    async with serving(db_path, desk_config) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        await say(client, conversation, CHARGED_TWICE)
        before = await read_events(client, conversation, lambda ev: final_agent_reply(ev, "duplicate"))
        await served.conversations.idle()
        cid, token = conversation
        last = await served.desk.store.last_seq(cid)
        assert last >= max(e.id for e in before if e.id is not None)

        async def staff_force_handoff():
            async with await open_desk(db_path, desk_config) as staff:
                await staff.runner.force_handoff(cid, "senior", reason="staff decision: VIP")

        writers: list[asyncio.Task] = []
        events = []
        headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": str(last)}
        async with asyncio.timeout(20), client.stream("GET", f"/api/conversations/{cid}/events", headers=headers) as response:
            assert response.status_code == 200

            async def lines():
                async for line in response.aiter_lines():
                    if line.startswith(": keep-alive") and not writers:
                        writers.append(asyncio.create_task(staff_force_handoff()))
                    yield line

            async for event in parse_sse(lines()):
                events.append(event)
                if event.event == "handoff" and event.data["agent"] == "Senior":
                    break
        assert len(writers) == 1
        await writers[0]
    assert [e.event for e in events] == ["handoff"]  # nothing of the backlog: it was all before `last`
    handoff = events[-1]
    assert handoff.data == {"type": "handoff", "seq": handoff.id, "agent": "Senior", "text": "You are now talking to Senior."}
