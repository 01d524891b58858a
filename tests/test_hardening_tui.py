"""Issue 13 in the TUI: a message that cannot be stored is said plainly, stays in the input,
and the app stays up; a crash-cut turn is finished when its session is opened."""

from __future__ import annotations

import sqlite3

from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.items import Handoff, Message
from supportdesk.store import sessions as sessions_module
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import Conversation, Prompt
from tests.tui_seed import scripted_desk, until


def _disk_full(*args: object) -> int:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    raise exc


async def test_a_message_that_cannot_be_stored_stays_in_the_input(db_path, test_desk, tmp_path, monkeypatch):
    desk, _, _ = await scripted_desk(db_path, test_desk, [Answer("hello")])
    app = SupportDeskApp(desk=desk, export_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
        screen = app.chat
        monkeypatch.setattr(sessions_module._PreparedAppend, "run", _disk_full)
        prompt = screen.query_one(Prompt)
        prompt.value = "please refund the duplicate"
        prompt.focus()
        await pilot.press("enter")
        await until(pilot, lambda: prompt.value == "please refund the duplicate")
        shown = [n.message for n in app._notifications]
        assert any("disk is full" in m and str(db_path) in m for m in shown), shown
        assert any("not saved" in m for m in shown), shown
        assert app.is_running and app.screen is screen
        assert await desk.store.count_sessions() == 0  # no empty session left behind
        monkeypatch.undo()
        await pilot.press("enter")  # the same text, sent again once the disk has room
        await until(pilot, lambda: any(i.kind == "message" and i.role == "agent" for i in screen.query_one(Conversation).items))
        assert await desk.store.count_sessions() == 1
    await desk.close()


async def test_opening_a_session_finishes_a_turn_a_crash_cut_short(db_path, test_desk, tmp_path):
    script = [CallTools([RequestedCall("fresh-id", "refund", {"amount": 5})]), Answer("Refunded $5.")]
    desk, _, refunds = await scripted_desk(db_path, test_desk, script)
    # The log as a SIGKILL left it: the customer's message and a handoff, no answer.
    info = await desk.store.create_session(
        "triage", first=[Message(role="customer", text="refund 5 please", agent="triage")]
    )
    await desk.store.append(
        info.id, [Handoff(from_agent="triage", to_agent="billing", reason="refund", handoff_kind="route", agent="triage")]
    )
    app = SupportDeskApp(desk=desk, export_dir=tmp_path, session_id=info.id)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
        conversation = app.chat.query_one(Conversation)
        await until(pilot, lambda: any(i.kind == "message" and i.role == "agent" for i in conversation.items))
    assert refunds == [5]
    assert await desk.runner.unfinished_turn(info.id) is None
    await desk.close()
