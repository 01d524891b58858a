"""The inbox, driven through Pilot: rows by urgency with their states, filters, Enter to open,
approve/deny from the row (the refund really happens through the runner), the row under the
cursor never moved by new activity, sessions from another OS process appearing live, and the
needs-staff badge on every screen."""

from __future__ import annotations

import pytest

import subprocess
import sys

from supportdesk.engine.protocol import Answer
from supportdesk.items import Message, Notice
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.browser import BrowserScreen
from supportdesk.text import plain_line
from supportdesk.tui.screens.inbox import InboxScreen, InboxTable, keep_place, waited
from supportdesk.tui.widgets.staff_badge import StaffBadge
from tests.conftest import REPO
from tests.inbox_seed import INBOX_NOW, seed_desk_states
from tests.tui_seed import chat_loaded, inbox_app, inbox_loaded, layout_settled, scripted_desk, seeded_inbox, until


def inbox_of(app: SupportDeskApp) -> InboxScreen:
    screen = app.screen
    assert isinstance(screen, InboxScreen)
    return screen


def cells(screen: InboxScreen) -> list[list[str]]:
    table = screen.query_one(InboxTable)
    return [[str(c) for c in table.get_row_at(n)] for n in range(table.row_count)]


def shows(cell: str, text: str) -> bool:
    """The cell is `text`, or its start cut after a whole word with "…" (to its column's width)."""
    return cell == text or (cell.endswith("…") and text.startswith(cell[:-1]) and text[len(cell) - 1] == " ")


def badge(app: SupportDeskApp) -> StaffBadge:
    return app.screen.query_one(StaffBadge)


async def test_rows_show_customer_holder_state_wait_and_last_line_most_urgent_first(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk) as seeded:
        app, pilot, screen, ids = seeded.app, seeded.pilot, seeded.screen, seeded.ids
        order = [r.session.id for r in screen.shown]
        # Approvals and calls for a person first (the longest wait first), then working, then waiting.
        assert order == [ids["approval"], ids["human"], ids["working"], ids["waiting"]]
        rows = cells(screen)
        assert rows[0][:3] == ["dana@example.com", "Senior", "waiting for staff approval"]
        assert shows(rows[0][4], "agent: A colleague must approve that refund."), rows[0][4]
        assert rows[1][1:3] == ["Triage", "human requested"]
        assert rows[2][0] == "My app crashes when I…"  # no customer known: the title, cut to fit
        assert rows[2][1:3] == ["Technical", "agent working"]
        assert rows[3][:3] == ["kim@example.com", "Triage", "waiting for the customer"]
        since = screen.shown[0].state.since
        assert since is not None and rows[0][3] == waited(since, INBOX_NOW) and rows[0][3].endswith("m")
        # The badge counts the two that need staff, on this screen and on the chat screen below.
        await until(pilot, lambda: badge(app).count == 2)
        assert badge(app).has_class("-some") and "2 need staff" in str(badge(app).render())


async def test_filters_by_state_and_by_agent(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk) as seeded:
        app, pilot, screen, ids = seeded.app, seeded.pilot, seeded.screen, seeded.ids
        await pilot.press("s")  # needs staff
        assert [r.session.id for r in screen.shown] == [ids["approval"], ids["human"]]
        await pilot.press("s")  # agent working
        assert [r.session.id for r in screen.shown] == [ids["working"]]
        await pilot.press("s", "s", "s")  # waiting, idle, back to all
        assert len(screen.shown) == 4
        await pilot.press("g")  # the first holder by name: senior, technical, triage
        assert screen.agent_filter == "senior" and [r.session.id for r in screen.shown] == [ids["approval"]]
        await pilot.press("g", "g")
        assert screen.agent_filter == "triage"
        assert {r.session.id for r in screen.shown} == {ids["human"], ids["waiting"]}
        assert "agent: Triage" in str(screen.query_one("#inbox-heading").render())


async def test_enter_opens_the_conversation_and_f5_comes_back(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk) as seeded:
        app, pilot, ids = seeded.app, seeded.pilot, seeded.ids
        await pilot.press("down", "enter")
        await until(pilot, lambda: app.screen is app.chat and app.chat.session_id == ids["human"])
        await pilot.press("f5")
        await inbox_loaded(pilot)


