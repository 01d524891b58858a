"""Snapshots of the session browser after a search, its fork question, and the help screen, dark and light.

Fixed terminal size, fixed clock (the seeded sessions' times), fixed session ids.
Update with `pytest tests/test_tui_snapshots_browser.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import BrowserScreen, ConfirmFork
from supportdesk.tui.screens.help import HelpScreen
from tests.tui_browser_data import HelpHost, seed_sessions
from tests.tui_seed import layout_settled

SIZE = (120, 36)
THEMES = ["desk-dark", "desk-light"]


class StoreHost(HelpHost):
    """Opens the store inside the app's own event loop, then shows the browser."""

    def __init__(self, db: Path, theme: str) -> None:
        super().__init__(None, theme=theme)
        self.db = db
        self.store: SessionStore | None = None

    async def on_mount(self) -> None:
        self.store = await SessionStore.open(self.db)
        await self.push_screen(BrowserScreen(self.store), self.results.append)

    async def on_unmount(self) -> None:
        if self.store is not None:
            await self.store.close()


@pytest.fixture
def seeded_db(tmp_path: Path) -> Path:
    db = tmp_path / "desk.db"

    async def seed() -> None:
        store = await SessionStore.open(db)
        await seed_sessions(store)
        await store.close()

    asyncio.run(seed())
    return db


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await layout_settled(pilot)


@pytest.mark.parametrize("theme", THEMES)
def test_browser_after_a_search(snap_compare: Any, seeded_db: Path, theme: str) -> None:
    async def search(pilot: Any) -> None:
        await _settle(pilot)
        await pilot.press("slash", *"refund", "enter")
        await _settle(pilot)

    assert snap_compare(StoreHost(seeded_db, theme), terminal_size=SIZE, run_before=search)


@pytest.mark.parametrize("theme", THEMES)
def test_fork_question_over_the_browser(snap_compare: Any, seeded_db: Path, theme: str) -> None:
    async def ask_to_fork(pilot: Any) -> None:
        await _settle(pilot)
        await pilot.press("ctrl+f")
        await _settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmFork)

    assert snap_compare(StoreHost(seeded_db, theme), terminal_size=SIZE, run_before=ask_to_fork)


@pytest.mark.parametrize("theme", THEMES)
def test_help_screen_over_the_browser(snap_compare: Any, seeded_db: Path, theme: str) -> None:
    async def open_help(pilot: Any) -> None:
        await _settle(pilot)
        await pilot.press("f1")
        await _settle(pilot)
        assert isinstance(pilot.app.screen, HelpScreen)

    assert snap_compare(StoreHost(seeded_db, theme), terminal_size=SIZE, run_before=open_help)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_browser_in_a_small_terminal(snap_compare: Any, seeded_db: Path, size: tuple[int, int]) -> None:
    async def settle(pilot: Any) -> None:
        await _settle(pilot)

    assert snap_compare(StoreHost(seeded_db, "desk-dark"), terminal_size=size, run_before=settle)
