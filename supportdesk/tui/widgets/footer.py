"""Textual's Footer, rebuilt once for a burst of binding changes instead of once per change."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class DeskFooter(Footer):
    """A Footer that coalesces its rebuilds.

    Textual's Footer recomposes (removes and mounts a key widget per binding, each restyled) after
    every binding change of its screen. Opening a session changes them four times in a row (the
    screen shown, the input focused, the approval keys checked ...), and the four rebuilds were
    ~30 ms of the path to the session's first page. Here a change while a rebuild is already
    waiting adds nothing: that rebuild reads the bindings when it runs, so it shows the last
    change, as the last of the four did."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_waiting = False

    def bindings_changed(self, screen: Screen) -> None:
        if self._rebuild_waiting:
            return  # the rebuild already asked for reads the bindings when it runs
        # What Footer asks for a rebuild under: the change is on this footer's screen, with focus.
        self._rebuild_waiting = self.is_attached and screen is self.screen and screen.app.app_focus
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self._rebuild_waiting = False
        await super().recompose()