async def test_the_palette_opens_the_inbox(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 30)) as pilot:
        await chat_loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"open inbox")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InboxScreen))
    await desk.close()


async def test_new_activity_never_moves_the_row_under_the_cursor(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk) as seeded:
        app, pilot, screen, ids, desk = seeded.app, seeded.pilot, seeded.screen, seeded.ids, seeded.desk
        await pilot.press("down", "down", "down")
        table = screen.query_one(InboxTable)
        assert table.cursor_row == 3 and screen.shown[3].session.id == ids["waiting"]
        # The waiting conversation turns urgent (it would sort first) and another one too.
        loads = screen.loads
        await desk.store.append(ids["waiting"], [Notice(notice_kind="human_requested", text="person!", agent="triage")])
        await desk.store.append(ids["working"], [Notice(notice_kind="limit", text="Limit reached.", agent="technical")])
        await until(pilot, lambda: screen.loads > loads and screen.shown[3].state.detail == "human_requested"
                    and any(r.state.detail == "limit" for r in screen.shown))
        assert table.cursor_row == 3 and screen.shown[3].session.id == ids["waiting"]
        assert str(table.get_row_at(3)[2]) == "human requested"
        # Once the cursor leaves it, the next change sorts it where it belongs.
        await pilot.press("up")
        loads = screen.loads
        await desk.store.append(ids["approval"], [Message(role="agent", text="Still waiting.", agent="senior")])
        await until(pilot, lambda: screen.loads > loads)
        assert [r.state.state for r in screen.shown[:3]] == ["needs_staff"] * 3


def test_keep_place_moves_only_the_row_under_the_cursor() -> None:
    class Row:
        def __init__(self, sid: str) -> None:
            self.session = type("S", (), {"id": sid})()

    rows = [Row(s) for s in "abcd"]
    assert [r.session.id for r in keep_place(list(rows), "a", 2)] == list("bcad")
    assert [r.session.id for r in keep_place(list(rows), "d", 9)] == list("abcd")
    assert [r.session.id for r in keep_place(list(rows), "zz", 0)] == list("abcd")


