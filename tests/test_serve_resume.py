"""Issue 32: a restarted `serve` worker finishes the unfinished turns of its conversations (a
worker killed after triage's handoff, or after a tool's result), under the turn lease, exactly
once however many workers start; a message another worker's turn answered gets no second turn."""

from __future__ import annotations

import pytest

from supportdesk.channels.conversations import Conversations
from supportdesk.engine.protocol import Answer
from supportdesk.items import Handoff, Message, ToolCall, ToolResult
from supportdesk.store import open_store
from supportdesk.wiring import open_desk
from tests.scripted import ScriptedModel


async def _killed_mid_turn(db_path, after_tool: bool) -> str:
    """A web conversation as a worker SIGKILLed in billing's step leaves it."""
    async with await open_store(db_path) as store:
        info = await store.create_session(
            "triage", channel="web", first=[Message(role="customer", text="refund 5 please", agent="triage")]
        )
        items = [
            Message(role="agent", text="I'm bringing in our billing team.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="refund", agent="triage"),
        ]
        if after_tool:
            items += [
                ToolCall(call_id="c1", name="explode", arguments={}, agent="billing"),
                ToolResult(call_id="c1", name="explode", output="{}", agent="billing"),
            ]
        await store.append(info.id, items)
        return info.id


@pytest.mark.parametrize("after_tool", [False, True])
async def test_two_restarted_workers_finish_a_killed_turn_once(db_path, test_desk, after_tool) -> None:
    sid = await _killed_mid_turn(db_path, after_tool)
    first = await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("Billing here (worker 1).")]), customers=False)
    second = await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("Billing here (worker 2).")]), customers=False)
    async with first, second:
        workers = [Conversations(first), Conversations(second)]
        for worker in workers:
            await worker.start()
        for worker in workers:
            await worker.idle()
        for worker in workers:
            await worker.close()
        items = await first.store.latest(sid, 20)
    answers = [(i.agent, i.text) for i in items if isinstance(i, Message) and i.role == "agent" and i.agent == "billing"]
    assert len(answers) == 1 and answers[0][1].startswith("Billing here"), answers


async def test_a_turn_asked_for_a_message_already_answered_runs_no_second_turn(db_path, test_desk) -> None:
    """Two workers each asked for a turn on one message (a post, a restart): one answer."""
    async with await open_desk(db_path, test_desk, provider=ScriptedModel([Answer("One."), Answer("Two.")]), customers=False) as desk:
        info = await desk.store.create_session(
            "triage", channel="web", first=[Message(role="customer", text="hello", agent="triage")]
        )
        worker = Conversations(desk)
        worker.want_turn(info.id)
        await worker.idle()
        worker.want_turn(info.id)  # the other worker's ask, after the first turn answered
        await worker.idle()
        await worker.close()
        items = await desk.store.latest(info.id, 20)
    assert [i.text for i in items if isinstance(i, Message) and i.role == "agent"] == ["One."]


async def test_two_serve_processes_restarted_after_a_kill_mid_turn_answer_once(db_path, tmp_path) -> None:
    """Real processes: the log as a `serve` worker SIGKILLed right after triage's handoff left
    it; two workers start on it at once; the customer's open stream gets billing's answer, and
    the log holds it once."""
    import hashlib

    import httpx

    from supportdesk.store import SessionStore
    from tests.serve_harness import final_agent_reply, read_events
    from tests.test_serve_process import ServeProcess

    token = "t" * 43
    async with await SessionStore.open(db_path) as store:
        info = await store.create_session(
            "triage", channel="web", meta={"token_sha256": hashlib.sha256(token.encode()).hexdigest()},
            first=[Message(role="customer", text="I was charged twice this month, dana@example.com", agent="triage")],
        )
        await store.append(info.id, [
            Message(role="agent", text="Thanks, I'm bringing in our billing team to help with this.", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason="duplicate charge", agent="triage"),
        ])
    workers = [ServeProcess(db_path), ServeProcess(db_path)]
    try:
        async with httpx.AsyncClient(base_url=workers[0].url, timeout=30) as client:
            await read_events(client, (info.id, token), lambda ev: final_agent_reply(ev, "duplicate"))
    finally:
        for worker in workers:
            worker.stop()
    async with await SessionStore.open(db_path) as store:
        items = await store.latest(info.id, 50)
    billing = [i.text for i in items if isinstance(i, Message) and i.role == "agent" and i.agent == "billing"]
    assert len(billing) == 1 and "duplicate" in billing[0], billing
