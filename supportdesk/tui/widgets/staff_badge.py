"""The badge in the top right corner of every screen: how many conversations need staff.

The count is the app's `needing_staff` (kept by `follow_staff_count`, one index count per batch
of changes the store's feed reports, from this process or any other); each screen gets a badge
of its own that watches it. Hidden at zero. It floats over the screen's first line instead of
taking a line of its own, so no screen's layout changes when it comes or goes.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from supportdesk.engine.log import StoreError


class StaffBadge(Static):
    DEFAULT_CSS = """
    StaffBadge {
        position: absolute;
        width: auto;
        height: 1;
        padding: 0 1;
        background: $warning;
        color: $text;
        text-style: bold;
        display: none;
        layer: staff-badge;
    }
    StaffBadge.-some { display: block; }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.count = 0

    def on_mount(self) -> None:
        self.watch(self.app, "needing_staff", self.show_count, init=True)
        # The screen's size is not reactive, its virtual size is, and changes with it; an
        # absolutely placed widget's own Resize does not carry its screen's new width.
        self.watch(self.screen, "virtual_size", lambda _size: self.place(), init=False)

    def show_count(self, count: int) -> None:
        self.count = count
        text = f"⚠ {count} need{'s' if count == 1 else ''} staff"
        self.update(text)
        self.set_class(count > 0, "-some")
        # A screen whose first line holds text at its right end (the browser's status) keeps
        # that text clear of the badge through this class.
        self.screen.set_class(count > 0, "-staff-badge")
        self.place(len(text) + 2)

    def on_resize(self, event: events.Resize) -> None:
        self.place()  # its own width changed (a count with more digits)

    def place(self, width: int | None = None) -> None:
        """Keep to the top right corner of the screen, whatever its width."""
        width = width if width is not None else self.outer_size.width
        self.styles.offset = (max(0, self.screen.size.width - width), 0)


def badge_screen(screen: Screen[Any]) -> None:
    """Give a full screen its badge (once); dialogs and the palette show the one behind them."""
    if isinstance(screen, ModalScreen) or screen.query(StaffBadge):
        return
    # A layer of its own above the screen's: docked widgets (the chat screen's agent bar) are
    # drawn over everything else on their layer, the badge among them.
    screen.styles.layers = "default staff-badge"
    screen.mount(StaffBadge())


async def follow_staff_count(app: Any, store: Any) -> None:
    """Keep `app.needing_staff` equal to the store's count, re-counted when the feed says so."""
    try:
        async with await store.follow() as feed:
            app.needing_staff = await store.count_needing_staff(app.clock())
            async for _ in feed:
                app.needing_staff = await store.count_needing_staff(app.clock())
    except StoreError:
        pass  # a desk whose feed stopped keeps the last count; the screens say why themselves
