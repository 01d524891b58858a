"""The browser cancels a running search as soon as the query changes, and the store stops it."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import BrowserScreen, SessionTable
from tests.test_store_search import HeldSearch
from tests.tui_browser_data import BrowserHost, seed_sessions
from tests.tui_seed import until


def ids(app: BrowserHost) -> list[str]:
    table = app.screen.query_one(SessionTable)
    cells = [table.get_cell(row, "id") for row in table.rows]
    assert all(isinstance(cell, Text) for cell in cells)
    return [cell.plain for cell in cells]


async def test_a_new_key_cancels_the_running_search_and_its_statement(tmp_path: Path) -> None:
    store = await SessionStore.open(tmp_path / "desk.db")
    held = HeldSearch()
    try:
        await seed_sessions(store)
        await store.search("refund")  # opens the search connection
        await store._search_db._execute(held.install, store._search_db._conn)
        held.hold = True
        app = BrowserHost(lambda: BrowserScreen(store))
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: ids(app) == ["s-billing", "s-login", "s-hello"])
            await pilot.press("slash", *"refund")
            await until(pilot, held.started.is_set)  # after the typing pause: running, held
            screen = app.screen
            running = screen._searching
            assert running is not None and running.is_running
            await pilot.press("backspace")
            assert running.is_cancelled  # at the first key, not after the typing pause
            held.release.set()
            await pilot.press(*("backspace" for _ in "refun"), *"password")
            await until(pilot, lambda: ids(app) == ["s-login"])
            # the cancelled statement built none of its three snippets once let go
            assert held.snippets_after_release <= 1
    finally:
        held.release.set()
        await store.close()
