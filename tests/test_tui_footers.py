"""Every screen's footer at 60x20 and 80x24 (and 160x45) reads whole: each key it shows has its whole
label, the command-palette key sits whole at the right edge, and nothing else is on the line.

Textual's compact Footer scrolled the keys that did not fit under the palette key docked at the
right, and gave that key a right margin, so narrow terminals showed `del` without its label,
`f1 H▏^p palette` and a stray letter after the palette key (`^p paletteQ`). The footer's line is
read from what the screen draws, not from the widgets' state."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from textual.app import App
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

from supportdesk.tui.screens.replay import ReplayScreen
from supportdesk.tui.widgets import Conversation
from tests.test_tui_dashboard import _drawn, _stats_app, history_db  # noqa: F401 (a fixture)
from tests.test_tui_snapshots_browser import StoreHost, _settle
from tests.test_tui_snapshots_browser import seeded_db as browser_db  # noqa: F401 (a fixture)
from tests.test_tui_snapshots_chat import make_app, replay_still, still
from tests.test_tui_snapshots_chat import seeded_db as chat_db  # noqa: F401 (a fixture)
from tests.test_tui_snapshots_inbox import inbox_app, settled
from tests.test_tui_snapshots_inbox import seeded_db as inbox_db  # noqa: F401 (a fixture)
from tests.tui_seed import SEED_ID, until

SIZES = [(60, 20), (80, 24), (160, 45)]


def footer_line_problems(app: App[Any]) -> tuple[str, list[str]]:
    """The footer's drawn line, and what is wrong with it (empty: every key whole, nothing else)."""
    screen = app.screen
    footer = screen.query_one(Footer)
    y = footer.region.y
    line = screen._compositor.render_strips()[y].text
    covered = [False] * len(line)
    problems: list[str] = []
    shown = 0
    palette = None
    for widget in footer.query("FooterKey, FooterLabel"):
        region = widget.region
        if not widget.display or not region.width:
            continue
        if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
            palette = widget
        drawn = line[region.x : region.right]
        label = widget.render().plain if isinstance(widget, FooterKey) else str(widget.render())
        want = label.strip()
        got = drawn.strip().lstrip("▏").strip() if widget is palette else drawn.strip()
        if region.x < footer.region.x or region.right > footer.region.right or got != want:
            problems.append(f"{want!r} drawn as {drawn!r}")
        for x in range(max(0, region.x), min(len(line), region.right)):
            covered[x] = True
        shown += isinstance(widget, FooterKey)
    stray = "".join(ch for ch, mine in zip(line, covered) if not mine and not ch.isspace())
    if stray:
        problems.append(f"stray characters {stray!r}")
    if palette is None or palette.region.right != footer.region.right:
        problems.append("the palette key is not whole at the right edge")
    if shown < 4:
        problems.append(f"only {shown} keys shown")
    return line, problems


async def check(app: App[Any], size: tuple[int, int], ready: Callable[[Any], Awaitable[None]]) -> None:
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        line, problems = footer_line_problems(app)
        assert not problems, f"{line!r}: {problems}"
        # Narrower: the keys that no longer fit go whole, the rest stay whole.
        if size[0] > 60:
            await pilot.resize_terminal(60, size[1])
            await until(pilot, lambda: not footer_line_problems(app)[1], limit=5)


sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


@sizes
async def test_browser_footer_is_whole(browser_db: Path, size: tuple[int, int]) -> None:  # noqa: F811
    await check(StoreHost(browser_db, "desk-dark"), size, _settle)


@sizes
async def test_chat_footer_is_whole(chat_db: Path, size: tuple[int, int]) -> None:  # noqa: F811
    app = make_app(chat_db, "desk-dark", session_id=SEED_ID)

    async def ready(pilot: Any) -> None:
        await until(pilot, lambda: app.chat is not None and app.chat.loaded == SEED_ID and app.chat.query_one(Conversation).last == 14)
        await still(pilot)

    await check(app, size, ready)


@sizes
async def test_replay_footer_is_whole(chat_db: Path, size: tuple[int, int]) -> None:  # noqa: F811
    app = make_app(chat_db, "desk-dark", replay_id=SEED_ID)

    async def ready(pilot: Any) -> None:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.shown == 14)
        await until(pilot, lambda: not app.screen.workers)
        await replay_still(pilot)

    await check(app, size, ready)


@sizes
async def test_inbox_footer_is_whole(inbox_db: Path, test_desk: Any, size: tuple[int, int]) -> None:  # noqa: F811
    await check(inbox_app(inbox_db, test_desk), size, settled)


@sizes
async def test_dashboard_footer_is_whole(history_db: Path, size: tuple[int, int]) -> None:  # noqa: F811
    await check(_stats_app(history_db, "all"), size, _drawn("all"))
