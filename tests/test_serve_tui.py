"""Staff in the terminal and a customer on the web, on one database: the web conversation appears
in the session browser and the chat screen without a keypress, and staff's approval in the TUI
reaches the customer's event stream at once."""

from __future__ import annotations

import asyncio

import httpx

from supportdesk.wiring import open_desk
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.browser import BrowserScreen, SessionTable
from supportdesk.tui.widgets import Conversation
from tests.serve_harness import final_agent_reply, new_conversation, read_events, say, write_approval_desk
from tests.test_serve_process import ServeProcess
from tests.tui_seed import until

CHARGED_TWICE = "I was charged twice for my subscription this month, dana@example.com"


async def test_a_web_conversation_is_live_in_the_tui_and_staff_approve_it_there(db_path, tmp_path):
    config = write_approval_desk(tmp_path)
    server = ServeProcess(db_path, "--config", str(config))
    desk = await open_desk(db_path, config)
    app = SupportDeskApp(desk=desk)
    try:
        async with app.run_test(size=(120, 36)) as pilot, httpx.AsyncClient(base_url=server.url, timeout=30) as web:
            await until(pilot, lambda: app.chat is not None and app.screen is app.chat)
            await pilot.press("ctrl+b")
            await until(pilot, lambda: isinstance(app.screen, BrowserScreen))
            browser = app.screen

            conversation = await new_conversation(web)
            await say(web, conversation, CHARGED_TWICE)
            # No key pressed: the browser reloads on the other process's writes.
            await until(pilot, lambda: conversation[0] in browser._sessions)
            assert browser._sessions[conversation[0]].channel == "web"
            assert browser.query_one(SessionTable).row_count >= 1

            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.chat)
            await app.open_session(conversation[0])
            chat = app.chat
            pane = chat.query_one(Conversation)

            def shown(predicate) -> bool:
                return any(predicate(i) for i in pane.items)

            await until(pilot, lambda: shown(lambda i: i.kind == "message" and i.role == "agent" and "duplicate" in i.text))
            # The refund is offered first (issue 33): the terminal shows the offer; the customer's
            # one yes runs it. (A second message sent before the served turn read the first would
            # be two answers to one offer, which lapses it: the test waits for the offer, says yes once.)
            await until(pilot, lambda: shown(lambda i: i.kind == "offer"))
            await say(web, conversation, "yes please refund the duplicate")
            await until(pilot, lambda: shown(lambda i: i.kind == "notice" and i.notice_kind == "approval_requested"))

            outcome = asyncio.create_task(
                read_events(web, conversation, lambda ev: final_agent_reply(ev, "approved and processed"))
            )
            await pilot.press("ctrl+y")  # staff approve in the terminal
            events = await outcome
            statuses = [e.data["status"] for e in events if e.event == "status"]
            assert statuses == ["checking", "checked"]
            await until(pilot, lambda: shown(lambda i: i.kind == "message" and "approved and processed" in i.text))
    finally:
        await desk.close()
        server.stop()