async def test_sessions_another_process_creates_appear_without_a_keypress(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = inbox_app(desk)
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await inbox_loaded(pilot)
        assert screen.shown == [] and "No conversations yet." in str(screen.query_one("#inbox-empty").render())
        writer = subprocess.Popen([sys.executable, "-m", "tests.inbox_seed", str(db_path), "far-"], cwd=REPO)
        try:
            await until(pilot, lambda: writer.poll() is not None, limit=120)
            assert writer.returncode == 0
        finally:
            if writer.poll() is None:
                writer.kill()
        await until(pilot, lambda: len(screen.shown) == 4)
        assert {r.session.id for r in screen.shown} == {"far-approval", "far-human", "far-working", "far-waiting"}
        await until(pilot, lambda: badge(app).count == 2)
    await desk.close()


async def test_approving_from_the_inbox_makes_the_refund_happen(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk, [Answer("Your refund of $300 is done.")]) as seeded:
        app, pilot, screen, ids = seeded.app, seeded.pilot, seeded.screen, seeded.ids
        desk, refunds = seeded.desk, seeded.refunds
        await until(pilot, lambda: badge(app).count == 2)
        await pilot.press("down")
        await pilot.press("a")  # the human-requested row has no approval: nothing happens
        await until(pilot, lambda: any("No approval" in n.message for n in app._notifications))
        assert refunds == []
        await pilot.press("up", "a")
        # What is granted, and how much, is shown before anything happens.
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmGrant")
        asked = " ".join(str(w.render()) for w in app.screen.query("Label, Static"))
        assert "refund" in asked and "$300.00" in asked
        assert refunds == []
        await pilot.press("y")
        await until(pilot, lambda: refunds == [300.0])
        await until(pilot, lambda: badge(app).count == 1)

        def approval_row():
            return next(r for r in screen.shown if r.session.id == ids["approval"])

        # The agent tells the customer; the row follows the log.
        await until(pilot, lambda: approval_row().state.last_line == "Your refund of $300 is done.")
        assert (approval_row().state.state, approval_row().state.detail) == ("ai", "waiting_customer")
        assert await desk.runner.pending_approvals(ids["approval"]) == []
        [granted] = [n for n in await desk.store.of_kind(ids["approval"], "notice") if n.notice_kind == "approval_granted"]
        assert granted.meta["staff"]["person"] == app.chat.person.person  # the audit names who decided


async def test_denying_from_the_inbox_refunds_nothing_and_the_row_says_approval_denied(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk, [Answer("Sorry, that refund was declined.")]) as seeded:
        app, pilot, ids, desk, refunds, screen = seeded.app, seeded.pilot, seeded.ids, seeded.desk, seeded.refunds, seeded.screen
        await pilot.press("d")

        def denied_row() -> list[str]:
            return next(row for row, r in zip(cells(screen), screen.shown) if r.session.id == ids["approval"])

        # The agent tells the customer, and the conversation still needs a person: the inbox says why.
        await until(pilot, lambda: shows(denied_row()[4], "agent: Sorry, that refund was declined."))
        assert denied_row()[2] == "approval denied"
        notices = [i.notice_kind for i in await desk.store.of_kind(ids["approval"], "notice")]
        assert "approval_denied" in notices and refunds == []
        assert badge(app).count == 2
        # A person acting on it (a note) answers the denial.
        await desk.runner.staff_note(ids["approval"], "I'll call them about the refund.")
        await until(pilot, lambda: badge(app).count == 1 and denied_row()[2] == "waiting for the customer")


async def test_the_badge_is_on_every_screen_and_hidden_at_zero(db_path, test_desk):
    desk, _, _ = await scripted_desk(db_path, test_desk)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(100, 30)) as pilot:
        await chat_loaded(pilot)
        await until(pilot, lambda: app.screen.query(StaffBadge))
        assert not badge(app).has_class("-some") and not badge(app).display
        ids = await seed_desk_states(desk.store)
        await until(pilot, lambda: badge(app).count == 2)
        await until(pilot, lambda: badge(app).display and badge(app).region.width > 0)
        assert badge(app).region.y == 0 and badge(app).region.right == 100  # the top right corner
        # Drawn over the chat screen's docked agent bar, not under it.
        await layout_settled(pilot)
        assert app.screen.get_widget_at(badge(app).region.x, 0)[0] is badge(app)
        assert app.screen.get_widget_at(badge(app).region.right - 1, 0)[0] is badge(app)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen) and app.screen.query(StaffBadge))
        await until(pilot, lambda: badge(app).count == 2)
        await desk.store.append(ids["human"], [Message(role="staff", text="Hi, I'm here.", agent="triage")])
        await until(pilot, lambda: badge(app).count == 1)
        assert "1 needs staff" in str(badge(app).render())
        # The browser's status line ends at the right of its top line: the badge must not cover it.
        status = app.screen.query_one("#status")
        await until(pilot, lambda: badge(app).region.width > 0)
        await until(pilot, lambda: "session" in str(status.render()))
        await layout_settled(pilot)
        words = str(status.render()).strip()
        assert status.region.right <= badge(app).region.x, (status.region, badge(app).region)
        assert app.screen.get_widget_at(status.region.right - 1, 0)[0] is status, words
        # A resized terminal keeps the badge in its corner, on this screen and on the one under it.
        await pilot.resize_terminal(120, 30)
        await until(pilot, lambda: badge(app).region.right == 120)
        await layout_settled(pilot)
        assert badge(app).region.y == 0 and badge(app).region.right == 120
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, BrowserScreen))
        await until(pilot, lambda: badge(app).region.right == 120)
        await pilot.resize_terminal(90, 30)
        await until(pilot, lambda: badge(app).region.right == 90)
        await layout_settled(pilot)
        assert badge(app).region.y == 0 and app.screen.get_widget_at(badge(app).region.x, 0)[0] is badge(app)
    await desk.close()


