"""Staff actions over the web API (`POST /api/staff/sessions/{id}/{action}`), on a real uvicorn
server on 127.0.0.1 and a real SQLite file: only the staff token acts (never a customer's token,
nothing without one), each action is audited with origin `api`, a staff reply reaches the web
customer's stream, and the API refuses (4xx, one line) exactly what `supportdesk takeover ...`
refuses with exit status 2, with the same words."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from supportdesk.cli import main as cli_main
from supportdesk.staff import audit
from tests.conftest import REPO
from tests.serve_harness import final_agent_reply, new_conversation, read_events, repo_desk, say, serving

STAFF_TOKEN = "staff-7c1d0b5e2f9a4c3e8b6d1a0f"


def staff(token: str | None = STAFF_TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def act(client: httpx.AsyncClient, sid: str, action: str, body: dict | None = None, token: str | None = STAFF_TOKEN):
    return await client.post(f"/api/staff/sessions/{sid}/{action}", json={"as": "ana", **(body or {})}, headers=staff(token))


async def test_only_the_staff_token_acts_and_a_refused_request_writes_nothing(db_path, caplog):
    caplog.set_level(logging.DEBUG)
    async with serving(db_path, repo_desk(), staff_token=STAFF_TOKEN) as served, \
            httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        sid, customer_token = conversation
        before = (await served.desk.store.get_session(sid)).item_count
        for token, words in ((None, "need the staff token"), ("not-it", "not the staff token"),
                             (customer_token, "not the staff token")):
            refused = await act(client, sid, "takeover", token=token)
            assert refused.status_code == 401, refused.text
            assert refused.json() == {"error": refused.json()["error"]} and words in refused.json()["error"]
            assert refused.headers["www-authenticate"] == "Bearer"
        assert (await served.desk.store.get_session(sid)).item_count == before
        # An unknown action is a 404 before any credential is looked at.
        assert (await act(client, sid, "delete")).status_code == 404
        taken = await act(client, sid, "takeover", {"reason": "VIP"})
        assert taken.status_code == 200, taken.text
        assert taken.json()["items"][0]["text"] == "ana took the conversation over: VIP"
    assert STAFF_TOKEN not in caplog.text and customer_token not in caplog.text


async def test_without_a_staff_token_configured_the_staff_api_is_off(db_path):
    async with serving(db_path, repo_desk()) as served, httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        sid, _ = await new_conversation(client)
        for token in (None, "anything"):
            off = await act(client, sid, "takeover", token=token)
            assert off.status_code == 403 and "SUPPORTDESK_STAFF_TOKEN" in off.json()["error"]
        assert (await served.desk.store.get_session(sid)).item_count == 0


async def test_take_over_reply_tag_state_release_over_http_reach_the_customer_and_the_audit(db_path):
    async with serving(db_path, repo_desk(), staff_token=STAFF_TOKEN) as served, \
            httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        sid = conversation[0]
        await say(client, conversation, "I was charged twice for my subscription this month, dana@example.com")
        await read_events(client, conversation, final_agent_reply)
        assert (await act(client, sid, "takeover")).status_code == 200
        replied = await act(client, sid, "reply", {"text": "Hi, this is Ana. I refunded the duplicate."})
        assert replied.status_code == 200, replied.text
        events = await read_events(client, conversation, lambda ev: any(e.data.get("from") == "staff" for e in ev))
        [shown] = [e for e in events if e.data.get("from") == "staff"]
        assert (shown.data["name"], shown.data["text"]) == ("ana", "Hi, this is Ana. I refunded the duplicate.")
        tagged = await act(client, sid, "tag", {"tags": ["vip", "refund"], "priority": "high"})
        assert tagged.status_code == 200 and tagged.json()["items"][0]["text"] == "ana tagged vip, refund and set priority high"
        released = await act(client, sid, "release", {"to": "billing", "summary": "refunded the duplicate"})
        assert released.status_code == 200, released.text
        snoozed = await act(client, sid, "state", {"state": "snoozed", "until": "2h", "reason": "waiting on the bank"})
        assert snoozed.status_code == 200, snoozed.text
        log = await served.desk.store.range(sid, 1, await served.desk.store.last_seq(sid))
        assert [(e.action, e.person, e.origin) for e in audit(log)] == [
            ("takeover", "ana", "api"), ("reply", "ana", "api"), ("tag", "ana", "api"),
            ("release", "ana", "api"), ("state", "ana", "api"),
        ]
        [row] = [r for r in await served.desk.store.desk() if r.session.id == sid]
        assert row.state.state == "snoozed" and row.state.tags == ("vip", "refund") and row.state.priority == "high"


# (CLI arguments after the session id, the API's action and body, the API's status.) Run in this
# order on one conversation: each refusal leaves it as it was, the accepted steps between move it.
CASES = [
    (["release"], "release", {}, 409),                                   # nobody took it
    (["state", "snoozed"], "state", {"state": "snoozed"}, 409),          # a snooze needs its end
    (["state", "snoozed", "--until=-2h"], "state", {"state": "snoozed", "until": "-2h"}, 409),  # in the past
    (["state", "snoozed", "--until", "soonish"], "state", {"state": "snoozed", "until": "soonish"}, 422),  # unreadable
    (["state", "ai", "--until", "2h"], "state", {"state": "ai", "until": "2h"}, 409),  # only a snooze ends
    (["tag"], "tag", {}, 409),                                            # nothing to tag
    (["reply", " "], "reply", {"text": " "}, 409),                       # an empty reply
    ("takeover", None, None, 200),
    (["takeover"], "takeover", {}, 409),                                 # already held
    (["release", "--to", "nobody"], "release", {"to": "nobody"}, 409),   # no such agent
    (["state", "ai"], "state", {"state": "ai"}, 409),                    # held: release it first
    ("resolve", None, None, 200),
    (["reply", "hello"], "reply", {"text": "hello"}, 409),               # resolved
]


async def test_the_api_refuses_exactly_what_the_cli_refuses_with_the_same_words(db_path, capsys):
    config = REPO / "agents.toml"
    async with serving(db_path, repo_desk(), staff_token=STAFF_TOKEN) as served, \
            httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        sid, _ = await new_conversation(client)
        store = served.desk.store

        async def cli(*args: str) -> tuple[int, str]:
            capsys.readouterr()
            code = await asyncio.to_thread(cli_main, [args[0], sid, *args[1:], "--as", "ana", "--db", str(db_path),
                                                      "--config", str(config)])
            return code, capsys.readouterr().err

        for cli_args, action, body, status in CASES:
            if cli_args == "takeover":
                assert (await act(client, sid, "takeover")).status_code == 200
                continue
            if cli_args == "resolve":
                assert (await act(client, sid, "release")).status_code == 200
                assert (await act(client, sid, "state", {"state": "resolved"})).status_code == 200
                continue
            head = await store.last_seq(sid)
            code, err = await cli(*cli_args)
            assert code == 2, (cli_args, err)
            answer = await act(client, sid, action, body)
            assert answer.status_code == status, (cli_args, answer.text)
            message = answer.json()["error"]
            assert "\n" not in message and message in err, (cli_args, message, err)
            assert await store.last_seq(sid) == head, cli_args  # neither wrote anything
        # A session nobody has: 404 here, exit 2 there.
        missing = await act(client, "no-such-session", "takeover")
        assert missing.status_code == 404 and "no session 'no-such-session'" in missing.json()["error"]


async def test_a_body_that_is_not_a_staff_action_is_refused_in_one_line(db_path):
    async with serving(db_path, repo_desk(), staff_token=STAFF_TOKEN) as served, \
            httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        sid, _ = await new_conversation(client)
        for body, words in (({"as": ""}, 'name the member of staff acting in "as"'),
                            ({"as": "ana", "tags": "vip"}, '"tags" must be a list of strings'),
                            ({"as": "ana", "text": 3}, '"text" must be a string')):
            refused = await client.post(f"/api/staff/sessions/{sid}/tag", json=body, headers=staff())
            assert refused.status_code == 422 and refused.json()["error"] == words
        bad = await client.post(f"/api/staff/sessions/{sid}/tag", content=b"{", headers=staff())
        assert bad.status_code == 400 and bad.json()["error"] == "the body is not valid JSON"
        assert (await served.desk.store.get_session(sid)).item_count == 0


async def test_the_serve_command_reads_the_staff_token_from_its_environment_and_never_prints_it(db_path, monkeypatch):
    from tests.test_serve_process import ServeProcess

    monkeypatch.setenv("SUPPORTDESK_STAFF_TOKEN", STAFF_TOKEN)
    process = ServeProcess(db_path)  # a real `supportdesk serve` on 127.0.0.1, access log on
    try:
        assert "staff API on" in "".join(process.lines)
        async with httpx.AsyncClient(base_url=process.url, timeout=30) as client:
            sid, customer_token = await new_conversation(client)
            assert (await act(client, sid, "takeover", token=customer_token)).status_code == 401
            taken = await act(client, sid, "takeover", {"reason": "VIP"})
            assert taken.status_code == 200, taken.text
    finally:
        out = process.stop()
    assert f"POST /api/staff/sessions/{sid}/takeover 200" in out  # the access log saw it
    assert STAFF_TOKEN not in out and customer_token not in out


async def test_a_message_written_while_staff_held_it_is_answered_once_after_a_release_over_http(db_path):
    # issue 39 §3: the customer wrote while Ana held the conversation; her release gives that
    # message its turn on the server (`want_turn`), and the customer's stream gets one answer.
    async with serving(db_path, repo_desk(), staff_token=STAFF_TOKEN) as served, \
            httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        conversation = await new_conversation(client)
        sid = conversation[0]
        await say(client, conversation, "I was charged twice for my subscription this month, dana@example.com")
        await read_events(client, conversation, final_agent_reply)
        assert (await act(client, sid, "takeover")).status_code == 200
        waiting = await say(client, conversation, "hello? is anyone still there?")
        await served.conversations.idle()
        store = served.desk.store
        assert [i for i in await store.range(sid, waiting, await store.last_seq(sid)) if i.kind == "message" and i.role == "agent"] == []
        released = await act(client, sid, "release", {"summary": "checked the card"})
        assert released.status_code == 200, released.text
        await served.conversations.idle()
        after = await store.range(sid, waiting, await store.last_seq(sid))
        answers = [i for i in after if i.kind == "message" and i.role == "agent"]
        assert len(answers) == 1, [i.kind for i in after]
        await act(client, sid, "tag", {"tags": ["vip"]})  # another staff action asks for no turn
        await served.conversations.idle()
        later = await store.range(sid, answers[0].seq + 1, await store.last_seq(sid))
        assert [i.kind for i in later if i.kind == "message"] == []
