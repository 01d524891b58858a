"""Replay: the same panes as of a cursor k; item and handoff steps, position text, fork."""

from __future__ import annotations


from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.projection import HANDOFF_PAGE
from supportdesk.tui.screens.browser import ConfirmFork
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import AgentBar, ContextInspector, Conversation, HandoffTimeline
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, seed_long, until




def position_line(screen) -> str:
    return str(screen.query_one("#position").render())


async def settle(pilot, screen, k: int) -> None:
    await until(pilot, lambda: screen.shown == k and not screen.workers)
    await pilot.pause()  # the messages the last step posted, handled


async def test_replay_steps_items_and_handoffs(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, replay_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        screen = app.screen
        await settle(pilot, screen, 14)
        assert "handoff 1 of 1 · item 14 of 14" in position_line(screen)
        conversation = screen.query_one(Conversation)
        assert conversation.last == 14

        await pilot.press("left")
        await settle(pilot, screen, 13)
        assert conversation.last == 13 and not conversation.holds(14)
        assert "item 13 of 14" in position_line(screen)

        await pilot.press("left_square_bracket")  # previous handoff
        await settle(pilot, screen, 5)
        assert "handoff 1 of 1 · item 5 of 14" in position_line(screen)
        assert screen.query_one(AgentBar).agent == "billing"
        inspector = screen.query_one(ContextInspector)
        # As of the handoff: only what triage had learnt, written by that same step.
        assert set(inspector.context) == {"customer_email", "issue"}
        assert inspector.changed == {"customer_email", "issue"}
        timeline = screen.query_one(HandoffTimeline)
        assert timeline.current == 5

        await pilot.press("left")
        await settle(pilot, screen, 4)
        assert screen.query_one(AgentBar).agent == "triage"  # before the handoff landed
        assert "handoff 0 of 1" in position_line(screen)
        assert timeline.current is None

        await pilot.press("right", "right", "right", "right")
        await settle(pilot, screen, 8)
        assert set(inspector.context) == {"customer_email", "issue", "customer_id"}
        assert inspector.changed == {"customer_id"}

        await pilot.press("home")
        await settle(pilot, screen, 0)
        assert not conversation.items and "item 0 of 14" in position_line(screen)
        assert inspector.context == {}
        await pilot.press("right_square_bracket")  # next handoff
        await settle(pilot, screen, 5)
        await pilot.press("end")
        await settle(pilot, screen, 14)
        assert set(inspector.context) == {"customer_email", "issue", "customer_id", "refund"}
        assert inspector.changed == set()  # the last step was the reply alone
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
    await desk.close()


async def test_replay_jumps_between_handoffs_of_a_long_session(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_long(desk.store, "long", 1000)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        app.open_replay("long", 0)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        screen = app.screen
        await settle(pilot, screen, 0)
        for n in range(1, 4):  # the next handoff each time: every tenth item
            await pilot.press("n")
            await settle(pilot, screen, 10 * n)
        assert "handoff 3 of 100 · item 30 of 1000" in position_line(screen)
        conversation = screen.query_one(Conversation)
        assert conversation.last == 30
        await pilot.press("end")
        await settle(pilot, screen, 1000)
        await pilot.press("p")
        await settle(pilot, screen, 990)  # 1000 is itself a handoff, so the one before it
        assert "handoff 99 of 100" in position_line(screen)
        assert len(conversation.items) <= 200  # a window, never the session
        # The timeline lists a page of handoffs around the cursor, not all 100.
        timeline = screen.query_one(HandoffTimeline)
        assert len(timeline.handoffs) == HANDOFF_PAGE and timeline.current == 990
        assert timeline.before == 100 - HANDOFF_PAGE
        # Selecting a handoff moves the cursor there.
        target = timeline.handoffs[0].seq
        timeline.focus()
        timeline.highlighted = timeline.get_option_index(f"h{target}")
        await pilot.press("enter")
        await settle(pilot, screen, target)
        assert conversation.last == target and conversation.holds(target)
        # The "earlier" row pages back without moving the cursor (handoffs sit every 10 items).
        before = timeline.before
        timeline.highlighted = timeline.get_option_index("earlier")
        await pilot.press("enter")
        await until(pilot, lambda: timeline.before == max(0, before - HANDOFF_PAGE))
        first = 10 * (timeline.before + 1)
        assert [h.seq for h in timeline.handoffs][:2] == [first, first + 10] and screen.position == target
    await desk.close()


async def test_fork_from_replay_opens_live_session(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None)
        app.open_replay(SEED_ID, 5)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        await settle(pilot, app.screen, 5)
        replay = app.screen
        # Fork asks first, as the browser's does; "no" leaves everything as it was.
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ConfirmFork))
        assert "items 1–5 of 14" in str(app.screen.query_one(".dialog-body").render())
        await pilot.press("n")
        await until(pilot, lambda: app.screen is replay)
        assert len(await desk.store.list_sessions()) == 1
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, ConfirmFork))
        await pilot.press("y")
        await until(pilot, lambda: app.screen is app.chat and app.chat.session_id not in (None, SEED_ID))
        new_id = app.chat.session_id
        info = await desk.store.get_session(new_id)
        assert (info.forked_from, info.forked_at, info.item_count) == (SEED_ID, 5, 5)
        await until(pilot, lambda: app.chat.query_one(Conversation).last == 5)
        assert app.chat.query_one(AgentBar).agent == "billing"
        assert [h.seq for h in app.chat.query_one(HandoffTimeline).handoffs] == [5]
        # The header says what it is a fork of, and from which item (once the load has read
        # the session's usage: the facts line is written last).
        await until(pilot, lambda: "fork of" in app.chat.query_one(AgentBar).facts.plain)
        assert f"fork of {SEED_ID} at item 5" in app.chat.query_one(AgentBar).facts.plain
        # The original is untouched.
        assert (await desk.store.get_session(SEED_ID)).item_count == 14
    await desk.close()


async def test_a_narrow_replay_names_its_keys_once_and_says_it_is_read_only(db_path, test_desk):
    from textual.widgets._footer import FooterKey, FooterLabel

    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, replay_id=SEED_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.total)
        await settle(pilot, app.screen, 14)
        await until(pilot, lambda: bool(app.screen.query(FooterLabel)))
        labels = [str(label.render()) for label in app.screen.query(FooterLabel)]
        descriptions = [key.description for key in app.screen.query(FooterKey)]
        assert "Item" in labels and "Handoff" in labels  # "←→ Item", not "← Item ←  → Item →"
        assert not any("←" in d or "→" in d for d in descriptions)
        # The facts line is cut at the right on a narrow terminal: what the screen is comes first.
        facts = app.screen.query_one("#session-facts")
        assert app.screen.query_one(AgentBar).facts.plain.startswith("replay · read-only · session ")
        assert facts.size.width >= len("replay · read-only")
    await desk.close()