async def test_the_bench_screens_title_wraps_short_of_the_badge(db_path, test_desk):
    """At 80 columns the bench screen's empty-database line names a whole command: the badge
    over the top right corner must not hide part of it."""
    desk, _, _ = await scripted_desk(db_path, test_desk)
    try:
        app = SupportDeskApp(desk=desk)
        async with app.run_test(size=(80, 24)) as pilot:
            await chat_loaded(pilot)
            await seed_desk_states(desk.store)
            await until(pilot, lambda: app.needing_staff == 2)
            await pilot.press("ctrl+t")
            await until(pilot, lambda: app.screen.query("#bench-title") and app.screen.query(StaffBadge))
            title = app.screen.query_one("#bench-title")
            await until(pilot, lambda: badge(app).region.width > 0 and "supportdesk bench" in str(title.render()))
            await layout_settled(pilot)
            assert title.content_region.right <= badge(app).region.x, (title.content_region, badge(app).region)
            assert "--agent" in str(title.render())  # the command is there whole, over two lines
    finally:
        await desk.close()


def headers(screen: InboxScreen) -> list[str]:
    return [str(column.label) for column in screen.query_one(InboxTable).columns.values()]


async def test_a_narrow_terminal_gets_short_states_and_no_column_past_the_edge(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk, size=(80, 24)) as seeded:
        app, pilot, screen, ids = seeded.app, seeded.pilot, seeded.screen, seeded.ids
        await layout_settled(pilot)
        assert headers(screen) == ["Customer", "Agent", "State", "Last line", "Wait", "Tags"]
        rows = cells(screen)
        assert [row[2] for row in rows] == ["needs approval", "human requested", "agent working", "awaiting customer"]
        assert rows[0][0] == "dana@exampl…"  # the narrow customer column
        table = screen.query_one(InboxTable)
        assert table.virtual_size.width <= table.size.width  # nothing to scroll sideways to
        assert table.columns[next(k for k in table.columns if k.value == "last")].width >= 10
        # Wider, every column comes back, with the full words; narrower again, the short ones.
        await pilot.press("down")
        await pilot.resize_terminal(160, 40)
        await until(pilot, lambda: "For" in headers(screen) and cells(screen)[0][2] == "waiting for staff approval")
        assert screen.query_one(InboxTable).cursor_row == 1 and screen.shown[1].session.id == ids["human"]
        await pilot.resize_terminal(100, 30)
        await until(pilot, lambda: "For" not in headers(screen))
        assert screen.query_one(InboxTable).cursor_row == 1


async def test_a_narrow_inbox_shows_the_whole_last_line_of_the_row_under_the_cursor(db_path, test_desk):
    long_line = "I was charged twice for March and the second charge of $29.99 is still on my card statement today"
    async with seeded_inbox(db_path, test_desk, size=(80, 24),
                            extra={"waiting": [Message(role="customer", text=long_line, agent="triage")]}) as seeded:
        pilot, screen, ids = seeded.pilot, seeded.screen, seeded.ids
        await layout_settled(pilot)
        preview = screen.query_one("#inbox-preview")
        assert preview.display
        first = screen.shown[0].state
        assert str(preview.render()) == f"{first.last_role}: {plain_line(first.last_line)}"
        waiting = next(n for n, r in enumerate(screen.shown) if r.session.id == ids["waiting"])
        for _ in range(waiting):
            await pilot.press("down")
        await until(pilot, lambda: str(preview.render()) == f"customer: {long_line}")
        # the cell holds its start in whole words (narrow: no "For" column); the preview holds it all
        shown = cells(screen)[waiting][3]
        assert shown.endswith("…") and long_line.startswith(shown[:-1]) and long_line[len(shown) - 1] == " ", shown
        await pilot.resize_terminal(160, 40)
        await until(pilot, lambda: not preview.display)


def test_the_last_line_reads_an_agents_markdown_as_words() -> None:
    assert plain_line("I found two charges of **$29.00** on `CH-9004`.") == "I found two charges of $29.00 on CH-9004."
    assert plain_line("__Done__: refunded") == "Done: refunded"
    # Marks that are not emphasis stay as written.
    assert plain_line("2 * 3 = 6, a ** b, and a lone ` tick") == "2 * 3 = 6, a ** b, and a lone ` tick"


