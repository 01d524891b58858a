"""Untrusted payloads on the HTTP API and the Chatwoot webhook: refused with one line (4xx) or
stored as the customer wrote them, never a 500; the webhook's URL secret never in a log line."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from supportdesk.channels.chatwoot import session_id_for, signature
from supportdesk.channels.payload import MAX_JSON_DEPTH, nesting_depth
from supportdesk.config import load_desk
from tests.chatwoot_fake import ACCOUNT, message_created
from tests.serve_harness import REPO, new_conversation, serving
from tests.test_chatwoot import PATH_SECRET, SIGNING_SECRET, bot, deliver  # noqa: F401  (the fixture)

DEEP = b'{"text": ' + b"[" * 8_000 + b"]" * 8_000 + b"}"


def _one_line_error(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"} and "\n" not in body["error"], body
    return body["error"]


async def _post(client: httpx.AsyncClient, conversation: tuple[str, str], content: bytes) -> httpx.Response:
    cid, token = conversation
    return await client.post(
        f"/api/conversations/{cid}/messages", content=content,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )


def test_nesting_is_measured_outside_strings_in_one_pass():
    assert nesting_depth(b'{"a": [[1], {"b": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]}') == 3
    assert nesting_depth(b'["\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]') == 1
    assert nesting_depth(b"[" * 100_000) > MAX_JSON_DEPTH


async def test_the_api_refuses_deep_nesting_and_stores_surrogates_and_nul_replaced(db_path):
    async with serving(db_path, load_desk(REPO / "agents.toml")) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            conversation = await new_conversation(client)
            deep = await _post(client, conversation, DEEP)
            assert deep.status_code == 400 and "nests deeper than 32" in _one_line_error(deep)
            staff = await client.post("/api/conversations", content=DEEP)
            assert staff.status_code == 400
            # A lone surrogate (not UTF-8) and a NUL: stored, each replaced by U+FFFD.
            odd = await _post(client, conversation, b'{"text": "refund \\ud800 me\\u0000 please"}')
            assert odd.status_code == 202, odd.text
            [stored] = await served.desk.store.of_kind(conversation[0], "message", upto=odd.json()["seq"])
            assert stored.text == "refund \ufffd me\ufffd please"


@pytest.mark.postgres
async def test_on_postgresql_a_nul_byte_is_stored_replaced_not_a_500(pg_url):
    async with serving(pg_url, load_desk(REPO / "agents.toml")) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            conversation = await new_conversation(client)
            response = await _post(client, conversation, b'{"text": "my card \\u0000 was charged \\udfff twice"}')
            assert response.status_code == 202, response.text
            [stored] = await served.desk.store.of_kind(conversation[0], "message", upto=response.json()["seq"])
            assert stored.text == "my card \ufffd was charged \ufffd twice"
            await served.conversations.idle()


@pytest.mark.parametrize(
    "change, said",
    [
        ({"private": "true"}, '"private" must be true or false'),
        ({"private": 1}, '"private" must be true or false'),
        ({"message_type": False}, "message_type must be one of"),
        ({"message_type": 0.0}, "message_type must be one of"),
        ({"message_type": "INCOMING"}, "message_type must be one of"),
        ({"id": True}, "integers"),
        ({"content": ["refund me"]}, '"content" must be a string'),
    ],
)
async def test_chatwoot_fields_are_read_by_their_documented_types(bot, change, said):
    served, fake, client = await bot()
    response = await deliver(client, {**message_created(8001, 60, "refund me please"), **change})
    assert response.status_code == 422 and said in _one_line_error(response)
    assert await served.desk.store.get_session(session_id_for(ACCOUNT, 60)) is None


async def test_chatwoot_message_type_zero_is_incoming_and_oversized_text_names_the_limit(bot):
    served, fake, client = await bot()
    ok = await deliver(client, {**message_created(8101, 61, "I was charged twice"), "message_type": 0})
    assert ok.status_code == 200 and ok.json()["status"] == "stored"
    big = await deliver(client, message_created(8102, 61, "x" * 20_000))
    assert big.status_code == 413 and "over 16 KB" in _one_line_error(big)
    deep = await client.post(f"/channels/chatwoot/webhook/{PATH_SECRET}", content=DEEP)
    assert deep.status_code == 400 and "nests deeper" in _one_line_error(deep)
    await served.conversations.idle()


async def test_a_nan_timestamp_is_not_a_time(bot):
    served, fake, client = await bot(signed=True, clock=lambda: 1_800_000_000.0)
    body = json.dumps(message_created(8201, 62, "refund me")).encode()
    for stamp in ("nan", "NaN", "inf", "-Infinity"):
        response = await client.post(f"/channels/chatwoot/webhook/{PATH_SECRET}", content=body, headers={
            "X-Chatwoot-Timestamp": stamp, "X-Chatwoot-Signature": signature(SIGNING_SECRET, stamp, body)})
        assert response.status_code == 401 and "not a time" in _one_line_error(response), stamp
    assert await served.desk.store.get_session(session_id_for(ACCOUNT, 62)) is None


async def test_the_webhook_secret_never_reaches_a_log_line(bot, caplog, monkeypatch):
    served, fake, client = await bot()

    async def broken(*args, **kwargs):
        raise RuntimeError("the store is gone")

    monkeypatch.setattr(served.desk.store, "get_session", broken)
    with caplog.at_level(logging.DEBUG):
        response = await deliver(client, message_created(8301, 63, "refund me"))
    assert response.status_code == 500
    # (httpx and httpcore are this test's own client, which knows the URL.)
    served_lines = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
    assert any("failed" in r.getMessage() for r in served_lines)
    assert not [r.getMessage() for r in served_lines if PATH_SECRET in r.getMessage() or PATH_SECRET in (r.exc_text or "")]


# --- limits per client ----------------------------------------------------------------------------


async def test_one_client_creating_conversations_or_spreading_messages_gets_429_with_retry_after(db_path):
    from supportdesk.channels.conversations import ClientLimits

    limits = ClientLimits(conversations_per_minute=3, messages_per_minute=4)
    async with serving(db_path, load_desk(REPO / "agents.toml"), client_limits=limits) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            opened = [await new_conversation(client) for _ in range(3)]
            refused = await client.post("/api/conversations")
            assert refused.status_code == 429 and "3 new conversations from one client" in _one_line_error(refused)
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            # Messages spread over conversations count for the client, not only each conversation.
            statuses = [(await _post(client, opened[i % 3], b'{"text": "hello"}')).status_code for i in range(5)]
            assert statuses == [202, 202, 202, 202, 429]
            last = await _post(client, opened[2], b'{"text": "hello"}')
            assert "4 messages from one client" in _one_line_error(last) and "retry-after" in last.headers
            await served.conversations.idle()


async def test_the_staff_api_is_limited_per_staff_token(db_path):
    from supportdesk.channels.conversations import ClientLimits

    limits = ClientLimits(staff_actions_per_minute=2)
    async with serving(db_path, load_desk(REPO / "agents.toml"), staff_token="s3cret", client_limits=limits) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=30, headers={"Authorization": "Bearer s3cret"}) as client:
            sid = (await new_conversation(client))[0]
            said = [
                await client.post(f"/api/staff/sessions/{sid}/tag", json={"as": "Ana", "tags": [f"t{i}"]}) for i in range(3)
            ]
            assert [r.status_code for r in said] == [200, 200, 429], [r.text for r in said]
            assert "staff actions" in _one_line_error(said[2]) and "retry-after" in said[2].headers


@pytest.mark.postgres
async def test_the_per_conversation_limit_holds_across_two_workers_on_postgresql(pg_url):
    from tests.test_serve_process import ServeProcess

    first, second = ServeProcess(pg_url, "--messages-per-minute", "4"), ServeProcess(pg_url, "--messages-per-minute", "4")
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as one, httpx.AsyncClient(base_url=second.url, timeout=30) as two:
            conversation = await new_conversation(one)
            statuses = [(await _post(one if i % 2 else two, conversation, b'{"text": "hello"}')).status_code for i in range(8)]
            assert statuses.count(202) == 4 and statuses[4:] == [429] * 4, statuses
    finally:
        first.stop()
        second.stop()


# --- the Chatwoot outbox ---------------------------------------------------------------------------


async def test_a_reply_stored_but_not_relayed_when_serve_stopped_is_delivered_after_the_restart(db_path):
    from supportdesk.items import Message as StoredMessage
    from tests.chatwoot_fake import fake_chatwoot
    from tests.test_chatwoot import ENV, chatwoot_desk

    options = {"env": ENV, "retry_first": 0.01, "retry_cap": 0.05}
    session_id = session_id_for(ACCOUNT, 70)
    async with fake_chatwoot() as fake:
        fake.failures = 10_000  # Chatwoot down: every reply waits in the log
        async with serving(db_path, chatwoot_desk(fake.url), chatwoot_options=options) as served:
            async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
                assert (await deliver(client, message_created(9901, 70, "I was charged twice, dana@example.com"))).status_code == 200
            await served.conversations.idle()
            replies = [m for m in await served.desk.store.of_kind(session_id, "message") if isinstance(m, StoredMessage) and m.role == "agent"]
            assert len(replies) == 2 and fake.messages(70) == []
        fake.failures = 0
        async with serving(db_path, chatwoot_desk(fake.url), chatwoot_options=options):
            await fake.wait_for(lambda: len(fake.messages(70)) == 3)  # (the second asks: its offer's buttons follow)
        # Delivered once each, in order, and not again after a second restart.
        async with serving(db_path, chatwoot_desk(fake.url), chatwoot_options=options) as served:
            await served.conversations.idle()
    assert [c.body["content"] for c in fake.messages(70)] == [m.text for m in replies] + ["Please choose:"]
    assert fake.messages(70)[-1].body["content_type"] == "input_select"


async def test_a_first_delivery_raced_by_another_worker_is_not_a_500(bot, monkeypatch):
    """Two workers got the same first delivery: the other created the session (and stored the
    message) between this worker's look and its create. This one answers duplicate, not 500."""
    from supportdesk.items import Message as StoredMessage

    served, fake, client = await bot()
    store = served.desk.store
    session_id = session_id_for(ACCOUNT, 71)
    await store.create_session("triage", session_id=session_id, channel="chatwoot", meta={"chatwoot_conversation": 71})
    await store.append(session_id, [StoredMessage(role="customer", text="refund me", agent="triage", meta={"chatwoot_message_id": 9951})])
    real_get = store.get_session
    looked = {"first": True}

    async def get_session(sid):
        if sid == session_id and looked["first"]:  # read just before the other worker's create landed
            looked["first"] = False
            return None
        return await real_get(sid)

    monkeypatch.setattr(store, "get_session", get_session)
    response = await deliver(client, message_created(9951, 71, "refund me"))
    assert response.status_code == 200 and response.json()["status"] == "duplicate", response.text
    assert len(await store.of_kind(session_id, "message")) == 1
