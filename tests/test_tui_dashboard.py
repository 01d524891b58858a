"""The dashboard screen (`supportdesk stats` in a terminal, F4 and the palette in the desk):
snapshots at a fixed clock and data, and Pilot driving its ranges from the chat screen."""

from __future__ import annotations

import asyncio
import re
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from supportdesk.config import load_desk
from supportdesk.store import SessionStore
from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.screens.dashboard import DashboardScreen
from supportdesk.reports.stats import amount_labels, duration_labels
from supportdesk.tui.stats_app import StatsApp
from supportdesk.tui.widgets.bars import BarChart, Drawing, Series, bar_lines
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
    """A chart draws no canvas of its own, and its bars take the theme's colours: the light
    theme, opened after the dark one in the same process, draws in its own colours (the
    plotext charts once kept the first theme's canvas)."""
    drawn: dict[str, set[str]] = {}
    for theme in ("desk-dark", "desk-light", "desk-dark"):
        app = StatsApp(history_db, load_desk(REPO / "agents.toml"), "all", clock=lambda: NOW, tz=timezone.utc, theme=theme)
        async with app.run_test(size=(120, 40)) as pilot:
            await _drawn("all")(pilot)
            assert app.theme == theme
            charts = list(app.screen.query(BarChart))
            assert len(charts) == 5
            colours = set()
            for chart in charts:
                drawing = chart.render()
                assert drawing.plain.strip(), chart.id  # something was drawn ...
                assert [span.style for span in drawing.spans if getattr(span.style, "bgcolor", None)] == [], chart.id
                # ... and the bars are coloured (only the canvas is the panel's)
                bars = [span.style for span in drawing.spans if "█" in drawing.plain[span.start : span.end]]
                assert bars and all(getattr(style, "color", None) for style in bars), chart.id
                colours |= {str(style.color) for style in bars}  # type: ignore[union-attr]
            drawn.setdefault(theme, set()).update(colours)
    assert drawn["desk-dark"].isdisjoint(drawn["desk-light"])


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
        flow = screen.query_one("#flow", Drawing).render().plain
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


def _chart_lines(screen: DashboardScreen, chart_id: str) -> list[str]:
    return screen.query_one(f"#{chart_id}", BarChart).render().plain.splitlines()


def _summary(screen: DashboardScreen, panel_id: str) -> str:
    return str(screen.query_one(f"#{panel_id} .summary", Static).render())


@pytest.mark.parametrize("size", [(160, 45), (80, 24), (60, 20)])
async def test_every_bar_is_one_whole_line_with_its_number(history_db: Path, size: tuple[int, int]) -> None:
    """Issue 37: a bar wrapped onto its own line, tick labels on uneven rows (75 and 50 on
    adjacent rows), an unlabelled number. Each chart row is a label, its bars and their numbers,
    on one line that fits the chart; no line is a bar alone."""
    app = _stats_app(history_db, "all")
    async with app.run_test(size=size) as pilot:
        await _drawn("all")(pilot)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        expected = {
            "agents-plot": ["Triage", "Billing", "Technical", "Senior"],
            "escalation-plot": ["Billing", "Technical"],
            "first-plot": duration_labels(),
            "resolution-plot": duration_labels(),
            "money-plot": amount_labels(),
        }
        for chart_id, labels in expected.items():
            chart = screen.query_one(f"#{chart_id}", BarChart)
            lines = _chart_lines(screen, chart_id)
            rows = lines[1:] if chart_id == "money-plot" else lines
            assert [row.split(" ", 1)[0] for row in rows] == labels, (chart_id, lines)
            for row in rows:
                assert len(row) <= chart.content_size.width, (chart_id, row)
                assert re.search(r"\d%?( · \d+ of \d+)?$", row), (chart_id, row)  # ends on its number
            # the chart's own region holds every row: nothing cut off at the bottom
            assert len(lines) <= chart.content_size.height, chart_id
        assert _chart_lines(screen, "escalation-plot")[0].endswith("33% · 1 of 3")
        # Every conversation of the seed enters with Triage: its bar is the headline's active count,
        # not the started one (the empty session is started, but nobody took part in it: issue 39).
        active = int(re.search(r"(\d+) conversations active, 7 started", _headline(screen)).group(1))  # type: ignore[union-attr]
        assert active == 6 and _chart_lines(screen, "agents-plot")[0].endswith(f" {active}")
        # Every number in the summaries says what it counts ("5 · p50" and "· 1" did not).
        assert _summary(screen, "first-answer").startswith("5 answered · p50 ")
        assert _summary(screen, "resolution").startswith("3 resolved · p50 ")
        assert _summary(screen, "money") == "2 refunds totalling 329.00 · 1 credit totalling 5.50"
        flow = screen.query_one("#flow", Drawing)
        assert all(len(line) <= flow.content_size.width for line in flow.render().plain.splitlines())


