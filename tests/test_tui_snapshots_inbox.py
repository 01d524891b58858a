"""Snapshots of the inbox with four conversations in four states and the needs-staff badge, at
120x40 and 80x24, at a fixed clock and with fixed data.

Update with `pytest tests/test_tui_snapshots_inbox.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from supportdesk.config import SlaSettings
from supportdesk.items import TagChange
from supportdesk.wiring import open_desk
from supportdesk.store import SessionStore
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.inbox import InboxScreen
from supportdesk.tui.widgets.staff_badge import StaffBadge
from tests.conftest import make_test_tools
from tests.inbox_seed import INBOX_NOW, seed_desk_states
from tests.scripted import ScriptedModel
from tests.tui_seed import fixed_clock, layout_settled, until


@pytest.fixture
def seeded_db(tmp_path: Path) -> Path:
    db = tmp_path / "desk.db"

    async def seed() -> None:
        store = await SessionStore.open(db)
        store.clock = fixed_clock()
        ids = await seed_desk_states(store)
        # issue 19: tags and a priority on one conversation (the Tags column)
        await store.append(ids["approval"], [TagChange(person="dana", added=["vip", "refund"], priority="high", agent="senior")])
        await store.close()

    asyncio.run(seed())
    return db


def inbox_app(db: Path, config: Any) -> SupportDeskApp:
    async def factory() -> Any:
        tools, _ = make_test_tools()
        return await open_desk(db, config, provider=ScriptedModel([]), tools=tools, customers=False)

    app = SupportDeskApp(desk_factory=factory, inbox=True, theme="desk-dark")
    app.clock = lambda: INBOX_NOW
    return app


async def settled(pilot: Any) -> None:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, InboxScreen) and app.screen.loads >= 1
                and len(app.screen.shown) == 4)
    await until(pilot, lambda: app.screen.query(StaffBadge) and app.screen.query_one(StaffBadge).count == 2)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await layout_settled(pilot)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_inbox(snap_compare: Any, seeded_db: Path, test_desk: Any, size: tuple[int, int]) -> None:
    # SLA targets the seed's waiting customers have run past, so the Wait column marks breaches.
    test_desk.desk.sla = SlaSettings(first_response=60, next_response=60)
    assert snap_compare(inbox_app(seeded_db, test_desk), terminal_size=size, run_before=settled)