async def test_only_an_agents_last_line_loses_its_marks(db_path, test_desk):
    async with seeded_inbox(db_path, test_desk) as seeded:
        pilot, screen, ids, desk = seeded.pilot, seeded.screen, seeded.ids, seeded.desk
        loads = screen.loads
        await desk.store.append(ids["working"], [Message(role="agent", text="Try **Settings > Reset**.", agent="technical")])
        await desk.store.append(ids["waiting"], [Message(role="customer", text="is **this** literal?", agent="triage")])
        await until(pilot, lambda: screen.loads > loads and len({r[4] for r in cells(screen)} & {
            "agent: Try Settings > Reset.", "customer: is **this** literal?"}) == 2)


async def test_a_large_approval_is_shown_with_its_amount_and_not_granted_by_one_key(db_path, test_desk):
    big = Notice(notice_kind="approval_requested", text="Senior asks staff to approve refund: a refund of $1,299.99 is at or above the $250.00 approval threshold",
                 data={"approval_id": "ap2", "tool": "refund", "arguments": {"charge_id": "CH-77"}}, agent="senior")
    async with seeded_inbox(db_path, test_desk, [Answer("Done.")], extra={"human": [big]}) as seeded:
        app, pilot, screen, ids, refunds = seeded.app, seeded.pilot, seeded.screen, seeded.ids, seeded.refunds
        await until(pilot, lambda: any(r.session.id == ids["human"] and r.state.pending for r in screen.shown))
        row = next(n for n, r in enumerate(screen.shown) if r.session.id == ids["human"])
        for _ in range(row):
            await pilot.press("down")
        assert screen._current().session.id == ids["human"]
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmGrant")
        dialog = app.screen
        asked = " ".join(str(w.render()) for w in dialog.query("Label, Static"))
        assert "$1,299.99" in asked and "CH-77" in asked
        await pilot.press("y")  # no one-key yes for a large amount: any letter says no
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("a")
        await until(pilot, lambda: type(app.screen).__name__ == "ConfirmGrant")
        await pilot.press("enter")  # Enter is on Cancel
        await until(pilot, lambda: app.screen is screen)
        assert await seeded.desk.runner.pending_approvals(ids["human"]) != []
        assert refunds == []


def test_the_order_is_needs_staff_or_approval_then_sla_breach_then_state_and_age() -> None:
    from datetime import timedelta
    from types import SimpleNamespace

    from supportdesk.folds.desk_state import ConversationState, PendingApproval
    from supportdesk.engine.log import DeskRow, SessionInfo
    from supportdesk.tui.screens.inbox import by_urgency

    now = INBOX_NOW
    sla = SimpleNamespace(first_response=60, next_response=60)

    def row(name: str, minutes: int, **state) -> DeskRow:
        since = now - timedelta(minutes=minutes)
        info = SessionInfo(name, name, since, since, "triage", "triage", "open", 3, 0)
        return DeskRow(info, ConversationState(since=since, **state))

    rows = [
        row("waiting-old", 50, state="ai", detail="waiting_customer"),
        row("staff-holds", 5, state="staff", detail="", held_by_staff=True),
        row("late", 3, state="ai", detail="working", waiting_since=now - timedelta(minutes=3)),
        # An approval still pending while the agent told the customer to wait: needs staff.
        row("approval-behind-a-reply", 1, state="ai", detail="waiting_customer", pending=(PendingApproval("ap", "refund"),)),
        row("human", 2, state="needs_staff", detail="human_requested"),
        row("working", 30, state="ai", detail="working"),
    ]
    order = [r.session.id for r in by_urgency(rows, now, sla)]
    assert order == ["human", "approval-behind-a-reply", "late", "staff-holds", "working", "waiting-old"]


