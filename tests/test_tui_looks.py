"""What a person reads on the screens at 160x45, 80x24 and 60x20 (issue 39 §5-§6): values end
on a whole word, labels are not cut, the panels fit their width. Each test reads drawn lines."""

from __future__ import annotations

import asyncio

import pytest

from supportdesk.items import ContextSet, Handoff, Message, Offer, TagChange
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.widgets import ContextInspector, Conversation, HandoffTimeline
from tests.tui_seed import layout_settled, repo_desk, until

CANCEL_ID = "cancel000001"
SYNC_ID = "sync00000001"
SYNC = "my files are not syncing on windows since the last update"
ISSUE = "I want to cancel my subscription because the price went up again"
ACTION = "cancel the subscription of CUS-1001 (no further renewals)"
REASON = "the customer wants to cancel because the price went up again this spring"


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def region_lines(app, widget) -> list[str]:
    """The lines drawn inside `widget`'s region (its border included)."""
    region = widget.region
    return [line[region.x : region.right] for line in screen_lines(app)[region.y : region.bottom]]


@pytest.fixture
def cancel_db(tmp_path):
    db = tmp_path / "looks.db"

    async def seed() -> None:
        desk = await repo_desk(db)
        store = desk.store
        await store.create_session("triage", session_id=CANCEL_ID)
        await store.append(CANCEL_ID, [
            Message(role="customer", agent="triage", text=ISSUE),
            ContextSet(key="issue", value=ISSUE, writer="triage", agent="triage"),
            ContextSet(key="escalation_reason", value="price", writer="triage", agent="triage"),
            Handoff(from_agent="triage", to_agent="billing", reason=REASON, handoff_kind="route", agent="triage"),
            Message(role="agent", agent="billing", text="Shall I cancel it?"),
            Offer(offer_id="o1", tool="cancel_subscription", arguments={"customer_id": "CUS-1001"},
                  action=ACTION, text="Shall I cancel it?", agent="billing"),
        ])
        await store.create_session("triage", session_id=SYNC_ID, first=[Message(role="customer", agent="triage", text=SYNC)])
        await store.append(SYNC_ID, [TagChange(person="maya", added=["vip", "windows"], priority="high", agent="triage")])
        await desk.close()

    asyncio.run(seed())
    return db


def whole_words_or_ellipsis(shown: str, whole: str) -> None:
    """`shown` is `whole`, or a run of its whole words ended by "…"."""
    if shown == whole:
        return
    assert shown.endswith("…"), f"{shown!r} is cut with no ellipsis"
    kept = shown[:-1].rstrip()
    assert whole.startswith(kept), (shown, whole)
    assert whole[len(kept)] == " ", f"{shown!r} ends inside a word of {whole!r}"


def inspector_cell(lines: list[str], start: str) -> str:
    """The text in the value column on the line whose value starts with `start`."""
    for line in lines:
        at = line.find(start)
        if at >= 0:
            return line[at:].rstrip("│ ").strip()
    raise AssertionError(f"{start!r} is not in the inspector:\n" + "\n".join(lines))


async def open_chat(db, size):
    app = SupportDeskApp(desk_factory=lambda: repo_desk(db), theme="desk-light", session_id=CANCEL_ID)
    return app


@pytest.mark.parametrize("size", [(160, 45), (120, 35)])
async def test_the_inspector_ends_values_on_a_whole_word(cancel_db, size):
    app = await open_chat(cancel_db, size)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID
                    and app.chat.query_one(Conversation).last == 6)
        await layout_settled(pilot)
        inspector = app.screen.query_one(ContextInspector)
        await until(pilot, lambda: any("I want" in line for line in region_lines(app, inspector)))
        lines = region_lines(app, inspector)
        issue = inspector_cell(lines, '"I want')
        whole_words_or_ellipsis(issue.strip('"…') + ("…" if issue.endswith("…") else ""), ISSUE)
        action = inspector_cell(lines, "cancel the")
        whole_words_or_ellipsis(action, ACTION)
        # A key longer than the key column's least width is whole too ("escalation_reas…").
        assert any("escalation_reason" in line for line in lines), "\n".join(lines)
        # The offer row's second line is whole.
        assert any("/withdraw" in line for line in lines), "\n".join(lines)
        # The timeline's handoff reason and offer mark end on a whole word too.
        timeline = region_lines(app, app.screen.query_one(HandoffTimeline))
        whole_words_or_ellipsis(inspector_cell(timeline, "the customer wants"), REASON)
        whole_words_or_ellipsis(inspector_cell(timeline, "cancel the"), ACTION)


