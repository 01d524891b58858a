"""Textual's Footer, rebuilt once for a burst of binding changes instead of once per change, and
showing only the keys that fit whole beside the command-palette key."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup


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

    DEFAULT_CSS = """
    /* Textual's compact footer gives every key a right margin, the palette key too; docked at the
       right, that margin left the last column uncovered, and the keys scrolled beneath it showed
       through as a stray letter (`^p paletteQ`). */
    DeskFooter.-compact FooterKey.-command-palette { margin-right: 0; }
    """

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

        self.call_after_refresh(self._fit)

    def _on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fitted(self) -> list[Widget]:
        """The footer's keys, groups and group labels, in order (the palette key apart)."""
        return [
            child
            for child in self.children
            if isinstance(child, (FooterKey, KeyGroup, FooterLabel)) and not child.has_class("-command-palette")
        ]

    def _fit(self) -> None:
        """Show every key again, and hide the ones that do not fit once the layout has placed them
        (at a new width, or after a rebuild)."""
        for child in self._fitted():
            child.display = True
        self.call_after_refresh(self._hide_cut)

    def _hide_cut(self) -> None:
        """Hide, from the first one that would be cut, the keys that do not fit whole left of the
        palette key: Textual's Footer scrolls them under it, so a narrow terminal showed `del`
        without its label, or `f1 H` beside the palette key."""
        if not self.is_attached or self.size.width == 0:
            return
        children = self._fitted()
        palettes = [palette for palette in self.query(".-command-palette") if palette.display]
        if any(not widget.region.width for widget in [*children[:1], *palettes]):
            self.call_after_refresh(self._hide_cut)  # not placed yet: measure once the layout has run
            return
        right = min([self.region.right, *(palette.region.x for palette in palettes)])
        cut = len(children)
        for index, child in enumerate(children):
            # A key scrolled wholly out of the footer is not placed at all (no region).
            if not child.display or not child.region.width or child.region.right > right:
                cut = index
                break
        if cut < len(children) and isinstance(children[cut], FooterLabel) and cut > 0:
            cut -= 1  # a group's label goes with its keys
        for index, child in enumerate(children):
            child.display = index < cut
