"""The chat and replay panes at every size: the side column collapses, toggles, panes maximise."""

from __future__ import annotations

import asyncio

import pytest

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import ContextInspector, Conversation, HandoffTimeline
from supportdesk.tui.widgets.panes import MIN_CONVERSATION, SessionPanes
from tests.tui_seed import SEED_ID, layout_settled, repo_desk, seed_double_charge, until


@pytest.fixture
def seeded_db(tmp_path):
    db = tmp_path / "layout.db"

    async def seed() -> None:
        desk = await repo_desk(db)
        await seed_double_charge(desk.store)
        await desk.close()

    asyncio.run(seed())
    return db


def make_app(db, **kwargs) -> SupportDeskApp:
    return SupportDeskApp(desk_factory=lambda: repo_desk(db), theme="desk-dark", **kwargs)


async def chat_ready(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
    await pilot.pause()


def side(screen):
    return screen.query_one("#side")


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (120, 35), (160, 45)])
async def test_the_conversation_keeps_forty_columns_at_every_size(seeded_db, size):
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=size) as pilot:
        await chat_ready(pilot)
        conversation = app.screen.query_one(Conversation)
        assert conversation.size.width >= MIN_CONVERSATION
        # The side column is beside it when there is room for both, collapsed when not.
        assert side(app.screen).display == (size[0] >= 92)


async def test_f2_shows_the_side_column_in_place_of_the_conversation_when_narrow(seeded_db):
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await chat_ready(pilot)
        await pilot.press("f2")
        await pilot.pause()
        assert side(app.screen).display and side(app.screen).size.width >= 70
        assert not app.screen.query_one(Conversation).display
        # The timeline and the inspector are on screen, with their rows.
        assert app.screen.query_one(ContextInspector).row_count == 4
        await pilot.press("f2")
        await pilot.pause()
        assert app.screen.query_one(Conversation).display and not side(app.screen).display


async def test_f2_hides_the_side_column_when_wide_and_a_resize_keeps_each_choice(seeded_db):
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await chat_ready(pilot)
        app.screen.query_one(HandoffTimeline).focus()
        await pilot.press("f2")
        await pilot.pause()
        assert not side(app.screen).display
        assert app.screen.query_one(Conversation).size.width > 100
        # The focus left the pane that went away.
        assert app.screen.focused is app.screen.query_one(Conversation)
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert app.screen.query_one(SessionPanes).narrow and not side(app.screen).display
        await pilot.resize_terminal(120, 35)
        await pilot.pause()
        assert not side(app.screen).display  # still hidden: the wide layout's choice was kept


async def test_a_resize_to_sixty_columns_collapses_the_side_column(seeded_db):
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await chat_ready(pilot)
        assert side(app.screen).display
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert not side(app.screen).display
        assert app.screen.query_one(Conversation).size.width >= 55


async def test_f3_maximises_the_focused_pane_and_escape_restores_it(seeded_db):
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await chat_ready(pilot)
        inspector = app.screen.query_one(ContextInspector)
        inspector.focus()
        await pilot.press("f3")
        await pilot.pause()
        assert app.screen.maximized is inspector
        assert inspector.size.width > 100
        await pilot.press("f3")
        await pilot.pause()
        assert app.screen.maximized is None
        conversation = app.screen.query_one(Conversation)
        conversation.focus()
        await pilot.press("f3")
        await pilot.pause()
        assert app.screen.maximized is conversation
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.maximized is None


async def test_replay_collapses_and_toggles_its_side_column_too(seeded_db):
    app = make_app(seeded_db, replay_id=SEED_ID)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)
        await pilot.pause()
        assert not side(app.screen).display
        assert app.screen.query_one(Conversation).size.width >= MIN_CONVERSATION
        await pilot.press("f2")
        await pilot.pause()
        assert side(app.screen).display and not app.screen.query_one(Conversation).display


async def test_the_footer_rebuilds_once_for_a_burst_of_binding_changes(seeded_db):
    """Opening a session changes the chat screen's bindings several times in a row; the footer
    (DeskFooter) rebuilds once for the burst, and shows the bindings as they are at the end."""
    from textual._context import active_message_pump
    from textual.widgets._footer import FooterKey

    from supportdesk.tui.widgets.footer import DeskFooter
    from tests.tui_seed import layout_settled

    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await chat_ready(pilot)
        await layout_settled(pilot)
        chat = app.chat
        footer = chat.query_one(DeskFooter)
        rebuilds: list[int] = []
        rebuild = footer.recompose

        async def counted() -> None:
            rebuilds.append(1)
            await rebuild()

        footer.recompose = counted  # type: ignore[method-assign]
        # As the screen's signal delivers its binding changes: in the footer's own context (its
        # keys bind to the footer's data from there).
        token = active_message_pump.set(footer)
        try:
            for _ in range(3):
                footer.bindings_changed(chat)
        finally:
            active_message_pump.reset(token)
        await until(pilot, lambda: bool(rebuilds))
        await layout_settled(pilot)
        assert rebuilds == [1]
        keys = {key.key for key in footer.query(FooterKey)}
        assert {"ctrl+b", "ctrl+r", "f2"} <= keys  # the chat screen's shown bindings, rebuilt


async def test_opening_a_session_builds_the_footers_keys_once(seeded_db, monkeypatch):
    """A rebuild asked for after the keys were built, for the same bindings, builds nothing: each
    rebuild mounts and restyles every key, on the way to the session's first page."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from supportdesk.tui.widgets.footer import DeskFooter

    builds: list[int] = []
    real = Footer.recompose

    async def counted(self: Footer) -> None:
        builds.append(1)
        await real(self)

    monkeypatch.setattr(Footer, "recompose", counted)
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await chat_ready(pilot)
        footer = app.chat.query_one(DeskFooter)
        await until(pilot, lambda: bool(footer.query(FooterKey)))
        await layout_settled(pilot)  # the screen done: a second build would have come by now
        assert builds == [1]
        keys = list(footer.query(FooterKey))
        await footer.recompose()  # the same bindings: the same keys stay
        assert list(footer.query(FooterKey)) == keys and builds == [1]


async def test_the_prompt_takes_focus_when_a_session_opens_and_nothing_before_it(seeded_db, monkeypatch):
    """Focus goes straight to the prompt: the conversation (the first focusable pane) taking it
    first, then losing it, restyled both panes on the way to the first page."""
    from textual.widget import Widget

    focused: list[str] = []
    real = Widget._on_focus

    def noted(self: Widget, event) -> None:  # type: ignore[no-untyped-def]
        focused.append(type(self).__name__)
        real(self, event)

    monkeypatch.setattr(Widget, "_on_focus", noted)
    app = make_app(seeded_db, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await chat_ready(pilot)
        await until(pilot, lambda: type(app.focused).__name__ == "Prompt")
    assert "Conversation" not in focused
