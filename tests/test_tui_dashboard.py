"""The dashboard screen (`supportdesk stats` in a terminal, F4 and the palette in the desk):
snapshots at a fixed clock and data, and Pilot driving its ranges from the chat screen."""

from __future__ import annotations

import asyncio
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from supportdesk.config import load_desk
from supportdesk.store import SessionStore
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.dashboard import DashboardScreen
from supportdesk.tui.stats_app import StatsApp
from tests.conftest import REPO
from tests.stats_seed import NOW, seed_desk_history
from tests.tui_seed import chat_loaded, layout_settled, repo_desk, until


@pytest.fixture
def history_db(tmp_path: Path) -> Path:
    db = tmp_path / "history.db"

    async def seed() -> None:
        store = await SessionStore.open(db)
        await seed_desk_history(store)
        await store.close()

    asyncio.run(seed())
    return db


def _stats_app(db: Path, range_name: str) -> StatsApp:
    return StatsApp(db, load_desk(REPO / "agents.toml"), range_name, clock=lambda: NOW, tz=timezone.utc, theme="desk-dark")


def _drawn(range_name: str):
    """run_before for snap_compare: wait until the range's figures are drawn, then settle."""

    async def wait(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(pilot.app.screen, DashboardScreen) and pilot.app.screen.shown == range_name)
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await layout_settled(pilot)

    return wait


async def test_charts_take_their_colours_from_the_panel_in_every_theme(history_db: Path) -> None:
    """A chart draws no canvas of its own: in the light theme, opened after the dark one in the
    same process, the charts were drawn on the dark theme's canvas (textual-plotext's "auto"
    theme keeps the first colours it read for a theme's name, read while the theme was changing)."""
    from textual_plotext import PlotextPlot

    for theme in ("desk-dark", "desk-light", "desk-dark"):
        app = StatsApp(history_db, load_desk(REPO / "agents.toml"), "all", clock=lambda: NOW, tz=timezone.utc, theme=theme)
        async with app.run_test(size=(120, 40)) as pilot:
            await _drawn("all")(pilot)
            assert app.theme == theme
            plots = list(app.screen.query(PlotextPlot))
            assert len(plots) == 5
            for plot in plots:
                drawing = plot.render()
                assert drawing.plain.strip(), plot.id  # something was drawn ...
                assert [span.style for span in drawing.spans if getattr(span.style, "bgcolor", None)] == [], plot.id
                # ... and the bars are coloured (only the canvas is the panel's)
                assert any(getattr(span.style, "color", None) for span in drawing.spans), plot.id


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
def test_dashboard_snapshot(snap_compare: Any, history_db: Path, size: tuple[int, int]) -> None:
    assert snap_compare(_stats_app(history_db, "all"), terminal_size=size, run_before=_drawn("all"))


def test_dashboard_snapshot_of_today(snap_compare: Any, history_db: Path) -> None:
    assert snap_compare(_stats_app(history_db, "today"), terminal_size=(120, 40), run_before=_drawn("today"))


def _headline(screen: DashboardScreen) -> str:
    return str(screen.query_one("#headline", Static).render())


@pytest.fixture
def utc_local_time(monkeypatch):
    """The dashboard's "today" starts at local midnight: pin the local zone so the test means
    the same on every machine."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def test_f4_opens_the_dashboard_and_keys_change_the_range(history_db: Path, utc_local_time) -> None:
    async def desk():
        opened = await repo_desk(history_db)
        opened.store.clock = lambda: NOW
        return opened

    app = SupportDeskApp(desk_factory=desk, theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await chat_loaded(pilot)
        await pilot.press("f4")
        await until(pilot, lambda: isinstance(app.screen, DashboardScreen) and app.screen.shown == "7d")
        screen = app.screen
        # 7 days: today's two, the one that crossed midnight, the approval 3 days ago; s-empty started
        assert "last 7 days: 3 conversations active, 4 started · 5 handoffs · 1 refund/credit" in _headline(screen)
        await pilot.press("d")
        await until(pilot, lambda: screen.shown == "today")
        assert "today: 2 conversations active, 2 started" in _headline(screen)
        assert "1 limit hit" in str(screen.query_one("#notices-panel .summary", Static).render())
        await pilot.press("a")
        await until(pilot, lambda: screen.shown == "all")
        assert "all time: 6 conversations active, 7 started · 8 handoffs · 3 refunds/credits" in _headline(screen)
        flow = str(screen.query_one("#flow", Static).render())
        assert "billing" in flow and "⇡" in flow
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)


async def test_the_palette_offers_the_dashboard(history_db: Path) -> None:
    app = SupportDeskApp(desk_factory=lambda: repo_desk(history_db), theme="desk-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await chat_loaded(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"dashboard")
        await until(pilot, lambda: "Open dashboard" in str(app.screen.query("OptionList").first().get_option_at_index(0).prompt)
                    if app.screen.query("OptionList") and app.screen.query("OptionList").first().option_count else False)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, DashboardScreen) and app.screen.shown == "7d")


def test_the_tui_start_up_path_does_not_import_the_plotting_library() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; import supportdesk.tui.app, supportdesk.tui.commands, supportdesk.stats; "
        "print('textual_plotext' in sys.modules, 'plotext' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


async def test_at_80x24_each_agent_is_its_own_bar_and_the_headline_is_whole(history_db: Path) -> None:
    app = _stats_app(history_db, "7d")
    async with app.run_test(size=(80, 24)) as pilot:
        await _drawn("7d")(pilot)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        plot = screen.query_one("#agents-plot")
        lines = str(plot.render()).splitlines()
        # Upright bars: the names under the axis, and on the zero row one run of blocks per
        # agent with blank columns between (horizontal bars touched and read as one block).
        names = [name for name in ("Triage", "Billing", "Technical", "Senior") if name in lines[-1]]
        zero_row = next(line for line in lines if line.lstrip().startswith("0┤"))
        runs = [run for run in zero_row.split("┤", 1)[1].strip(" │").split(" ") if run]
        assert len(names) >= 3 and len(runs) == len(names)
        # The headline wraps rather than cutting a figure off at the right edge.
        headline = screen.query_one("#headline", Static)
        text = _headline(screen).strip()
        assert text.endswith("5 handoffs · 1 refund/credit")
        await pilot.resize_terminal(60, 24)
        await until(pilot, lambda: headline.content_size.width < len(text))
        await layout_settled(pilot)
        assert headline.size.height >= 2 and headline.size.height * headline.content_size.width >= len(text)
