"""The browser cancels a running search as soon as the query changes, and the store stops it."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from rich.text import Text

from supportdesk.store import SessionStore, open_store
from supportdesk.tui.screens.browser import BrowserScreen, SessionTable
from tests.test_store_search import HeldSearch
from tests.tui_browser_data import BrowserHost, seed_sessions
from tests.tui_seed import WAIT_LIMIT, until


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



async def _running_searches(admin) -> set[tuple[int, object]]:
    """(backend pid, statement start) of every search statement running on the server."""
    rows = await admin.fetch(
        "SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database() "
        "AND state = 'active' AND query LIKE '%ts_headline%' AND pid <> pg_backend_pid()"
    )
    return {(r[0], r[1]) for r in rows}


async def until_server(pilot, condition: Callable[[], Awaitable[bool]]) -> None:
    """`until` for a condition that asks the server (bounded, never a timing check)."""
    deadline = time.monotonic() + WAIT_LIMIT
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError("the server never reached the expected state")
        await pilot.pause(0.02)


@pytest.mark.postgres
async def test_a_new_key_cancels_the_running_search_on_the_postgresql_server(pg_url: str) -> None:
    import asyncpg

    store = await open_store(pg_url)
    admin = await asyncpg.connect(pg_url)
    locker = await asyncpg.connect(pg_url)
    lock = locker.transaction()
    locked = False
    try:
        await seed_sessions(store)  # type: ignore[arg-type]
        app = BrowserHost(lambda: BrowserScreen(store))
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: ids(app) == ["s-billing", "s-login", "s-hello"])
            # Hold the sessions table (every search step joins it): the search runs on the
            # server and does not finish until we let go.
            await lock.start()
            locked = True
            await locker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
            await pilot.press("slash", *"refund")
            held: set[tuple[int, object]] = set()

            async def one_search_held() -> bool:
                held.update(await _running_searches(admin))
                return len(held) == 1

            await until_server(pilot, one_search_held)
            running = app.screen._searching
            assert running is not None and running.is_running
            await pilot.press("backspace")
            assert running.is_cancelled  # at the first key
            # The lock is still held: only the server's cancel can end that statement (the
            # next query's search may be running by now: it has its own start time).

            async def held_one_gone() -> bool:
                return held.isdisjoint(await _running_searches(admin))

            await until_server(pilot, held_one_gone)
            await lock.rollback()
            locked = False
            await pilot.press(*("backspace" for _ in "refun"), *"password")
            await until(pilot, lambda: ids(app) == ["s-login"])
    finally:
        if locked:
            await lock.rollback()
        await locker.close()
        await admin.close()
        await store.close()
