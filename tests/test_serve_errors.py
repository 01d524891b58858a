"""Bad input and abuse get one clear `{"error": ...}` with the right status; nothing is lost."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from tests.serve_harness import new_conversation, repo_desk, say, serving

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def said(response: httpx.Response) -> str:
    try:
        return response.text
    except httpx.ResponseNotRead:
        return "(an opened event stream, not read)"


def assert_error(response: httpx.Response, status: int, words: str = "") -> None:
    assert response.status_code == status, said(response)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    assert "Traceback" not in response.text
    assert words.lower() in body["error"].lower()


async def get_events(client: httpx.AsyncClient, cid: str, **request) -> httpx.Response:
    """The event stream's answer, read only as far as its status: a refusal's body is read, an
    opened stream (200, endless, a keep-alive every 15 s) is closed at once, so a broken check
    fails the test's status assertion instead of hanging it. Bounded in time all the same."""
    async with asyncio.timeout(10):
        async with client.stream("GET", f"/api/conversations/{cid}/events", **request) as response:
            if response.status_code != 200:
                await response.aread()
            return response


@pytest.fixture
async def api(db_path):
    async with serving(db_path, repo_desk(), messages_per_minute=3) as served:
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            yield served, client


def messages_url(cid: str) -> str:
    return f"/api/conversations/{cid}/messages"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_malformed_json_is_400(api):
    _, client = api
    cid, token = await new_conversation(client)
    response = await client.post(messages_url(cid), content=b'{"text": "hi"', headers=bearer(token))
    assert_error(response, 400, "not valid JSON")
    assert_error(await client.post(messages_url(cid), content=b"\xff\xfe", headers=bearer(token)), 400)


async def test_unknown_conversation_is_404_and_so_is_a_session_from_another_channel(api):
    served, client = api
    _, token = await new_conversation(client)
    assert_error(await client.post(messages_url("0123456789ab"), json={"text": "hi"}, headers=bearer(token)), 404)
    assert_error(await get_events(client, "0123456789ab", headers=bearer(token)), 404)
    assert_error(await client.post(messages_url("../../etc"), json={"text": "hi"}, headers=bearer(token)), 404)
    # A terminal's session has no token: it is not reachable from the web at all.
    local = await served.desk.store.create_session("triage")
    assert_error(await client.post(messages_url(local.id), json={"text": "hi"}, headers=bearer(token)), 404)


async def test_a_missing_token_is_401_and_another_conversations_token_is_403(api):
    served, client = api
    cid, _ = await new_conversation(client)
    _, other_token = await new_conversation(client)
    assert_error(await client.post(messages_url(cid), json={"text": "hi"}), 401, "token")
    assert_error(await client.post(messages_url(cid), json={"text": "hi"}, headers={"Authorization": "Basic eDp5"}), 401)
    assert_error(await client.post(messages_url(cid), json={"text": "hi"}, headers=bearer(other_token)), 403)
    assert_error(await get_events(client, cid, params={"token": other_token}), 403)
    assert_error(await get_events(client, cid), 401)
    assert await served.desk.store.last_seq(cid) == 0  # nothing refused was stored


async def test_a_message_over_16_kb_is_413(api):
    served, client = api
    cid, token = await new_conversation(client)
    big = {"text": "x" * (16 * 1024 + 1)}
    assert_error(await client.post(messages_url(cid), json=big, headers=bearer(token)), 413, "16 KB")

    async def chunks():  # no Content-Length: the server stops reading past the limit
        for _ in range(40):
            yield b"x" * 1024

    assert_error(await client.post(messages_url(cid), content=chunks(), headers=bearer(token)), 413)
    assert await served.desk.store.last_seq(cid) == 0


async def test_empty_or_missing_text_is_422(api):
    _, client = api
    cid, token = await new_conversation(client)
    for body in ({"text": ""}, {"text": "  \n "}, {}, {"text": 5}, ["text"], "hello"):
        assert_error(await client.post(messages_url(cid), json=body, headers=bearer(token)), 422)


async def test_too_many_messages_a_minute_is_429_with_retry_after(api):
    served, client = api
    cid, token = await new_conversation(client)
    for n in range(3):
        await say(client, (cid, token), f"hello {n}")
    response = await client.post(messages_url(cid), json={"text": "one more"}, headers=bearer(token))
    assert_error(response, 429)
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    # The limit is per conversation: another customer is not slowed down.
    other = await new_conversation(client)
    await say(client, other, "hello")
    await served.conversations.idle()
    texts = [i.text for i in await served.desk.store.of_kind(cid, "message") if i.role == "customer"]
    assert texts == ["hello 0", "hello 1", "hello 2"]


async def test_a_bad_last_event_id_is_400(api):
    _, client = api
    cid, token = await new_conversation(client)
    headers = bearer(token) | {"Last-Event-ID": "seven"}
    assert_error(await get_events(client, cid, headers=headers), 400, "Last-Event-ID")


async def test_unknown_paths_and_methods_answer_in_json(api):
    _, client = api
    assert_error(await client.get("/api/nothing"), 404)
    assert_error(await client.get("/api/conversations"), 405)
    assert_error(await client.delete("/healthz"), 405)


async def test_a_crash_inside_the_desk_reaches_the_client_as_a_plain_500(api, monkeypatch):
    served, client = api
    cid, token = await new_conversation(client)

    async def broken(*args, **kwargs):
        raise RuntimeError("secret internal detail /var/lib/x.db")

    monkeypatch.setattr(served.conversations, "post", broken)
    response = await client.post(messages_url(cid), json={"text": "hi"}, headers=bearer(token))
    assert_error(response, 500)
    assert "secret internal detail" not in response.text and "RuntimeError" not in response.text


async def test_healthz(api):
    _, client = api
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


async def test_the_page_is_served_from_the_package_with_no_outside_resources(api):
    _, client = api
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    refs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert refs and all(ref.startswith("/static/") for ref in refs)
    script = await client.get("/static/chat.js")
    style = await client.get("/static/chat.css")
    assert script.status_code == style.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "EventSource" in script.text
    # Customer and desk text go in as text, never as HTML.
    assert "textContent" in script.text
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", script.text)
    assert "http://" not in script.text + style.text and "https://" not in script.text + style.text
