"""The session browser's filters (issue 19: "the browser and inbox filter by them"): ctrl+s cycles
the state groups and ctrl+l the tags and priorities in use, as the inbox's s and l do; the store
pages through the filtered list, so a filter reaches sessions beyond the page on screen. Driven
through Pilot on a real SQLite file at a fixed clock; one snapshot of a filtered list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from supportdesk.items import Message, Notice, StateChange, TagChange
from supportdesk.store import SessionStore
from supportdesk.tui.screens.browser import BrowserScreen, SessionTable
from tests.tui_browser_data import BrowserHost, fixed_clock, seed_sessions
from tests.tui_seed import layout_settled, until

SIZE = (120, 36)
NOW = fixed_clock(60)  # the browser's clock: after every seeded time


async def seed_tagged(store: SessionStore) -> None:
    """The browser's three sessions, then: s-billing tagged refund and vip at high priority;
    s-login waiting for an approval, tagged refund; s-hello as it was (waiting for the customer)."""
    await seed_sessions(store)
    store.clock = fixed_clock(11)
    await store.append("s-billing", [TagChange(added=["refund", "vip"], priority="high", person="ana", agent="billing")])
    store.clock = fixed_clock(12)
    await store.append("s-login", [
        Notice(notice_kind="approval_requested", text="Technical asks staff to approve refund", agent="technical",
               data={"approval_id": "ap1", "tool": "refund"}),
        TagChange(added=["refund"], person="bo", agent="technical"),
    ])


@pytest.fixture
async def store(tmp_path: Path):
    store = await SessionStore.open(tmp_path / "desk.db")
    await seed_tagged(store)
    yield store
    await store.close()


def host(store: SessionStore, page_size: int | None = None) -> BrowserHost:
    def make() -> BrowserScreen:
        screen = BrowserScreen(store)
        if page_size is not None:
            screen.PAGE_SIZE = page_size
        return screen

    app = BrowserHost(make)
    app.clock = NOW  # type: ignore[attr-defined]
    return app


def browser(app: BrowserHost) -> BrowserScreen:
    screen = app.screen
    assert isinstance(screen, BrowserScreen)
    return screen


def ids(app: BrowserHost) -> list[str]:
    table = app.screen.query_one(SessionTable)
    return [str(table.get_cell(row, "id")) for row in table.rows]


def status(app: BrowserHost) -> str:
    """The heading with its filters, then the status line (count and page)."""
    return f'{app.screen.query_one("#heading").render()} {app.screen.query_one("#status").render()}'


async def listed(pilot, expected: list[str], words: str) -> None:
    """Wait until the browser lists `expected` and its top line says `words`."""
    await until(pilot, lambda: ids(pilot.app) == expected and words in status(pilot.app), settle_workers=True)


async def test_ctrl_s_cycles_the_inbox_state_groups(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, ["s-login", "s-billing", "s-hello"], "Sessions 3 sessions · page 1 of 1")
        await pilot.press("ctrl+s")
        await listed(pilot, ["s-login"], "Sessions · state: needs staff 1 session · page 1 of 1")
        await pilot.press("ctrl+s")  # agent working: nobody
        await listed(pilot, [], "Sessions · state: agent working 0 sessions")
        assert "No session matches the filters" in str(app.screen.query_one("#empty").render())
        await pilot.press("ctrl+s")
        await listed(pilot, ["s-billing", "s-hello"], "Sessions · state: waiting for the customer")
        await pilot.press("ctrl+s", "ctrl+s")  # resolved/idle, then all again
        await listed(pilot, ["s-login", "s-billing", "s-hello"], "Sessions 3 sessions · page 1 of 1")
        # Resolving one from elsewhere moves it between groups live (the change feed reloads).
        await pilot.press("ctrl+s", "ctrl+s", "ctrl+s", "ctrl+s")
        await listed(pilot, [], "Sessions · state: resolved/idle")
        store.clock = fixed_clock(13)
        await store.append("s-hello", [StateChange(state="resolved", person="ana", agent="triage")])
        await listed(pilot, ["s-hello"], "Sessions · state: resolved/idle 1 session")


async def test_ctrl_l_cycles_the_tags_and_priorities_in_use_and_rows_show_them(store: SessionStore) -> None:
    app = host(store)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, ["s-login", "s-billing", "s-hello"], "3 sessions")
        table = app.screen.query_one(SessionTable)
        titles = [table.get_cell(row, "title").plain for row in table.rows]
        assert titles[0].endswith(" #refund") and titles[1].endswith(" !high #refund #vip")
        assert "#" not in titles[2]
        await pilot.press("ctrl+l")
        await listed(pilot, ["s-billing"], "Sessions · tag: !high 1 session")
        await pilot.press("ctrl+l")
        await listed(pilot, ["s-login", "s-billing"], "Sessions · tag: #refund 2 sessions")
        # Filters combine: refund and needing staff.
        await pilot.press("ctrl+s")
        await listed(pilot, ["s-login"], "Sessions · state: needs staff · tag: #refund 1 session")
        await pilot.press("ctrl+l")
        await listed(pilot, [], "Sessions · state: needs staff · tag: #vip 0 sessions")
        await pilot.press("ctrl+l")  # back to every tag
        await listed(pilot, ["s-login"], "Sessions · state: needs staff 1 session · page 1 of 1")


async def test_a_filter_reaches_sessions_beyond_the_page_on_screen(store: SessionStore) -> None:
    # Twelve more sessions, newer than the seeded ones; every third tagged vip.
    for n in range(12):
        store.clock = fixed_clock(20 + n)
        await store.create_session("triage", session_id=f"s-more-{n:02}",
                                   first=[Message(role="customer", text=f"hello {n}", agent="triage")])
        if n % 3 == 0:
            await store.append(f"s-more-{n:02}", [TagChange(added=["vip"], person="ana", agent="triage")])
    app = host(store, page_size=3)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, ["s-more-11", "s-more-10", "s-more-09"], "15 sessions · page 1 of 5")
        await pilot.press("ctrl+l", "ctrl+l", "ctrl+l")  # !high, #refund, #vip
        await listed(pilot, ["s-more-09", "s-more-06", "s-more-03"], "Sessions · tag: #vip 5 sessions · page 1 of 2")
        await pilot.press("right_square_bracket")
        await listed(pilot, ["s-more-00", "s-billing"], "Sessions · tag: #vip 5 sessions · page 2 of 2")
        # A new filter starts again at its first page.
        await pilot.press("ctrl+s")
        await listed(pilot, [], "Sessions · state: needs staff · tag: #vip 0 sessions · page 1 of 1")


@pytest.fixture
def tagged_db(tmp_path: Path) -> Path:
    db = tmp_path / "desk.db"

    async def seed() -> None:
        store = await SessionStore.open(db)
        await seed_tagged(store)
        await store.close()

    asyncio.run(seed())
    return db


class TaggedHost(BrowserHost):
    """Opens the store inside the app's own event loop, then shows the browser."""

    def __init__(self, db: Path) -> None:
        super().__init__(None, theme="desk-dark")
        self.db = db
        self.store: SessionStore | None = None
        self.clock = NOW

    async def on_mount(self) -> None:
        self.store = await SessionStore.open(self.db)
        await self.push_screen(BrowserScreen(self.store), self.results.append)

    async def on_unmount(self) -> None:
        if self.store is not None:
            await self.store.close()


def test_browser_filtered_by_tag(snap_compare: Any, tagged_db: Path) -> None:
    async def filter_refund(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(pilot.app.screen, BrowserScreen) and len(ids(pilot.app)) == 3,
                    settle_workers=True)
        await pilot.press("ctrl+l", "ctrl+l")
        await listed(pilot, ["s-login", "s-billing"], "Sessions · tag: #refund")
        await layout_settled(pilot)

    assert snap_compare(TaggedHost(tagged_db), terminal_size=SIZE, run_before=filter_refund)
