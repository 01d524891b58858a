"""A call a real turn holds for staff approval is stored held (`ToolResult.awaits_approval`,
issue 36 item 6), and the same call made once staff grant it is stored made: every reader (the
TUI's item list, the desk's figures, the offline model's view) reads that field, so a held call
stored without it would be drawn done and counted as money moved. tests/test_approval_pending.py checks the readers on
items built by hand; this checks what the runner writes. Fast, one process, a real SQLite file."""

from __future__ import annotations

from supportdesk.engine.protocol import Answer, CallTools, RequestedCall, Transfer
from supportdesk.engine.runner import drain
from supportdesk.items import ToolResult
from supportdesk.tui.widgets.items import is_pending
from tests.test_runner import _desk


async def test_a_refund_held_by_a_turn_is_stored_held_and_made_once_staff_grant_it(db_path, test_desk):
    script = [
        Transfer("billing", "big refund"),
        Transfer("senior", "over limit", handoff_kind="escalate", context={"refund_amount": 300}),
        CallTools([RequestedCall("c9", "refund", {"amount": 300})]),
        Answer("I've asked for approval."),
        Answer("Your refund of $300 is done."),
    ]
    desk, _, refunds = await _desk(db_path, test_desk, script)
    async with desk:
        events = await drain(desk.runner.send(None, "refund 300"))
        sid = events[0].session_id
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
        [held] = [i for i in log if isinstance(i, ToolResult) and i.call_id == "c9"]
        assert refunds == [] and held.awaits_approval and is_pending(held)
        await drain(desk.runner.decide_approval(sid, "c9", True))
        log = await desk.store.range(sid, 1, await desk.store.last_seq(sid))
    results = [i for i in log if isinstance(i, ToolResult) and i.name == "refund"]
    assert refunds == [300] and [r.awaits_approval for r in results] == [True, False]
    assert [is_pending(r) for r in results] == [True, False]
