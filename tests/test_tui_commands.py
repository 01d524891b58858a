"""The desk's command-palette provider and the themes, through the running app."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.app import App
from textual.command import CommandList, CommandPalette

from supportdesk.engine.protocol import Answer
from supportdesk.items import Message
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.commands import DeskCommands
from supportdesk.tui.themes import DEFAULT_THEME, remember_theme, remembered_theme
from tests.tui_seed import SEED_ID, WAIT_LIMIT, scripted_desk, seed_double_charge, until


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
async def make_desk(db_path, test_desk):
    """Opens scripted desks on the test's database and closes them all at the end."""
    opened = []

    async def make(script=()):
        desk, _, _ = await scripted_desk(db_path, test_desk, list(script))
        opened.append(desk)
        return desk

    yield make
    for desk in opened:
        await desk.close()



async def started(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.chat is not None and app.screen is app.chat)


async def hits(provider: DeskCommands, query: str) -> list:
    await provider.startup()
    return [hit async for hit in provider.search(query)]


def highlighted(app: App) -> str:
    """The text of the palette's highlighted hit ("" with no palette, or nothing highlighted)."""
    if not isinstance(app.screen, CommandPalette):
        return ""
    hits = app.screen.query_one(CommandList)
    return "" if hits.highlighted is None else str(hits.get_option_at_index(hits.highlighted).prompt)


async def choose(pilot, query: str) -> None:
    """Type `query` into the open palette and press enter once the hit for it is highlighted (the
    palette gathers hits in a worker of its own: wait for the hit, not for a time)."""
    await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    await pilot.press(*query)
    await until(pilot, lambda: query.lower() in highlighted(pilot.app).lower())
    await pilot.press("enter")


async def run_palette(pilot, query: str) -> None:
    await pilot.press("ctrl+p")
    await choose(pilot, query)


async def test_provider_offers_sessions_agents_and_actions(make_desk) -> None:
    desk = await make_desk()
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        provider = DeskCommands(app.screen)
        texts = [h.text for h in await hits(provider, "hand off")]
        assert {"Hand off to Billing", "Hand off to Technical", "Hand off to Senior", "Hand off to Triage"} <= set(texts)
        texts = [h.text for h in await hits(provider, "charged twice")]
        assert any(t.startswith("Open session: Hi, I was charged twice") for t in texts)
        texts = [h.text for h in await hits(provider, "theme")]
        assert texts.count("Switch theme") == 1 and not any(t.startswith("Switch theme:") for t in texts)
        # The slash commands come from the same table as the input's: /replay included.
        texts = {h.text for h in await hits(provider, "/")}
        assert {"/replay", "/handoff AGENT [reason]", "/export [markdown|json]"} <= texts
        for action in ("New session", "Open session browser", "Export transcript", "Approve pending approval",
                       "Deny pending approval", "Add staff note"):
            assert action in {h.text for h in await hits(provider, action)}
        discovered = [h.text async for h in provider.discover()]
        assert "New session" in discovered and not any(t.startswith("Open session:") for t in discovered)


async def test_while_loading_only_actions_are_offered() -> None:
    class Loading(App[None]):
        desk = None

    app = Loading()
    async with app.run_test(size=(80, 20)):
        provider = DeskCommands(app.screen)
        texts = [h.text for h in await hits(provider, "se")]
        assert "New session" in texts
        assert not any(t.startswith(("Open session:", "Hand off")) for t in texts)


async def test_session_titles_are_shown_literally(make_desk) -> None:
    desk = await make_desk()
    await desk.store.create_session("triage", session_id="s-evil")
    await desk.store.append("s-evil", [Message(role="customer", text="[bold red]help[/] me \x1b[2J", agent="triage")])
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        [hit] = [h for h in await hits(DeskCommands(app.screen), "help me") if h.text.startswith("Open session")]
        assert "[bold red]help[/] me ␛[2J" in hit.match_display.plain
        assert "\x1b" not in hit.match_display.plain


async def test_palette_opens_a_session_by_title(make_desk) -> None:
    desk = await make_desk()
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await run_palette(pilot, "Open session: Hi, I was charged")
        await until(pilot, lambda: app.chat.session_id == SEED_ID)


