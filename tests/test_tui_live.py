"""Live follow: a session open in two places shows what either writes, reading only the new items."""

from __future__ import annotations

import asyncio
import sys
import textwrap


from supportdesk.engine.protocol import Answer, Transfer
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import AgentBar, Conversation, HandoffTimeline, Prompt
from tests.conftest import REPO
from tests.tui_seed import SEED_ID, scripted_desk, seed_double_charge, until




def spy_ranges(store) -> list[tuple[int, int]]:
    """Record every range the store is asked for (to prove nobody re-reads the session)."""
    calls: list[tuple[int, int]] = []
    original = store.range

    async def range_(session_id, first, last):
        calls.append((first, last))
        return await original(session_id, first, last)

    store.range = range_
    return calls


async def test_two_app_instances_on_one_database_follow_each_other(db_path, test_desk):
    watcher_desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(watcher_desk.store)
    writer_desk, _, _ = await scripted_desk(
        db_path, test_desk, [Transfer("senior", "app crashes", handoff_kind="escalate", context={"device": "ios"}), Answer("Try reinstalling.")]
    )
    watcher = SupportDeskApp(desk=watcher_desk, session_id=SEED_ID)
    writer = SupportDeskApp(desk=writer_desk, session_id=SEED_ID)
    async with watcher.run_test(size=(120, 40)) as wp:
        await until(wp, lambda: watcher.chat is not None and watcher.chat.query_one(Conversation).last == 14)
        reads = spy_ranges(watcher_desk.store)
        async with writer.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: writer.chat is not None and writer.chat.query_one(Conversation).last == 14)
            prompt = writer.chat.query_one(Prompt)
            prompt.value = "also the app crashes on my phone"
            await pilot.press("enter")
            await until(pilot, lambda: any(i.kind == "message" and i.text == "Try reinstalling." for i in writer.chat.query_one(Conversation).items))
            # The other instance picks it all up from the database.
            screen = watcher.chat
            await until(
                wp,
                lambda: any(i.kind == "message" and i.text == "Try reinstalling." for i in screen.query_one(Conversation).items)
                and not screen._apply_lock.locked(),  # every pane has folded the new items in
            )
            assert screen.query_one(AgentBar).agent == "senior"
            assert [h.to_agent for h in screen.query_one(HandoffTimeline).handoffs] == ["billing", "senior"]
            assert "device" in screen.query_one("#inspector").context
            shown = [i.seq for i in screen.query_one(Conversation).items]
            assert shown == list(range(1, (await watcher_desk.store.last_seq(SEED_ID)) + 1))
            # Only the new items were read, never the session from the start.
            assert reads and all(first > 14 for first, _ in reads)
    await writer_desk.close()
    await watcher_desk.close()


APPEND_FROM_ANOTHER_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, {repo!r})
    from supportdesk.wiring import open_desk
    from tests.conftest import make_test_tools
    from tests.scripted import ScriptedModel
    from supportdesk.config import parse_desk
    from tests.conftest import TEST_DESK

    async def main():
        desk = await open_desk({db!r}, parse_desk(TEST_DESK, "t.toml", tool_names=["refund", "explode"]),
                               provider=ScriptedModel([]), tools=make_test_tools()[0], customers=False)
        await desk.runner.staff_note({sid!r}, "note from another process")
        await desk.runner.force_handoff({sid!r}, "senior", "second terminal")
        await desk.close()

    asyncio.run(main())
    """
)


async def test_writes_from_another_os_process_show_up(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 14)
        script = APPEND_FROM_ANOTHER_PROCESS.format(repo=str(REPO), db=str(db_path), sid=SEED_ID)
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script, cwd=str(REPO))
        assert await proc.wait() == 0
        await until(pilot, lambda: app.chat.query_one(Conversation).last == 16 and not app.chat._apply_lock.locked())
        staff = [i for i in app.chat.query_one(Conversation).items if i.kind == "message" and i.role == "staff"]
        assert [m.text for m in staff] == ["note from another process"]
        assert app.chat.query_one(AgentBar).agent == "senior"
    await desk.close()


async def test_a_session_not_shown_is_not_followed(db_path, test_desk):
    """Writes to another session change nothing on screen."""
    desk, _, _ = await scripted_desk(db_path, test_desk)
    other, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    await other.store.create_session("triage", session_id="other")
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 14)
        await other.runner.staff_note("other", "not for this screen")
        # Then a write to the shown session: once it is on screen, the follower has been past the
        # other session's write too, and the screen shows the shown session's note alone.
        await other.runner.staff_note(SEED_ID, "for this screen")
        await until(pilot, lambda: app.chat.query_one(Conversation).last == 15)
        staff = [i for i in app.chat.query_one(Conversation).items if i.kind == "message" and i.role == "staff"]
        assert [m.text for m in staff] == ["for this screen"]
    await other.close()
    await desk.close()


async def test_new_items_below_are_announced_while_reading_further_up(db_path, test_desk):
    """Staff scrolled back are not yanked down by a write elsewhere; a bar says what arrived below."""
    desk, _, _ = await scripted_desk(db_path, test_desk)
    other, _, _ = await scripted_desk(db_path, test_desk)
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 20)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.query_one(Conversation).last == 14)
        conversation = app.chat.query_one(Conversation)
        bar = conversation.query_one("#newer")
        await until(pilot, lambda: conversation.max_scroll_y > 0)
        assert not bar.display
        conversation.focus()
        await pilot.press("home")  # back to the start of the session
        await until(pilot, lambda: conversation.scroll_y == 0)
        await other.runner.staff_note(SEED_ID, "note from the other terminal")
        await other.runner.force_handoff(SEED_ID, "senior", "second terminal")
        await until(pilot, lambda: conversation.end == 16)
        assert conversation.unseen == 2 and bar.display
        assert "2 new items below" in str(bar.render())
        assert conversation.scroll_y == 0  # the place being read stays put
        # ctrl+l goes to the latest, and the bar goes.
        await pilot.press("ctrl+l")
        await until(pilot, lambda: not bar.display)
        await until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y)
        assert conversation.unseen == 0 and conversation.last == 16
        # At the latest, new items are simply shown: no bar.
        await other.runner.staff_note(SEED_ID, "one more")
        await until(pilot, lambda: conversation.last == 17)
        assert not bar.display
    await other.close()
    await desk.close()
