"""Every shipped theme stays readable: the colours that pane borders, secondary text and selections
resolve to on screen keep a WCAG-style contrast ratio against what is behind them.

The colours are read from the running app (resolved styles, not the theme file), so a stylesheet
change that picks a low-contrast variable fails here as surely as a bad theme file does.
"""

from __future__ import annotations

import asyncio

import pytest
from rich.color import Color as RichColor
from textual.color import Color

from supportdesk.tui.app import SupportDeskApp
from supportdesk.tui.themes import load_themes
from supportdesk.tui.widgets import ContextInspector, Conversation, HandoffTimeline
from supportdesk.tui.widgets.item_lines import ItemLines
from tests.tui_seed import SEED_ID, repo_desk, seed_double_charge, until

# WCAG 2: 4.5 for text, 3 for the parts of a user interface (borders, focus marks).
TEXT = 4.5
UI = 3.0

SHIPPED = sorted(theme.name for theme in load_themes()[0])


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def ratio(a: Color, b: Color) -> float:
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def rich(color: RichColor | None) -> Color:
    assert color is not None, "a colour the check needs is not set"
    return Color.from_rich_color(color)


def shown(color: Color, background: Color, auto: bool = False) -> Color:
    """What a colour looks like drawn over `background`: `auto` picks a contrasting colour, alpha blends."""
    if auto or color.auto:
        return background.get_contrast_text(color.a)
    return background + color


def test_the_ratio_is_wcags() -> None:
    assert ratio(Color(255, 255, 255), Color(0, 0, 0)) == pytest.approx(21.0)
    assert ratio(Color(255, 255, 255), Color(255, 255, 255)) == pytest.approx(1.0)
    assert ratio(Color(0x76, 0x76, 0x76), Color(255, 255, 255)) == pytest.approx(4.54, abs=0.01)


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("contrast") / "contrast.db"

    async def seed() -> None:
        desk = await repo_desk(db)
        await seed_double_charge(desk.store)
        await desk.close()

    asyncio.run(seed())
    return db


def test_every_shipped_theme_is_checked() -> None:
    assert {"desk-dark", "desk-light", "desk-contrast"} <= set(SHIPPED)


@pytest.mark.parametrize("theme", SHIPPED)
async def test_borders_secondary_text_and_selections_keep_their_contrast(seeded_db, theme):
    app = SupportDeskApp(desk_factory=lambda: repo_desk(seeded_db), theme=theme, session_id=SEED_ID)
    async with app.run_test(size=(120, 35)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        screen = app.screen
        screen.query_one(Conversation).focus()
        await pilot.pause()
        problems: list[str] = []

        def need(what: str, a: Color, b: Color, least: float) -> None:
            got = ratio(a, b)
            if got < least:
                problems.append(f"{what}: {a.hex} on {b.hex} is {got:.2f}:1, needs {least}:1")

        # Pane borders, unfocused (the timeline and inspector), against the pane's own background.
        for pane in (screen.query_one(HandoffTimeline), screen.query_one(ContextInspector)):
            _, background = pane.background_colors
            border = pane.styles.border_top[1]
            need(f"#{pane.id} border", shown(border, background), background, UI)
            # Its title (bold) and subtitle (secondary text) on the border line.
            title = pane.styles.border_title_color
            auto = pane.styles.auto_border_title_color
            need(f"#{pane.id} border title", shown(title, background, auto), background, TEXT)
            subtitle = pane.styles.border_subtitle_color
            auto = pane.styles.auto_border_subtitle_color
            need(f"#{pane.id} border subtitle", shown(subtitle, background, auto), background, TEXT)

        # Secondary text: the session facts in the agent bar, folded tool lines, the inspector's dim rows.
        facts = screen.query_one("#session-facts").rich_style
        need("session facts", rich(facts.color), rich(facts.bgcolor), TEXT)
        lines = screen.query_one(ItemLines)
        folded = lines.rich_style + lines.look_style("item-lines--folded")
        need("folded tool line", rich(folded.color), rich(folded.bgcolor), TEXT)

        # Selections: the inspector's and timeline's highlighted rows, the conversation's cursor.
        inspector = screen.query_one(ContextInspector)
        inspector.focus()
        await pilot.pause()
        cursor = inspector.rich_style + inspector.get_component_rich_style("datatable--cursor")
        need("inspector selection", rich(cursor.color), rich(cursor.bgcolor), TEXT)
        timeline = screen.query_one(HandoffTimeline)
        timeline.focus()
        await pilot.pause()
        highlighted = timeline.rich_style + timeline.get_component_rich_style("option-list--option-highlighted")
        need("timeline selection", rich(highlighted.color), rich(highlighted.bgcolor), TEXT)
        selected = lines.rich_style + lines.look_style("item-lines--cursor")
        need("conversation selection", rich(lines.rich_style.color), rich(selected.bgcolor), TEXT)

        assert not problems, f"{theme}:\n" + "\n".join(problems)


def drawn_cells(app) -> list[tuple[str, Color, Color, bool]]:
    """Every visible character of the screen as it reaches the terminal: the compositor's lines
    through the app's own line filters (the driver's path), as (text, colour, background, dim)."""
    background = app.screen.styles.background
    cells = []
    for strip in app.screen._compositor.render_strips():
        segments = list(strip)
        for line_filter in app._filters:
            if line_filter.enabled:
                segments = line_filter.apply(segments, background)
        for segment in segments:
            style = segment.style
            if style is None or not segment.text.strip() or style.color is None or style.bgcolor is None:
                continue
            fg, bg = Color.from_rich_color(style.color), Color.from_rich_color(style.bgcolor)
            if style.reverse:
                fg, bg = bg, fg
            for char in segment.text:
                if not char.isspace() and char not in "▁▂▃▄▅▆▇█▌▐▎▏▊▋▍▉─│╭╮╰╯━┃┏┓┗┛╋═║╔╗╚╝▔":
                    cells.append((char, fg, bg, bool(style.dim)))
    return cells


@pytest.mark.parametrize("theme", SHIPPED)
async def test_the_text_that_reaches_the_terminal_is_readable(seeded_db, theme):
    """Measured on what is drawn (issue 39 §6): dim and muted text too. No text below 3:1, and
    dim never reaches the terminal as the faint attribute (a terminal blends it toward the
    background by half: 2.7:1 on desk-light)."""
    app = SupportDeskApp(desk_factory=lambda: repo_desk(seeded_db), theme=theme, session_id=SEED_ID)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        await pilot.pause()
        cells = drawn_cells(app)
        assert len(cells) > 500
        faint = [char for char, _, _, dim in cells if dim]
        assert not faint, f"{len(faint)} characters reach the terminal as faint"
        low = sorted({(fg.hex, bg.hex, round(ratio(fg, bg), 2)) for _, fg, bg, _ in cells if ratio(fg, bg) < UI}, key=lambda x: x[2])
        assert not low, f"{theme}: text below {UI}:1: {low[:8]}"
        below_text = sum(1 for _, fg, bg, _ in cells if ratio(fg, bg) < TEXT)
        print(f"\n{theme}: {len(cells)} text cells, {below_text} below {TEXT}:1")