async def test_the_money_legend_sits_above_the_bars_never_over_them(history_db: Path) -> None:
    app = _stats_app(history_db, "all")
    async with app.run_test(size=(80, 24)) as pilot:
        await _drawn("all")(pilot)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        head, *rows = _chart_lines(screen, "money-plot")
        assert head.split() == ["█", "refunds", "▒", "credits"]
        assert not any("refunds" in row or "credits" in row for row in rows)
        # each series in its own column: refunds' bars start where its name does, credits' likewise
        refunds_at, credits_at = head.index("█"), head.index("▒")
        assert rows[0][credits_at] == "▒" and rows[2][refunds_at] == "█"


def test_a_bar_never_wraps_in_a_narrow_chart() -> None:
    lines = bar_lines(
        ["a long agent name", "b"],
        [Series("x", [1000, 1], ["1,000", "1"]), Series("y", [0, 7], ["0", "7"])],
        20,
    ).plain.splitlines()
    assert len(lines) == 3 and all(len(line) <= 20 for line in lines), lines
    assert re.search(r"█ 1,000 +0$", lines[1]) and re.search(r" 1 ▒+ 7$", lines[2]), lines


async def test_at_80x24_each_agent_is_its_own_bar_and_the_headline_is_whole(history_db: Path) -> None:
    app = _stats_app(history_db, "7d")
    async with app.run_test(size=(80, 24)) as pilot:
        await _drawn("7d")(pilot)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        # One row per agent, a bar and its count on it, blank space between bar and count.
        lines = _chart_lines(screen, "agents-plot")
        assert [line.split()[0] for line in lines] == ["Triage", "Billing", "Technical", "Senior"]
        assert all(re.fullmatch(r"\S+ +█+ +\d+", line) for line in lines), lines
        # The headline wraps rather than cutting a figure off at the right edge.
        headline = screen.query_one("#headline", Static)
        text = _headline(screen).strip()
        assert text.endswith("5 handoffs · 1 refund/credit")
        await pilot.resize_terminal(60, 24)
        await until(pilot, lambda: headline.content_size.width < len(text))
        await layout_settled(pilot)
        assert headline.size.height >= 2 and headline.size.height * headline.content_size.width >= len(text)


@pytest.mark.parametrize("size", [(120, 40), (60, 20)])
async def test_the_dashboard_shows_offers_made_accepted_declined_and_expired_per_tool_and_agent(
    history_db: Path, size: tuple[int, int]
) -> None:
    """Issue 33 §6: the offers each agent made of each tool and what the customers answered."""
    app = _stats_app(history_db, "all")
    async with app.run_test(size=size) as pilot:
        await _drawn("all")(pilot)
        screen = app.screen
        assert isinstance(screen, DashboardScreen)
        drawing = screen.query_one("#offers", Drawing)
        head, *rows = drawing.render().plain.splitlines()
        assert head.split()[-4:] == ["made", "accepted", "declined", "expired"]
        assert [(row.split(" · ")[1].split()[0], row.split()[-4:]) for row in rows] == [
            ("billing", ["1", "0", "1", "0"]),  # cancel_subscription: declined
            ("billing", ["2", "1", "0", "1"]),  # issue_credit: one accepted, one expired
            ("billing", ["1", "1", "0", "0"]),  # refund_charge: accepted
        ]
        assert [row.split()[0][:6] for row in rows] == ["cancel", "issue_", "refund"]
        assert all(len(line) <= drawing.content_size.width for line in [head, *rows])
        assert _summary(screen, "offers-panel") == "4 made · 2 accepted · 1 declined · 1 expired"
        await pilot.press("d")  # today: the refund's offer only
        await until(pilot, lambda: screen.shown == "today")
        assert _summary(screen, "offers-panel") == "1 made · 1 accepted · 0 declined · 0 expired"


