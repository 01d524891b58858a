"""Issue 33 §6: offers to the customer and their answers are marks in the handoff timeline, in
log order among the handoffs, on the chat screen (stored and live) and in replay; a session's
marks never show beside another session's handoffs."""

from __future__ import annotations

from supportdesk.items import Confirmation, Decline, Handoff, Message, Offer
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import HandoffTimeline
from tests.tui_seed import SEED_ID, chat_loaded, repo_desk, seed_double_charge, until


# Marks are drawn with the page they sit on: a screen that never shows them fails in seconds.
LIMIT = 10.0


def rows(timeline: HandoffTimeline) -> list[str]:
    """Each option of the timeline as one plain line (its two lines joined)."""
    return [" ".join(str(timeline.get_option_at_index(i).prompt).split()) for i in range(timeline.option_count)]


AFTER_SEED = [
    Offer(offer_id="o1", tool="issue_credit", arguments={"customer_id": "CUS-1001", "amount": 5.0},
          action="credit $5.00 to CUS-1001", text="Shall I credit $5.00 to your account?", agent="billing"),
    Message(role="customer", text="yes please", agent="billing"),
    Confirmation(offer_id="o1", tool="issue_credit", arguments={"customer_id": "CUS-1001", "amount": 5.0}, agent="billing"),
    Offer(offer_id="o2", tool="change_plan", arguments={"customer_id": "CUS-1001", "plan": "basic"},
          action="move CUS-1001 to the basic plan", text="Shall I move you to Basic?", agent="billing"),
    Message(role="customer", text="no wait, the cheaper one", agent="billing"),
    Decline(offer_id="o2", tool="change_plan", why="change_of_mind", agent="billing"),
    Handoff(from_agent="billing", to_agent="triage", reason="done here", handoff_kind="return", agent="billing"),
]


async def test_offers_and_answers_are_marks_among_the_handoffs(db_path) -> None:
    desk = await repo_desk(db_path)
    await seed_double_charge(desk.store)
    await desk.store.append(SEED_ID, AFTER_SEED)
    await desk.store.create_session("triage", session_id="other", first=[Message(role="customer", text="hello", agent="triage")])
    await desk.close()
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db_path), session_id=SEED_ID, theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await chat_loaded(pilot, SEED_ID)
        timeline = app.chat.query_one(HandoffTimeline)
        await until(pilot, lambda: len(rows(timeline)) == 6, limit=LIMIT)
        lines = rows(timeline)
        assert lines[0].split()[2:] == ["Triage", "→", "Billing", "route", "duplicate", "charge", "on", "the", "March", "invoice"]
        assert "◇ offer · Billing" in lines[1] and "credit $5.00 to CUS-1001" in lines[1]
        assert f"✔ yes to {lines[1].split()[1]} · Billing" in lines[2] and "confirmed in words" in lines[2]
        assert "◇ offer · Billing" in lines[3] and "move CUS-1001 to the basic plan" in lines[3]
        assert f"✘ no to {lines[3].split()[1]} · Billing" in lines[4] and "the customer changed their mind" in lines[4]
        assert lines[5].split()[2:6] == ["Billing", "↩", "Triage", "return"]  # the handoff after them

        # Live: an offer appended while the session is shown joins the end as a mark.
        await app.desk.store.append(SEED_ID, [
            Offer(offer_id="o3", tool="refund_charge", arguments={"charge_id": "CH-25"}, action="refund $29.00 of CH-25",
                  text="Shall I refund CH-25 too?", agent="triage"),
        ])
        await until(pilot, lambda: any("refund $29.00 of CH-25" in row for row in rows(timeline)), limit=LIMIT)
        assert "◇ offer · Triage" in rows(timeline)[-1]

        # Another session: none of the first one's marks beside its (no) handoffs.
        await app.open_session("other")
        await chat_loaded(pilot, "other")
        await until(pilot, lambda: app.chat.query_one(HandoffTimeline).marks_of == "other", limit=LIMIT)
        assert not any("offer" in row or "✔" in row or "✘" in row for row in rows(app.chat.query_one(HandoffTimeline)))


async def test_replay_lists_the_marks_too(db_path) -> None:
    desk = await repo_desk(db_path)
    await seed_double_charge(desk.store)
    await desk.store.append(SEED_ID, AFTER_SEED)
    await desk.close()
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db_path), replay_id=SEED_ID, theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        timeline = app.screen.query_one(HandoffTimeline)
        await until(pilot, lambda: len(rows(timeline)) == 6, limit=LIMIT)
        assert [row.lstrip("▶ ").split()[2] for row in rows(timeline)] == ["Triage", "◇", "✔", "◇", "✘", "Billing"]


async def test_a_new_conversation_s_offer_and_yes_join_the_timeline_live(db_path) -> None:
    """A conversation begun on the chat screen: the gate's offer and the customer's yes come
    through the live feed only, and both become marks."""
    from supportdesk.engine.protocol import Answer, Transfer
    from supportdesk.wiring import open_desk
    from tests.scripted import ScriptedModel
    from tests.test_confirmation import call, gated_desk, gated_tools
    from tests.test_tui_chat import type_and_send

    tools, ran = gated_tools()
    script = [Transfer("billing", "money"), call("refund", amount=5), Answer("Refunded $5.00.")]
    desk = await open_desk(db_path, gated_desk(), provider=ScriptedModel(script), tools=tools, customers=False)
    async with desk:
        app = SupportDeskApp(desk=desk, theme="desk-dark")
        async with app.run_test(size=(120, 40)) as pilot:
            await chat_loaded(pilot)
            timeline = app.chat.query_one(HandoffTimeline)
            await type_and_send(pilot, "refund the duplicate please")
            await until(pilot, lambda: any("◇ offer" in row and "refund $5.00" in row for row in rows(timeline)), limit=LIMIT)
            assert ran == []
            await type_and_send(pilot, "yes")
            await until(pilot, lambda: any("✔ yes to #" in row for row in rows(timeline)), limit=LIMIT)
            assert ran == [("refund", {"amount": 5})]
            assert [row.split()[2] for row in rows(timeline)] == ["Triage", "◇", "✔"]