async def test_palette_hands_off_to_an_agent(make_desk) -> None:
    desk = await make_desk([Answer("Hello!")])
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await until(pilot, lambda: app.chat.session_id == SEED_ID)
        await run_palette(pilot, "Hand off to Technical")

        async def last_handoff():
            return (await desk.store.handoffs(SEED_ID))[-1]

        deadline = time.monotonic() + WAIT_LIMIT  # a bounded poll: the command's worker writes it
        while (handoff := await last_handoff()).to_agent != "technical" and time.monotonic() < deadline:
            await pilot.pause(0.02)
        assert handoff.to_agent == "technical" and handoff.handoff_kind == "manual"


async def test_switching_theme_from_the_palette_applies_and_is_remembered(make_desk) -> None:
    desk = await make_desk()
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.theme == DEFAULT_THEME
        await run_palette(pilot, "Switch theme")
        await choose(pilot, "desk-light")  # the palette again, listing the themes
        await until(pilot, lambda: app.theme == "desk-light")
        assert app.current_theme.dark is False
    assert remembered_theme() == "desk-light"

    desk = await make_desk()
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.theme == "desk-light"  # restored at the next start


async def test_a_user_theme_can_be_chosen(make_desk, config_home: Path) -> None:
    folder = config_home / "supportdesk" / "themes"
    folder.mkdir(parents=True)
    (folder / "night.toml").write_text('name = "night-shift"\nprimary = "#ff8800"\n[agents]\nbilling = "#00ff00"\n')
    desk = await make_desk()
    app = SupportDeskApp(desk=desk, theme="night-shift")
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert app.theme == "night-shift"
        assert app.theme_variables["agent-billing"].lower() == "#00ff00"


async def test_a_broken_theme_file_is_one_notification_and_the_default_is_used(
    make_desk, config_home: Path
) -> None:
    folder = config_home / "supportdesk" / "themes"
    folder.mkdir(parents=True)
    (folder / "broken.toml").write_text('name = "broken"\nprimary = "bluish"\n')
    remember_theme("broken")  # the user's last choice is the theme that now fails to load
    desk = await make_desk()
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        about_file = [n for n in app._notifications if "broken.toml" in n.message]
        assert len(about_file) == 1
        assert "primary = 'bluish' is not a colour" in about_file[0].message
        assert "\n" not in about_file[0].message
        assert app.theme == DEFAULT_THEME
        assert {"desk-light", "desk-contrast"} <= set(app.available_themes)


async def test_the_palette_lists_each_theme_once_desk_themes_first(make_desk) -> None:
    from supportdesk.tui.commands import themes_in_order

    desk = await make_desk()
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        # Textual's own "Theme" command is gone from the palette: one entry lists them all.
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Theme" not in titles
        order = themes_in_order(app.available_themes)
        assert order[:3] == ["desk-contrast", "desk-dark", "desk-light"] or set(order[:3]) == {
            "desk-dark", "desk-light", "desk-contrast"}
        assert "textual-dark" in order and len(order) == len(set(order)) == len(app.available_themes)


async def test_a_slash_command_from_the_palette_runs_or_waits_for_its_arguments(make_desk) -> None:
    desk = await make_desk()
    await seed_double_charge(desk.store)
    app = SupportDeskApp(desk=desk, session_id=SEED_ID)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await app.run_slash_command("note")  # needs its text: it waits in the input
        assert app.chat.query_one("#prompt").value == "/note "
        await app.run_slash_command("replay")  # needs nothing: it runs
        from supportdesk.tui.screens.replay import ReplayScreen

        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)


async def test_long_titles_are_cut_with_an_ellipsis(make_desk) -> None:
    desk = await make_desk()
    long = "My invoice for the team plan shows forty seats although we only ever bought twelve of them last year"
    info = await desk.store.create_session("triage")
    await desk.store.append(info.id, [Message(role="customer", text=long, agent="triage")])
    stored = (await desk.store.get_session(info.id)).title
    assert len(stored) == 80 and stored.endswith("…") and stored[:-1] == long[:79]
    app = SupportDeskApp(desk=desk)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        provider = DeskCommands(app.screen)
        [hit] = [h for h in await hits(provider, "invoice forty seats") if h.text.startswith("Open session:")]
        assert hit.text.endswith("…") and len(hit.text) <= len("Open session: ") + 70
