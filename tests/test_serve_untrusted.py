"""`serve` against what a hostile or unlucky customer sends: a turn that keeps taking the worker
down is parked for staff, crafted messages never stall the server, payloads that break parsers
are refused with one line, and secrets never reach the log."""

from __future__ import annotations

import asyncio
import hashlib

import httpx

from supportdesk.channels.conversations import MAX_RESUMES, PARKED, RESUMED
from supportdesk.items import Message, Notice
from supportdesk.store import SessionStore
from tests.serve_harness import final_agent_reply, new_conversation, read_events
from tests.test_serve_process import CHARGED_TWICE, serve_process  # noqa: F401  (the fixture)

TOKEN = "t" * 43


async def _unanswered(db_path, resumed_before: int) -> str:
    """A web conversation whose last message was never answered, and whose turn was already
    started `resumed_before` times at start-up without ending (each attempt took the worker down)."""
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session("triage", channel="web", meta={"token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest()})
        [message] = await store.append(info.id, [Message(role="customer", text=CHARGED_TWICE, agent="triage")])
        for attempt in range(1, resumed_before + 1):
            await store.append(info.id, [Notice(notice_kind="info", agent="triage", text="resuming", data={RESUMED: message.seq, "attempt": attempt})])
    return info.id


async def _log(db_path, session_id: str) -> list:
    async with await SessionStore.open(db_path) as store:
        return await store.latest(session_id, 50)


async def test_a_resumed_turn_counts_its_attempt_before_it_runs(db_path, serve_process):
    sid = await _unanswered(db_path, resumed_before=0)
    served = serve_process()
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        await read_events(client, (sid, TOKEN), lambda ev: final_agent_reply(ev, "duplicate"))
    served.stop()
    attempts = [i for i in await _log(db_path, sid) if isinstance(i, Notice) and RESUMED in i.data]
    assert [(a.seq, a.data["attempt"]) for a in attempts] == [(2, 1)]  # right after the message, before any step


async def test_a_turn_that_took_the_worker_down_twice_is_parked_not_retried(db_path, serve_process):
    sid = await _unanswered(db_path, resumed_before=MAX_RESUMES)
    served = serve_process()
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        # The customer's page is told the answer is delayed; the worker stays up.
        events = await read_events(client, (sid, TOKEN), lambda ev: any(e.event == "status" for e in ev))
        assert [e.data["status"] for e in events if e.event == "status"] == ["delayed"]
        assert (await client.get("/healthz")).status_code == 200
    out = served.stop()
    log = await _log(db_path, sid)
    parked = [i for i in log if isinstance(i, Notice) and PARKED in i.data]
    assert len(parked) == 1 and parked[0].notice_kind == "limit" and parked[0].data[PARKED] == 1
    assert not any(isinstance(i, Message) and i.role == "agent" for i in log)  # not tried a third time
    assert "parked for staff" in out
    # Restarting again neither retries it nor parks it twice.
    again = serve_process()
    async with httpx.AsyncClient(base_url=again.url, timeout=30) as client:
        assert (await client.get("/healthz")).status_code == 200
    again.stop()
    assert len(await _log(db_path, sid)) == len(log)


async def test_healthz_and_other_customers_are_answered_while_a_crafted_message_is_read(serve_process):
    served = serve_process()
    crafted = "refund" + " " * 15_000 + "me"
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        first = await new_conversation(client)
        second = await new_conversation(client)
        async with asyncio.timeout(60):
            posted = await client.post(
                f"/api/conversations/{first[0]}/messages", json={"text": crafted}, headers={"Authorization": f"Bearer {first[1]}"}
            )
            assert posted.status_code == 202
            assert (await client.get("/healthz", timeout=10)).status_code == 200
            other = await client.post(
                f"/api/conversations/{second[0]}/messages", json={"text": CHARGED_TWICE}, headers={"Authorization": f"Bearer {second[1]}"}
            )
            assert other.status_code == 202
            await read_events(client, second, lambda ev: final_agent_reply(ev, "duplicate"), timeout=60)
            await read_events(client, first, lambda ev: final_agent_reply(ev), timeout=60)
    served.stop()


async def test_a_turn_failed_by_a_full_disk_is_retried_and_the_page_told_it_is_delayed(db_path, monkeypatch):
    import errno

    from supportdesk.config import load_desk
    from tests.serve_harness import REPO, say, serving

    async with serving(db_path, load_desk(REPO / "agents.toml")) as served:
        served.conversations.retry_first = 0.05
        store = served.desk.store
        real_append = store.append
        full = {"left": 2}  # the disk is full for the turn's first two writes, then freed

        async def append(session_id, items, **kwargs):
            if full["left"] and not any(getattr(i, "role", None) == "customer" for i in items):
                full["left"] -= 1
                raise OSError(errno.ENOSPC, "No space left on device")
            return await real_append(session_id, items, **kwargs)

        monkeypatch.setattr(store, "append", append)
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
            conversation = await new_conversation(client)
            events = await read_events(
                client, conversation, lambda ev: final_agent_reply(ev, "duplicate"),
                on_open=lambda: say(client, conversation, CHARGED_TWICE), timeout=30,
            )
        statuses = [e.data["status"] for e in events if e.event == "status"]
        assert statuses.count("delayed") == 2 and full["left"] == 0
        first_reply = next(i for i, e in enumerate(events) if e.event == "message" and e.data["from"] == "agent")
        assert max(i for i, e in enumerate(events) if e.event == "status") < first_reply