async def test_a_wider_side_column_shows_more_of_a_value(cancel_db):
    app = await open_chat(cancel_db, (80, 24))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID
                    and app.chat.query_one(Conversation).last == 6)
        await pilot.press("f2")  # narrow: the side column in place of the conversation
        await layout_settled(pilot)
        inspector = app.screen.query_one(ContextInspector)
        await until(pilot, lambda: any("I want" in line for line in region_lines(app, inspector)))
        issue = inspector_cell(region_lines(app, inspector), '"I want')
        # At 160 columns the value column holds 26 characters; here it has the pane's width.
        assert len(issue) > 40, "\n".join(region_lines(app, inspector))
        whole_words_or_ellipsis(issue.strip('"…') + ("…" if issue.endswith("…") else ""), ISSUE)


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_help_shows_every_slash_command_usage_whole(cancel_db, size):
    """The help table cut "/priority none|low|medium|high|urgent" to "…high|ur…": a usage too long
    for its column breaks at a space or after a "|", never inside a word."""
    app = await open_chat(cancel_db, size)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID)
        await pilot.press("f1")
        await until(pilot, lambda: bool(app.screen.query("#help-commands")))
        await layout_settled(pilot)
        commands = app.screen.query_one("#help-commands")
        commands.scroll_visible(animate=False)
        await layout_settled(pilot)
        text = "\n".join(region_lines(app, commands))
        assert "…" not in text, text
        assert "medium|high|urgent" in text.replace(" ", "").replace("\n", ""), text


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (120, 30)])
async def test_the_browser_shows_whole_title_words_and_whole_tags(cancel_db, size):
    """At 80 columns a row read "my fi… !high #vip #windo…": neither the title nor a tag that exists.
    The title ends on a whole word, the tags are whole (or left out), each on the row."""
    from textual.widgets import DataTable

    from supportdesk.tui.screens.browser import BrowserScreen

    app = await open_chat(cancel_db, size)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen)
                    and app.screen.query_one(DataTable).row_count == 2, settle_workers=True)
        await layout_settled(pilot)
        row = next(line for line in screen_lines(app) if "my f" in line)
        cell = row[row.index("my f"):].split("  ")[0].strip()
        words = cell.split()
        tags = [w.rstrip("…") for w in words if w[:1] in "#!"]
        title = [w.rstrip("…") for w in words if w[:1] not in "#!"]
        assert set(tags) <= {"!high", "#vip", "#windows"}, row
        assert title == SYNC.split()[: len(title)], row


@pytest.mark.parametrize("size", [(160, 45), (80, 24), (60, 20)])
async def test_the_replay_position_line_shows_whole_hints(cancel_db, size):
    """At 80 columns the replay's position line ended "· esc…", at 60 "· f …": the keys' hint is
    shown whole, shorter, or not at all."""
    from supportdesk.tui.screens.replay import ReplayScreen

    app = await open_chat(cancel_db, size)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown >= 0)
        await layout_settled(pilot)
        line = region_lines(app, app.screen.query_one("#position"))[0].rstrip()
        assert "…" not in line, line
        assert "item 6 of 6" in line, line
        if size[0] >= 120:
            assert line.endswith("home/end · f fork from here · esc close"), line


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (70, 20), (66, 20), (44, 20)])
async def test_the_agent_bar_cuts_the_session_facts_between_whole_parts(cancel_db, size):
    """The facts beside the agent's badge were cut by the terminal's width ("· 1 hand…", "s…"): they
    end where one of their parts ends, with "…"."""
    from supportdesk.tui.screens.replay import ReplayScreen
    from supportdesk.tui.widgets.agent_bar import AgentBar

    app = await open_chat(cancel_db, size)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID
                    and app.chat.query_one(Conversation).last == 6)
        await pilot.press("ctrl+r")  # (the replay's facts are the longest: "replay · read-only · …")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown >= 0)
        await layout_settled(pilot)
        bar = app.screen.query_one(AgentBar)
        full = bar.facts.plain
        assert full.startswith("replay · read-only · session ")
        facts = app.screen.query_one("#session-facts")
        shown = "".join(region_lines(app, facts)).strip()
        if shown and shown != full:
            assert shown.endswith("…"), (shown, full)
            kept = shown[:-1].rstrip()
            assert full.startswith(kept) and (kept == "" or full[len(kept):].startswith(" · ")), (shown, full)


async def test_the_browser_search_hint_is_whole_at_60_columns(cancel_db):
    """At 60x20 the search box's hint read "… Enter to g"."""
    from textual.widgets import DataTable, Input

    from supportdesk.tui.screens.browser import BrowserScreen

    app = await open_chat(cancel_db, (60, 20))
    async with app.run_test(size=(60, 20)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == CANCEL_ID)
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, BrowserScreen)
                    and app.screen.query_one(DataTable).row_count == 2, settle_workers=True)
        await layout_settled(pilot)
        search = app.screen.query_one("#search", Input)
        drawn = " ".join(" ".join(region_lines(app, search)).replace("▊", " ").replace("▎", " ").split())
        assert search.placeholder in drawn, drawn
