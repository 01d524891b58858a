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
