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
    change, as the last of the four did. And a rebuild that would draw the keys already shown is
    skipped: opening a session asked for a second one, for the same keys, after the first had run
    (each rebuild mounts and restyles every key)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_waiting = False
        self._shown: tuple[Any, ...] | None = None  # what the keys were built from

    def _what_to_show(self) -> tuple[Any, ...]:
        """Everything Footer.compose reads from the screen's bindings."""
        return tuple((binding, enabled, tooltip) for _node, binding, enabled, tooltip in self.screen.active_bindings.values())

    def bindings_changed(self, screen: Screen) -> None:
        if self._rebuild_waiting:
            return  # the rebuild already asked for reads the bindings when it runs
        # What Footer asks for a rebuild under: the change is on this footer's screen, with focus.
        self._rebuild_waiting = self.is_attached and screen is self.screen and screen.app.app_focus
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self._rebuild_waiting = False
        # (A footer no longer on a screen is left to Footer, which rebuilds nothing then.)
        shown = self._what_to_show() if self._bindings_ready and self.is_attached else None
        if shown is not None and shown == self._shown:
            return
        self._shown = shown
        await super().recompose()