async def test_the_sla_clock_ticks_every_second(db_path, test_desk):
    from datetime import timedelta

    from supportdesk.items import Message as M

    async with seeded_inbox(db_path, test_desk, extra={"waiting": [M(role="customer", text="hello?", agent="triage")]}) as seeded:
        pilot, screen, ids = seeded.pilot, seeded.screen, seeded.ids
        now = [INBOX_NOW]
        screen.now = lambda: now[0]
        table = screen.query_one(InboxTable)

        def wait_cell() -> str:
            return str(table.get_cell(ids["waiting"], "wait"))

        since = next(r.state.waiting_since for r in screen.shown if r.session.id == ids["waiting"])
        now[0] = since + timedelta(seconds=20)
        await until(pilot, lambda: wait_cell() == "20s", limit=10)
        now[0] = since + timedelta(seconds=27)  # nothing written: only the clock moved
        await until(pilot, lambda: wait_cell() == "27s", limit=10)


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (100, 30), (120, 30)])
async def test_at_every_width_a_tagged_conversation_keeps_its_tags(db_path, test_desk, size):
    """Issue 39 §6: at 80x24 and 120 columns the tags column read `!high…`; at 60x20 the table
    ran off the right edge (the wait and tags out of sight, the last line 4-5 characters)."""
    from supportdesk.items import TagChange

    tagged = [TagChange(person="dana", added=["vip"], priority="high", agent="triage")]
    async with seeded_inbox(db_path, test_desk, size=size, extra={"waiting": tagged}) as seeded:
        pilot, screen, ids = seeded.pilot, seeded.screen, seeded.ids
        await until(pilot, lambda: any(r.state.tags for r in screen.shown))
        await layout_settled(pilot)
        table = screen.query_one(InboxTable)
        assert str(table.get_cell(ids["waiting"], "tags")) == "!high #vip"
        assert table.virtual_size.width <= table.size.width  # and nothing runs off the edge
        shown = "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())
        assert "!high #vip" in shown


async def test_at_60_columns_the_preview_names_the_agent_and_the_whole_last_line(db_path, test_desk):
    """Tiny (below 80 columns) the agent and last-line columns leave the row: the line under the
    table names who holds the highlighted conversation and shows what was last said."""
    async with seeded_inbox(db_path, test_desk, size=(60, 20)) as seeded:
        pilot, screen = seeded.pilot, seeded.screen
        await until(pilot, lambda: bool(screen.shown))
        await layout_settled(pilot)
        table = screen.query_one(InboxTable)
        assert [c.key.value for c in table.columns.values()] == ["customer", "state", "wait", "tags"]
        row = screen.shown[table.cursor_row]
        preview = str(screen.query_one("#inbox-preview").render())
        title = test_desk.agents[row.state.holder].title if row.state.holder in test_desk.agents else row.state.holder
        assert preview.startswith(f"{title} · {row.state.last_role}: ")
        await pilot.resize_terminal(80, 24)  # and back to the narrow table with both columns
        await until(pilot, lambda: "last" in [c.key.value for c in table.columns.values()], limit=10)
        assert "agent" in [c.key.value for c in table.columns.values()]


@pytest.mark.parametrize("size", [(60, 20), (100, 30)])
async def test_a_narrow_inbox_gives_its_spare_room_to_the_customer(db_path, test_desk, size):
    """Issue 39: narrow, the customer column stayed at 12 characters ("dana@exampl…") with room to
    spare on the row; the last line was cut inside a word ("A colleague mu…")."""
    async with seeded_inbox(db_path, test_desk, size=size) as seeded:
        pilot, screen, ids = seeded.pilot, seeded.screen, seeded.ids
        await until(pilot, lambda: bool(screen.shown))
        await layout_settled(pilot)
        table = screen.query_one(InboxTable)
        assert table.virtual_size.width <= table.size.width  # nothing runs off the edge
        drawn = "\n".join(strip.text for strip in pilot.app.screen._compositor.render_strips())
        assert "dana@example.com" in drawn and "kim@example.com" in drawn, drawn
        if "last" in [c.key.value for c in table.columns.values()]:
            said = "A colleague must approve that refund."
            cell = str(table.get_cell(ids["approval"], "last"))
            assert cell == said or (cell.endswith("…") and said[len(cell) - 1] == " "), cell
            assert cell in drawn, drawn
