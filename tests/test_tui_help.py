"""The help screen lists the keys active where it was opened, and the slash commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import BrowserScreen
from supportdesk.tui.screens.help import SLASH_COMMANDS, HelpScreen
from tests.tui_browser_data import HelpHost, seed_sessions


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
        for description, key in [("Replay", "r"), ("Fork", "f"), ("Export", "e"), ("Delete", "d"), ("Close", "esc")]:
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


async def test_help_shows_every_slash_command() -> None:
    assert [usage.split()[0] for usage, _ in SLASH_COMMANDS] == [
        "/handoff", "/note", "/set", "/unset", "/approve", "/deny", "/new", "/export", "/browse", "/retry", "/help",
    ]
    app = HelpHost(HelpScreen)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shot = app.export_screenshot()
        for usage, _ in SLASH_COMMANDS:
            assert usage.split()[0] in shot
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
        assert any("Input" in title for title in groups)