@pytest.mark.parametrize("theme", ["desk-dark", "desk-light", "desk-contrast"])
async def test_the_dashboard_s_text_is_readable_in_every_theme(history_db: Path, theme: str) -> None:
    """Measured on what reaches the terminal: the charts' labels and numbers, the summaries, the
    flow. (The chart labels were once drawn white on the light theme's white panel.)"""
    from tests.test_tui_contrast import SHIPPED, UI, drawn_cells, ratio

    assert theme in SHIPPED
    app = StatsApp(history_db, load_desk(REPO / "agents.toml"), "all", clock=lambda: NOW, tz=timezone.utc, theme=theme)
    async with app.run_test(size=(160, 45)) as pilot:
        await _drawn("all")(pilot)
        for y in (0, 14, 28, 42):
            app.screen.query_one("#board").scroll_to(y=y, animate=False)
            await layout_settled(pilot)
            cells = drawn_cells(app)
            assert len(cells) > 800
            text = "".join(char for char, *_ in cells)
            assert "Triage" in text or "<10s" in text or "made" in text or "provider" in text
            faint = [char for char, _, _, dim in cells if dim]
            assert not faint, f"{len(faint)} characters reach the terminal as faint"
            low = sorted({(char, fg.hex, bg.hex, round(ratio(fg, bg), 2)) for char, fg, bg, _ in cells if ratio(fg, bg) < UI})
            assert not low, f"{theme}: text below {UI}:1: {low[:8]}"


@pytest.mark.parametrize("size", [(160, 45), (80, 24), (60, 20)])
async def test_every_range_key_shows_its_whole_name(history_db: Path, size: tuple[int, int]) -> None:
    """At 60 columns the range line was cut: "a all t…"."""
    app = _stats_app(history_db, "all")
    async with app.run_test(size=size) as pilot:
        await _drawn("all")(pilot)
        await layout_settled(pilot)
        ranges = app.screen.query_one("#ranges", Static)
        line = str(ranges.render())
        assert "…" not in line and len(line.rstrip()) <= ranges.content_size.width
        assert all(key in line for key in (" d today ", " w ", " m ", " a all"))
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert line.strip() in shown.splitlines()[0]


@pytest.mark.parametrize("size", [(160, 45), (80, 24), (60, 20)])
async def test_the_service_levels_lines_fit_and_lists_break_between_items(history_db: Path, size: tuple[int, int]) -> None:
    """Issue 39: at 80 columns the breach line and "staff called for" wrapped, leaving "resolution 3)"
    and "provider_error 1" at the panel's left edge as if they were lines of their own. Each list
    breaks between its items, a continuation is indented, and every item is whole on one line."""
    app = _stats_app(history_db, "all")
    async with app.run_test(size=size) as pilot:
        await _drawn("all")(pilot)
        drawing = app.screen.query_one("#sla")
        drawing.scroll_visible(animate=False)
        await layout_settled(pilot)
        region = drawing.content_region
        screen = [strip.text for strip in app.screen._compositor.render_strips()]
        lines = [line[region.x : region.right].rstrip() for line in screen[region.y : region.bottom]]
        lines = [line for line in lines if line]
        heads = ("3 of 6 conversations breached: ", "agents settled ", "agents working ", "waiting on staff ",
                 "on the customer ", "staff called for: ")
        for line in lines:
            assert line.startswith(heads) or re.fullmatch(r"  [a-z][a-z ]* \d+( · [a-z][a-z ]* \d+)*", line), (line, lines)
        text = "\n".join(lines)
        # Each item once, whole (a zero breach says nothing and is left out; kinds read as words).
        for item in ("first response 1", "resolution 3", "approval 1", "human requested 1", "limit 1", "provider error 1"):
            assert text.count(item) == 1, (item, lines)
        assert "next response 0" not in text and "_" not in text
