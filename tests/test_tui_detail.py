"""Details on demand: the inspector takes the focus, any value, tool call, result or message opens
whole in a scrollable view (pretty JSON), and can be copied to the clipboard."""

from __future__ import annotations

import json

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.detail import DetailScreen, item_detail
from supportdesk.tui.widgets import ContextInspector, Conversation
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, until


async def open_seed(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
    await pilot.pause()


def detail_text(app) -> str:
    return str(app.screen.detail.text)


async def test_the_inspector_takes_the_focus_and_opens_a_value_whole(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_seed(pilot)
        inspector = app.chat.query_one(ContextInspector)
        # Tab from the input reaches the inspector (conversation, timeline, then the inspector).
        for _ in range(3):
            await pilot.press("tab")
        assert app.screen.focused is inspector
        await pilot.press("down", "down", "down")  # customer_email, customer_id, issue, refund
        await pilot.press("c")
        assert json.loads(app.clipboard) == {"charge_id": "CH-26", "amount": 29.0}
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, DetailScreen))
        # Cut in the table ({"charge_id": "CH-26", "a…), whole and pretty here.
        assert detail_text(app) == '{\n  "charge_id": "CH-26",\n  "amount": 29.0\n}'
        assert app.screen.detail.is_json
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        assert app.screen.focused is inspector
    await desk.close()


async def test_a_tool_result_opens_pretty_and_a_message_copies(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await open_seed(pilot)
        conversation = app.chat.query_one(Conversation)
        conversation.focus()
        await pilot.press("up")  # the last item: Billing's reply
        assert conversation.lines.cursor == 14
        await pilot.press("c")
        assert app.clipboard.startswith("I found two identical charges")
        await pilot.press("enter")  # a message opens whole
        await until(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert "5-10 business days" in detail_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        await pilot.press("up", "up")  # the refund_charge result
        assert conversation.lines.cursor == 12
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert json.loads(detail_text(app))["refund_id"] == "RF-1"
        assert detail_text(app).startswith('{\n  "refund_id"')
        await pilot.press("c")  # the detail view copies what it shows
        assert app.clipboard == detail_text(app)
    await desk.close()


def test_every_item_kind_has_a_detail() -> None:
    from datetime import datetime, timezone
    from typing import get_args

    from supportdesk.items import Item

    union = get_args(Item)
    assert len(union) == 14
    samples = {
        "message": {"role": "customer", "text": "hi"},
        "tool_call": {"call_id": "c", "name": "t", "arguments": {"a": 1}},
        "tool_result": {"call_id": "c", "name": "t", "output": "plain"},
        "handoff": {"from_agent": "a", "to_agent": "b", "reason": "r"},
        "context_set": {"key": "k", "value": None, "writer": "staff"},
        "notice": {"notice_kind": "info", "text": "n"},
        "takeover": {"person": "dana", "origin": "tui"},
        "release": {"person": "dana", "to_agent": "billing", "summary": "refund done"},
        "state_change": {"person": "dana", "state": "resolved"},
        "staff_reply": {"person": "dana", "text": "hello"},
        "tag_change": {"person": "dana", "added": ["vip"], "priority": "high"},
        "offer": {"offer_id": "o1", "tool": "refund_charge", "arguments": {"amount": 5}, "action": "refund $5.00", "text": "Shall I refund $5.00?"},
        "confirmation": {"offer_id": "o1", "tool": "refund_charge", "arguments": {"amount": 5}, "answer_seq": 3},
        "decline": {"offer_id": "o1", "tool": "refund_charge", "why": "no", "answer_seq": 3},
    }
    for cls in union:
        kind = cls.kind
        item = cls(agent="triage", seq=1, created_at=datetime(2026, 1, 1, tzinfo=timezone.utc), **samples[kind])
        assert item_detail(item).text
