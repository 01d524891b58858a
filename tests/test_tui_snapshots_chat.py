"""Snapshots of the chat screen after the seed's double-charge conversation and of replay at a
handoff, in the dark and light themes (fixed size, fixed clock, fixed session id)."""

from __future__ import annotations

import asyncio

import pytest

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import Conversation, Prompt
from tests.tui_seed import SEED_ID, layout_settled, repo_desk, seed_double_charge, until

SIZE = (120, 40)
THEMES = ["desk-dark", "desk-light"]



@pytest.fixture
def seeded_db(tmp_path):
    db = tmp_path / "snap.db"

    async def seed() -> None:
        desk = await repo_desk(db)
        await seed_double_charge(desk.store)
        await desk.close()

    asyncio.run(seed())
    return db



def make_app(db, theme: str, **kwargs) -> SupportDeskApp:
    return SupportDeskApp(desk_factory=lambda: repo_desk(db), theme=theme, **kwargs)


async def still(pilot) -> None:
    """No blinking cursor, nothing moving."""
    for prompt in pilot.app.screen.query(Prompt):
        prompt.cursor_blink = False
    await pilot.wait_for_scheduled_animations()
    await layout_settled(pilot)


async def replay_still(pilot) -> None:
    """As `still`, and the footer already recomposed for the focused conversation (its keys first)."""
    from textual.widgets._footer import FooterLabel

    await until(pilot, lambda: any(str(label.render()) == "Select" for label in pilot.app.screen.query(FooterLabel)))
    await still(pilot)


@pytest.mark.parametrize("theme", THEMES)
def test_chat_after_double_charge(snap_compare, seeded_db, theme):
    app = make_app(seeded_db, theme, session_id=SEED_ID)

    async def ready(pilot) -> None:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        await still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


@pytest.mark.parametrize("theme", THEMES)
def test_replay_stopped_at_a_handoff(snap_compare, seeded_db, theme):
    app = make_app(seeded_db, theme, replay_id=SEED_ID)

    async def at_handoff(pilot) -> None:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: app.screen.shown == 5 and not app.screen.workers)
        await replay_still(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=at_handoff)


# --- small terminals: the side column collapses, the conversation keeps its width ------------------

SMALL = [(80, 24), (60, 20)]


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_chat_in_a_small_terminal(snap_compare, seeded_db, size):
    app = make_app(seeded_db, "desk-dark", session_id=SEED_ID)

    async def ready(pilot) -> None:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        await still(pilot)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_replay_in_a_small_terminal(snap_compare, seeded_db, size):
    # At the session's end: where a jump leaves the scroll of a short pane depends on when its
    # layout lands under load; the end is anchored, and the layout at this size is the point here.
    app = make_app(seeded_db, "desk-dark", replay_id=SEED_ID)

    async def at_the_end(pilot) -> None:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)
        await until(pilot, lambda: not app.screen.workers)
        await replay_still(pilot)

    assert snap_compare(app, terminal_size=size, run_before=at_the_end)


@pytest.mark.parametrize("size", SMALL, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_over_the_chat_in_a_small_terminal(snap_compare, seeded_db, size):
    from supportdesk.tui.screens.help import HelpScreen

    app = make_app(seeded_db, "desk-dark", session_id=SEED_ID)

    async def open_help(pilot) -> None:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await still(pilot)

    assert snap_compare(app, terminal_size=size, run_before=open_help)
