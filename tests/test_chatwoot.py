"""The Chatwoot agent bot against a fake Chatwoot API on 127.0.0.1 that records every call."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from supportdesk.channels.chatwoot import session_id_for, signature
from supportdesk.config import ConfigError, parse_desk
from tests.chatwoot_fake import ACCOUNT, INBOX, conversation_resolved, fake_chatwoot, message_created
from tests.serve_harness import REPO, serving

TOKEN = "bot-access-token-123"
PATH_SECRET = "path-secret-abc"
SIGNING_SECRET = "signing-secret-xyz"
ENV = {"CW_TOKEN": TOKEN, "CW_PATH": PATH_SECRET, "CW_SIGN": SIGNING_SECRET}
CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"


def chatwoot_desk(base_url: str, *, signed: bool = False, inboxes: list[int] | None = None):
    text = (REPO / "agents.toml").read_text(encoding="utf-8")
    text += f"""
[channels.chatwoot]
base_url = "{base_url}"
account_id = {ACCOUNT}
token_env = "CW_TOKEN"
webhook_secret_env = "CW_PATH"
inboxes = {json.dumps(inboxes if inboxes is not None else [INBOX])}
"""
    if signed:
        text += 'signing_secret_env = "CW_SIGN"\nmax_signature_age = 300\n'
    return parse_desk(text, "agents.toml")


@pytest.fixture
async def bot(db_path):
    async def start(*, signed: bool = False, **options):
        fake_cm = fake_chatwoot()
        fake = await fake_cm.__aenter__()
        opened.append(fake_cm)
        config = chatwoot_desk(fake.url, signed=signed)
        served_cm = serving(db_path, config, chatwoot_options={"env": ENV, "retry_first": 0.01, "retry_cap": 0.05, **options})
        served = await served_cm.__aenter__()
        opened.append(served_cm)
        client = httpx.AsyncClient(base_url=served.url, timeout=30)
        clients.append(client)
        return served, fake, client

    opened: list = []
    clients: list[httpx.AsyncClient] = []
    yield start
    for client in clients:
        await client.aclose()
    for cm in reversed(opened):
        await cm.__aexit__(None, None, None)


def deliver(client: httpx.AsyncClient, payload: dict, *, secret: str = PATH_SECRET, headers: dict | None = None):
    return client.post(f"/channels/chatwoot/webhook/{secret}", content=json.dumps(payload).encode(), headers=headers or {})


async def test_an_incoming_message_in_a_pending_conversation_gets_the_desks_reply(bot):
    served, fake, client = await bot()
    response = await deliver(client, message_created(1001, 42, CHARGED_TWICE))
    assert response.status_code == 200 and response.json()["status"] == "stored"
    session_id = session_id_for(ACCOUNT, 42)
    # Stored before the 200, with its Chatwoot id, in a session of its own channel.
    info = await served.desk.store.get_session(session_id)
    assert info is not None and info.channel == "chatwoot" and info.meta["chatwoot_conversation"] == 42
    # (the turn runs in the background and may have answered already: the customer's is the first)
    stored = (await served.desk.store.of_kind(session_id, "message"))[0]
    assert stored.role == "customer" and stored.text == CHARGED_TWICE and stored.meta == {"chatwoot_message_id": 1001, "external_id": "chatwoot:1001"}

    await fake.wait_for(lambda: any("duplicate" in c.body["content"] for c in fake.messages(42)))
    await fake.wait_for(lambda: len(fake.messages(42)) == 3)
    replies = fake.messages(42)
    # The agent's question about the refund is the desk's offer: its buttons follow it.
    assert [c.body["content"].split(":")[0] for c in replies] == [
        "Thanks, I'm bringing in our billing team to help with this.", "I found it", "Please choose"
    ]
    assert replies[2].body["content_type"] == "input_select"
    assert all(c.token == TOKEN and c.body["private"] is False and c.body["message_type"] == "outgoing" for c in replies)
    assert not [c for c in fake.calls if c.path.endswith("toggle_status")]


@pytest.mark.parametrize(
    "payload, why",
    [
        (message_created(2001, 43, "a private note to colleagues", private=True), "private"),
        (message_created(2002, 43, "Thanks, I'm bringing in billing", message_type="outgoing"), "incoming"),
        (message_created(2003, 43, CHARGED_TWICE, status="open"), "not pending"),
        (message_created(2004, 43, CHARGED_TWICE, inbox_id=99), "inbox"),
        (message_created(2005, 43, CHARGED_TWICE, account_id=77), "account"),
        ({"event": "conversation_typing_on", "conversation": {"id": 43}}, "not for the bot"),
        ({"event": "webwidget_triggered", "id": 9}, "not for the bot"),
    ],
)
async def test_echoes_private_notes_open_conversations_and_other_events_get_silence(bot, payload, why):
    served, fake, client = await bot()
    response = await deliver(client, payload)
    assert response.status_code == 200
    assert response.json()["status"] == "ignored" and why in response.json()["why"]
    await served.conversations.idle()
    assert fake.calls == []
    assert await served.desk.store.get_session(session_id_for(ACCOUNT, 43)) is None


async def test_a_human_request_posts_a_private_note_then_opens_the_conversation(bot):
    served, fake, client = await bot()
    await deliver(client, message_created(3001, 44, CHARGED_TWICE))
    await fake.wait_for(lambda: len(fake.messages(44)) == 3)  # (the reply asks, with its offer's buttons)
    await deliver(client, message_created(3002, 44, "I want to talk to a real person please"))
    await fake.wait_for(lambda: any(c.path.endswith("toggle_status") for c in fake.calls))
    await served.conversations.idle()
    await fake.wait_for(lambda: len(fake.messages(44, private=False)) == 4)
    calls = [c for c in fake.calls if "/conversations/44/" in c.path]
    [note_at] = [i for i, c in enumerate(calls) if c.body.get("private") is True]
    [toggle_at] = [i for i, c in enumerate(calls) if c.path.endswith("toggle_status")]
    assert note_at + 1 == toggle_at and calls[toggle_at].body == {"status": "open"}
    note = calls[note_at].body["content"]
    assert "Customer wants: I was charged twice" in note
    assert "handed to Billing (duplicate charge)" in note and "find_charges" in note
    assert "Why a person: The customer asked for a human" in note
    assert calls[-1].body["content"].startswith("I've asked a member of our staff to join")
    # People hold it now: Chatwoot sends the next message with status open, and the bot keeps quiet.
    before = len(fake.calls)
    response = await deliver(client, message_created(3003, 44, "hello?", status="open"))
    assert response.json()["status"] == "ignored"
    await served.conversations.idle()
    assert len(fake.calls) == before


async def test_a_redelivered_event_is_processed_once(bot):
    served, fake, client = await bot()
    payload = message_created(4001, 45, CHARGED_TWICE)
    first = await deliver(client, payload)
    second = await deliver(client, payload)
    assert first.json()["status"] == "stored" and second.json()["status"] == "duplicate"
    await fake.wait_for(lambda: len(fake.messages(45)) == 3)
    await served.conversations.idle()
    third = await deliver(client, payload)  # and later, after the turn
    assert third.json()["status"] == "duplicate"
    await served.conversations.idle()
    customer = [m for m in await served.desk.store.of_kind(session_id_for(ACCOUNT, 45), "message") if m.role == "customer"]
    assert len(customer) == 1
    assert len(fake.messages(45)) == 3  # one reply (its question and the offer's buttons), not two


async def test_conversation_resolved_closes_the_session(bot):
    served, fake, client = await bot()
    await deliver(client, message_created(5001, 46, CHARGED_TWICE))
    await fake.wait_for(lambda: len(fake.messages(46)) == 3)
    response = await deliver(client, conversation_resolved(46))
    assert response.status_code == 200 and response.json()["status"] == "resolved"
    info = await served.desk.store.get_session(session_id_for(ACCOUNT, 46))
    assert info is not None and info.status == "resolved"
    assert (await deliver(client, conversation_resolved(999))).json()["status"] == "ignored"


async def test_chatwoot_down_is_retried_reported_and_the_message_never_lost(bot):
    served, fake, client = await bot()
    fake.failures = 6  # the first six calls answer 503
    response = await deliver(client, message_created(6001, 47, CHARGED_TWICE))
    assert response.status_code == 200
    session_id = session_id_for(ACCOUNT, 47)
    assert [m.text for m in await served.desk.store.of_kind(session_id, "message")][0] == CHARGED_TWICE
    await fake.wait_for(lambda: len(fake.messages(47)) == 3)
    assert fake.failed == 6
    assert [c.body["content"].split(":")[0] for c in fake.messages(47)][0].startswith("Thanks, I'm bringing in")
    notices = [n for n in await served.desk.store.of_kind(session_id, "notice") if n.data.get("chatwoot")]
    assert [n.data["chatwoot"] for n in notices] == ["unreachable", "recovered"]
    assert "Chatwoot could not be reached (HTTP 503)" in notices[0].text


async def test_the_url_secret_and_the_signature_authenticate_every_delivery(bot):
    served, fake, client = await bot(signed=True, clock=lambda: 1_800_000_000.0)
    payload = message_created(7001, 48, CHARGED_TWICE)
    body = json.dumps(payload).encode()
    now = "1800000000"

    def signed(timestamp: str = now, sig: str | None = None) -> dict[str, str]:
        return {"X-Chatwoot-Timestamp": timestamp, "X-Chatwoot-Signature": sig or signature(SIGNING_SECRET, timestamp, body)}

    async def post(headers: dict[str, str], secret: str = PATH_SECRET) -> httpx.Response:
        return await client.post(f"/channels/chatwoot/webhook/{secret}", content=body, headers=headers)

    wrong_path = await post(signed(), secret="guess")
    assert wrong_path.status_code == 404 and set(wrong_path.json()) == {"error"}
    for headers in ({}, signed(sig="sha256=" + "0" * 64), signed(timestamp="1799999000"), signed(timestamp="soon")):
        refused = await post(headers)
        assert refused.status_code == 401 and set(refused.json()) == {"error"}, headers
    stale = await post(signed(timestamp=str(1_800_000_000 - 301)))
    assert "stale" in stale.json()["error"]
    assert await served.desk.store.get_session(session_id_for(ACCOUNT, 48)) is None
    accepted = await post(signed())
    assert accepted.status_code == 200 and accepted.json()["status"] == "stored"
    bad_json = b"{not json"
    assert (await client.post(f"/channels/chatwoot/webhook/{PATH_SECRET}", content=bad_json, headers={
        "X-Chatwoot-Timestamp": now, "X-Chatwoot-Signature": signature(SIGNING_SECRET, now, bad_json)})).status_code == 400


async def test_a_missing_secret_in_the_environment_is_one_line_naming_the_variable(db_path):
    with pytest.raises(ConfigError) as raised:
        async with serving(db_path, chatwoot_desk("http://127.0.0.1:9", signed=True), chatwoot_options={"env": {"CW_TOKEN": "x"}}):
            pass
    assert raised.value.problems == [
        "channels.chatwoot: set the environment variable CW_PATH (named in the desk file)",
        "channels.chatwoot: set the environment variable CW_SIGN (named in the desk file)",
    ]


async def test_the_webhook_secret_and_the_bot_token_never_reach_the_log(bot, caplog):
    caplog.set_level("INFO", logger="supportdesk.serve")
    served, fake, client = await bot()
    fake.failures = 5  # the retries and the report are logged too
    await deliver(client, message_created(8001, 49, CHARGED_TWICE))
    await deliver(client, message_created(8002, 49, "hello"), secret="wrong-guess")
    await fake.wait_for(lambda: len(fake.messages(49)) == 3)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "POST /channels/chatwoot/webhook/… 200" in logged and "Chatwoot could not be reached" in logged
    assert PATH_SECRET not in logged and TOKEN not in logged and "wrong-guess" not in logged


async def test_staffs_approval_in_another_process_reaches_chatwoot(db_path):
    from supportdesk.wiring import open_desk
    from supportdesk.engine.runner import drain

    async with fake_chatwoot() as fake:
        config = chatwoot_desk(fake.url)
        config.policy.approval_threshold = 20.0  # the $29.99 duplicate waits for staff
        options = {"env": ENV, "retry_first": 0.01, "retry_cap": 0.05}
        async with serving(db_path, config, chatwoot_options=options) as served, httpx.AsyncClient(
            base_url=served.url, timeout=30
        ) as client:
            await deliver(client, message_created(9001, 50, CHARGED_TWICE))
            # Issue 33: the agent's question is the desk's offer of the exact refund: the
            # question, then an interactive `input_select` (Chatwoot's documented shape:
            # content_attributes.items).
            await fake.wait_for(lambda: len(fake.messages(50)) == 3)
            question, select = fake.messages(50)[1:3]
            assert "refund it?" in question.body["content"] and "$29.99" in question.body["content"]
            assert select.body["content_type"] == "input_select"
            items = select.body["content_attributes"]["items"]
            assert [i["title"] for i in items] == ["Yes, refund $29.99 on charge CH-9004 (duplicate charge)", "No"]
            # The contact picks "Yes": Chatwoot sends message_updated with submitted_values.
            chosen = {
                **message_created(9003, 50, "Please choose:", message_type="outgoing"),
                "event": "message_updated",
                "content_type": "input_select",
                "content_attributes": {"items": items, "submitted_values": [items[0]]},
            }
            response = await deliver(client, chosen)
            assert response.json()["status"] == "stored"
            assert (await deliver(client, chosen)).json()["status"] == "duplicate"  # a redelivery
            await fake.wait_for(lambda: len(fake.messages(50)) == 4)
            assert "supervisor's approval" in fake.messages(50)[-1].body["content"]
            await served.conversations.idle()
            session_id = session_id_for(ACCOUNT, 50)
            [confirmation] = await served.desk.store.of_kind(session_id, "confirmation")
            assert confirmation.source == "button"
            session_id = session_id_for(ACCOUNT, 50)
            async with await open_desk(db_path, config) as staff:  # the TUI's process, say
                [pending] = await staff.runner.pending_approvals(session_id)
                await drain(staff.runner.decide_approval(session_id, pending.data["approval_id"], True))
            await fake.wait_for(lambda: len(fake.messages(50)) == 5)
    assert fake.messages(50)[-1].body["content"].startswith("Good news: the refund was approved and processed")
    assert not [c for c in fake.calls if c.path.endswith("toggle_status")]


async def test_a_message_stored_before_a_crash_is_answered_in_chatwoot_after_the_restart(db_path):
    from supportdesk.items import Message
    from supportdesk.store import SessionStore

    session_id = session_id_for(ACCOUNT, 51)
    async with await SessionStore.open(db_path) as store:  # the 200 was sent, then the worker died
        await store.create_session("triage", session_id=session_id, channel="chatwoot", meta={"chatwoot_conversation": 51})
        await store.append(session_id, [Message(role="customer", text=CHARGED_TWICE, agent="triage", meta={"chatwoot_message_id": 10001})])
    async with fake_chatwoot() as fake:
        options = {"env": ENV, "retry_first": 0.01, "retry_cap": 0.05}
        async with serving(db_path, chatwoot_desk(fake.url), chatwoot_options=options) as served:
            await fake.wait_for(lambda: len(fake.messages(51)) == 3)
            await served.conversations.idle()
    assert [c.body["content"][:9] for c in fake.messages(51)] == ["Thanks, I", "I found i", "Please ch"]


async def test_desk_staff_take_over_reply_through_chatwoot_and_the_bot_stays_silent_until_release(db_path):
    """A staff reply reaches the Chatwoot customer the way agent replies do (the relay), from a
    staff process; while staff hold it the customer's messages are stored and no agent answers."""
    from supportdesk.wiring import open_desk
    from supportdesk.staff import Actor

    async with fake_chatwoot() as fake:
        config = chatwoot_desk(fake.url)
        options = {"env": ENV, "retry_first": 0.01, "retry_cap": 0.05}
        async with serving(db_path, config, chatwoot_options=options) as served, httpx.AsyncClient(
            base_url=served.url, timeout=30
        ) as client:
            await deliver(client, message_created(9101, 60, CHARGED_TWICE))
            await fake.wait_for(lambda: len(fake.messages(60)) == 3)
            await served.conversations.idle()
            session_id = session_id_for(ACCOUNT, 60)
            async with await open_desk(db_path, config) as staff:  # the TUI's process, say
                await staff.runner.takeover(session_id, Actor("dana", "tui"))
                await staff.runner.staff_reply(session_id, "Hi, Dana here. I am looking at it myself.", Actor("dana", "tui"))
            await fake.wait_for(lambda: len(fake.messages(60)) == 4)
            reply = fake.messages(60)[-1]
            assert reply.body == {"content": "Hi, Dana here. I am looking at it myself.", "message_type": "outgoing",
                                  "private": False}
            # the customer writes while dana holds it: stored for her, nothing posted back
            response = await deliver(client, message_created(9102, 60, "thank you, take your time"))
            assert response.json()["status"] == "stored"
            await served.conversations.idle()
            assert len(fake.messages(60)) == 4 and not [c for c in fake.calls if c.path.endswith("toggle_status")]
            async with await open_desk(db_path, config) as staff:
                await staff.runner.release(session_id, summary="customer waits for the refund", by=Actor("dana", "tui"))
            await deliver(client, message_created(9103, 60, "yes please refund the duplicate"))
            await fake.wait_for(lambda: len(fake.messages(60, private=False)) >= 5)
    assert not fake.messages(60)[-1].body["content"].startswith("Hi, Dana")


async def test_one_delivery_sent_to_two_workers_at_once_is_stored_once(bot):
    """Chatwoot delivers one message to two `serve` workers on one database at the same moment:
    exactly one stores it and the other answers "duplicate" (never 500), the store refusing the
    second copy in its append's transaction (the channel's own check cannot see a copy the other
    worker is storing right now). Five conversations, each delivery to both workers at once."""
    import asyncio

    one, _, one_client = await bot()
    two, _, two_client = await bot()
    for conversation in range(70, 75):
        payload = message_created(7000 + conversation, conversation, CHARGED_TWICE)
        responses = await asyncio.gather(deliver(one_client, payload), deliver(two_client, payload))
        assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
        assert sorted(r.json()["status"] for r in responses) == ["duplicate", "stored"]
        messages = await one.desk.store.of_kind(session_id_for(ACCOUNT, conversation), "message")
        assert [m.meta.get("chatwoot_message_id") for m in messages if m.role == "customer"] == [7000 + conversation]
    await one.conversations.idle()
    await two.conversations.idle()
