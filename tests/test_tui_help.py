"""The help screen lists the keys active where it was opened, and the slash commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import BrowserScreen
from supportdesk.tui.screens.help import HelpScreen
from supportdesk.tui.slash import SLASH_COMMANDS
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import Conversation
from tests.tui_browser_data import HelpHost, seed_sessions
from tests.tui_seed import SEED_ID, layout_settled, repo_desk, seeded_file, until


@pytest.fixture
async def store(tmp_path: Path):
    store = await SessionStore.open(tmp_path / "desk.db")
    await seed_sessions(store)
    yield store
    await store.close()


def rows_by_group(help_screen: HelpScreen) -> dict[str, dict[str, str]]:
    return {title: {desc: keys for keys, desc, _ in rows} for title, rows in help_screen.binding_rows()}


async def test_help_lists_the_screen_below_and_the_app_bindings(store: SessionStore) -> None:
    app = HelpHost(lambda: BrowserScreen(store))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        groups = rows_by_group(app.screen)
        browser = groups["Session browser"]
        for description, key in [("Replay", "^r"), ("Fork", "^f"), ("Export", "^o"), ("Delete", "del"), ("Close", "esc")]:
            assert browser[description] == key
        assert groups["Session list"]["Open"] == "⏎"  # the focused table's own keys
        everywhere = groups["Everywhere"]
        assert everywhere["Help"] == "f1, ?"
        assert everywhere["Quit"] == "^q"
        assert everywhere["Command palette"] == "^p"
        # the screen's keys come first, then the app's, then the focused widget's
        assert list(groups) == ["Session browser", "Everywhere", "Session list"]
        # help's own close key is not listed as if it were the browser's
        assert all("Close help" not in rows for rows in groups.values())
        # within a group, the screen's own keys (shown or not) come before every screen's focus
        # and copy keys
        [(_, rows)] = [(title, rows) for title, rows in app.screen.binding_rows() if title == "Session browser"]
        order = [description for _, description, _ in rows]
        generic = [order.index(d) for d in ("Focus Next", "Focus Previous", "Copy selected text") if d in order]
        assert generic and min(generic) > max(i for i, d in enumerate(order) if d not in ("Focus Next", "Focus Previous", "Copy selected text"))


async def test_help_shows_every_slash_command() -> None:
    assert [command.usage.split()[0] for command in SLASH_COMMANDS] == [
        "/handoff", "/note", "/set", "/unset", "/takeover", "/release", "/state", "/tag", "/priority", "/as",
        "/reply", "/macro", "/approve", "/deny", "/withdraw", "/new", "/export", "/browse", "/replay", "/retry", "/help",
    ]
    app = HelpHost(HelpScreen)
    async with app.run_test(size=(120, 56)) as pilot:  # tall enough for the whole list, unscrolled
        await pilot.pause()
        shot = app.export_screenshot()
        for command in SLASH_COMMANDS:
            assert command.usage.split()[0] in shot
        assert "/export&#160;[markdown|json]" in shot or "/export [markdown|json]" in shot


@pytest.mark.parametrize("key", ["escape", "q"])
async def test_escape_or_q_closes_help(store: SessionStore, key: str) -> None:
    app = HelpHost(lambda: BrowserScreen(store))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, BrowserScreen)
        assert app.results == []  # closing help did not close the browser


async def test_help_follows_the_focus_below(store: SessionStore) -> None:
    app = HelpHost(lambda: BrowserScreen(store))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash")  # focus the search box: its keys replace the table's
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        groups = rows_by_group(app.screen)
        assert "Session list" not in groups
        # The search box's generic editing keys (word left, delete to end …) are not listed.
        assert not any("Input" in title for title in groups)
        assert "Session browser" in groups


# --- help and footers over the chat and replay screens, at 80 columns ---------------------------


@pytest.fixture
def seeded_db(tmp_path: Path) -> Path:
    return seeded_file(tmp_path / "help.db")


async def open_chat(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
    await pilot.pause()


def shown_text(app) -> str:
    """The screen as text: the SVG screenshot's characters, entities decoded."""
    import html
    import re

    svg = app.export_screenshot()
    return html.unescape(" ".join(re.findall(r">([^<>]+)</text>", svg))).replace("\xa0", " ")


async def test_f1_at_80_columns_keeps_every_slash_command_description(seeded_db: Path) -> None:
    app = SupportDeskApp(desk_factory=lambda: repo_desk(seeded_db), theme="desk-dark", session_id=SEED_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_chat(pilot)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        commands = app.screen.query_one("#slash-commands")
        body = app.screen.query_one("#help-body")
        # Stacked under the keys, the commands' table has the whole box's width ...
        assert commands.size.width >= 70
        body.scroll_to_widget(commands, animate=False, top=True)
        await pilot.pause()
        text = shown_text(app)
        # ... so the first lines of the table show usages and descriptions side by side.
        assert "/handoff AGENT [reason]" in text
        assert "Give the conversation to AGENT now" in text
        # The chat input's ~30 generic editing keys are not padding the list.
        groups = rows_by_group(app.screen)
        assert not any("Input" in title or "Prompt" in title for title in groups)
        described = {desc for rows in groups.values() for desc in rows}
        assert "Replay this session" in described  # help shows the long form of short footer labels


async def test_replay_help_does_not_send_people_to_a_message_box_it_lacks(seeded_db: Path) -> None:
    app = SupportDeskApp(desk_factory=lambda: repo_desk(seeded_db), theme="desk-dark", replay_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        text = shown_text(app)
        assert "Type them in the message box." not in text
        assert "chat screen" in text


async def test_the_footer_keeps_its_labels_at_80_columns_and_follows_the_focus(seeded_db: Path) -> None:
    app = SupportDeskApp(desk_factory=lambda: repo_desk(seeded_db), theme="desk-dark", session_id=SEED_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_chat(pilot)

        def footer_labels() -> list[str]:
            footer = app.screen.query_one(Footer)
            keys = footer.query(FooterKey)
            # A key whose label does not fit is drawn narrower than its key and label, or off the edge.
            cut = [
                k.description or k.key_display
                for k in keys
                if k.region.right > footer.region.right
                or (k.description and k.size.width < len(k.key_display) + len(k.description) + 1)
            ]
            assert not cut, f"labels cut at 80 columns: {cut}"
            return [k.description for k in keys]

        labels = footer_labels()
        assert "Help" in labels and "Select" not in " ".join(labels)
        app.screen.query_one(Conversation).focus()
        # The conversation's own keys, now that it has the focus.
        await until(pilot, lambda: "Open" in [k.description for k in app.screen.query(FooterKey)])
        await layout_settled(pilot)  # the recomposed footer's keys measured
        footer_labels()
        text = shown_text(app)
        assert "Select" in text


async def test_help_that_cannot_load_does_not_tell_people_to_type_help(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "supportdesk.tui.screens.help", None)  # importing it now fails
    app = SupportDeskApp(desk_factory=lambda: asyncio.sleep(3600))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.action_help()
        await pilot.pause()
        [toast] = list(app._notifications)
        assert "/help" not in toast.message
