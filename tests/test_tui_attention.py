"""Staff are told when a conversation needs them: the header in words and colour, one notification,
the bell if the setting asks for it, approve/deny keys only while something waits; and a tool
call held for approval never reads as done."""

from __future__ import annotations

import pytest

from supportdesk.items import Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.tui.app import SupportDeskApp
from supportdesk.folds.desk_state import needs_staff
from supportdesk.tui.themes import remember_setting
from supportdesk.tui.widgets import AgentBar, Conversation
from supportdesk.tui.widgets.item_lines import ItemLines
from tests.tui_seed import SEED_ID, approval_notice, scripted_desk, seed_double_charge, until


def notice(kind: str) -> Notice:
    return Notice(notice_kind=kind, text=f"{kind} happened", agent="billing")


def test_needs_staff_reads_the_log() -> None:
    customer = Message(role="customer", text="I want a person", agent="triage")
    assert needs_staff([customer], []) == ""
    assert needs_staff([customer, notice("human_requested")], []) == "the customer asked for a person"
    assert needs_staff([customer, notice("limit")], []) == "a limit was reached"
    # Staff acting (a note, a manual handoff) or the customer's next turn ends it.
    note = Message(role="staff", text="on it", agent="billing")
    assert needs_staff([customer, notice("human_requested"), note], []) == ""
    manual = Handoff(from_agent="billing", to_agent="senior", handoff_kind="manual", reason="staff", agent="billing")
    assert needs_staff([notice("limit"), manual], []) == ""
    assert needs_staff([notice("limit"), customer], []) == ""
    # A pending approval always needs staff, and says for which tool.
    assert needs_staff([customer], [approval_notice()]) == "approval pending: refund"


async def seed_pending_refund(store) -> None:
    await seed_double_charge(store)
    await store.append(
        SEED_ID,
        [
            ToolCall(call_id="c9", name="refund", arguments={"amount": 300}, agent="senior"),
            ToolResult(call_id="c9", name="refund", output="waiting for staff approval: refund of $300.00",
                       agent="senior", awaits_approval=True),
            approval_notice(),
        ],
    )


@pytest.mark.parametrize("bell", [True, False])
async def test_a_pending_approval_is_announced_once_in_words_colour_and_bell(db_path, test_desk, bell):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_pending_refund(desk.store)
    remember_setting("bell", bell)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    rings: list[int] = []
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 17)
        await pilot.pause()
        bar = app.chat.query_one(AgentBar)
        assert bar.attention == "approval pending: refund"
        assert bar.has_class("-attention")
        assert "NEEDS STAFF" in str(bar.query_one("#attention").render())
        toasts = [n for n in app._notifications if n.title == "Staff needed"]
        assert len(toasts) == 1
        assert rings == ([1] if bell else [])
        # Approve and deny are offered in the footer while the approval waits.
        shown = {b.binding.action for b in app.chat.active_bindings.values() if b.enabled and b.binding.show}
        assert {"approve", "deny"} <= shown
        # More items that change nothing about it do not announce it again.
        await desk.store.append(SEED_ID, [Message(role="agent", text="still waiting", agent="senior")])
        await app.chat.sync()
        await pilot.pause()
        assert len([n for n in app._notifications if n.title == "Staff needed"]) == 1
        assert len(rings) == (1 if bell else 0)
        # Staff deny it (here from another terminal): the keys go, and the header says the denial
        # still needs a person; a note from one clears it.
        await desk.store.append(
            SEED_ID, [Notice(notice_kind="approval_denied", text="Staff denied refund.", data={"approval_id": "ap1"},
                             agent="senior")]
        )
        await app.chat.sync()
        await until(pilot, lambda: bar.attention == "an approval was denied")
        shown = {b.binding.action for b in app.chat.active_bindings.values() if b.enabled and b.binding.show}
        assert not {"approve", "deny"} & shown
        await desk.store.append(SEED_ID, [Message(role="staff", text="I'll call them.", agent="senior")])
        await app.chat.sync()
        await until(pilot, lambda: bar.attention == "")
        assert not bar.has_class("-attention")
    await desk.close()


@pytest.mark.parametrize("width", [80, 160])
async def test_why_staff_are_needed_fits_the_header_at_any_width(db_path, test_desk, width):
    """At 80 columns the reason takes the room of the session's facts (cut with an ellipsis if
    even that is too little, never clipped mid-word); at 160 both are shown whole."""
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_pending_refund(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    try:
        async with app.run_test(size=(width, 30)) as pilot:
            await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 17)
            await pilot.pause()
            bar = app.chat.query_one(AgentBar)
            attention, facts = bar.query_one("#attention"), bar.query_one("#session-facts")
            said = "⚠ NEEDS STAFF · approval pending: refund"
            assert said in str(attention.render())
            # The reason's box ends inside the bar, short of the needs-staff badge over its corner.
            assert attention.region.right <= bar.content_region.right
            if width < 120:
                assert not facts.display
                assert attention.region.width >= len(said)  # this reason fits once the facts make room
            else:
                assert facts.display and facts.region.width > 0 and "session" in str(facts.render())
    finally:
        await desk.close()


async def test_a_tool_call_waiting_for_approval_has_no_success_tick(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_pending_refund(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 17)
        await pilot.pause()
        lines = app.chat.query_one(ItemLines)
        pending = lines.text_of(16)
        assert "refund → waiting for staff approval" in pending
        assert "✓" not in pending
        done = lines.text_of(12)  # the refund_charge that went through
        assert "✓ refund_charge" in done
    await desk.close()


async def test_a_cleared_context_line_does_not_pretend_to_expand(db_path, test_desk):
    from supportdesk.items import ContextSet

    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    await desk.store.append(SEED_ID, [ContextSet(key="refund", value=None, writer="staff", agent="billing")])
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 15)
        await pilot.pause()
        lines = app.chat.query_one(ItemLines)
        before = lines.text_of(15)
        assert "context refund cleared" in before and "▸" not in before
        assert lines.toggle(15) is False
        assert lines.text_of(15) == before  # no ▾ over nothing
        assert lines.toggle(13) is True  # a key that was set still expands
    await desk.close()
