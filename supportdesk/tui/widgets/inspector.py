"""The shared-context inspector: key, value, who wrote it and when; fresh keys highlighted.

A pane (`projection.Pane`): shown the context of a snapshot; new items at the live end are
folded into that snapshot (`projection.advance`), so it never reads the store itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from supportdesk.engine.log import ContextEntry
from supportdesk.items import Confirmation, Decline, Item, Offer
from supportdesk.tui.projection import Snapshot, advance, last_call_seen, new_session
from supportdesk.tui.widgets.render import AgentLook, compact_json, literal
from supportdesk.text import clip_words, counted


# Long values are clipped in the table; the conversation's context lines expand to show them whole.
VALUE_WIDTH = 26
KEY_WIDTH = 18
KEY_MOST = 22
# The offer row's second line: short enough for the narrowest value column.
OFFER_WAITING = "awaits a yes · /withdraw"


def _clip(text: str, width: int = VALUE_WIDTH) -> str:
    """A key or value on its line: ended on a whole word with "…" when it is longer (issue 39),
    so a cut value never reads as a different whole one ("I want to cancel my subs…")."""
    return clip_words(" ".join(text.split()), width)


def open_offer(items: Sequence[Item], position: int) -> Offer | None:
    """The offer waiting for the customer's yes as of `position` (issue 33), or None."""
    offer: Offer | None = None
    for item in items:
        if item.seq > position:
            break
        if isinstance(item, Offer):
            offer = item
        elif isinstance(item, (Confirmation, Decline)) and offer is not None and item.offer_id == offer.offer_id:
            offer = None
    return offer


def seen_text(seen: dict[str, int]) -> str:
    text = f"last call saw {counted(seen.get('items', 0), 'item')}"
    return text + (f" (+{seen['dropped']:,} summarised)" if seen.get("dropped") else "")


class ContextInspector(DataTable):
    """Focusable (tab, or a click): Enter opens the selected value whole, `c` copies it."""

    BINDING_GROUP_TITLE = "Shared context"
    BINDINGS = [
        Binding("enter", "select_cursor", "Open", tooltip="Open the selected value whole (pretty JSON)"),
        Binding("c", "copy_value", "Copy", tooltip="Copy the selected value to the clipboard"),
    ]

    def __init__(self, look: AgentLook, **kwargs):
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.look = look
        self.context: dict[str, ContextEntry] = {}
        self.changed: set[str] = set()
        # What the last model call saw (the history window): {"items", "dropped", "tokens"}.
        self.seen: dict[str, int] | None = None
        self.snapshot = new_session("")  # what new items are folded into
        self.offer: Offer | None = None  # the offer waiting for the customer's yes, shown first

    def on_mount(self) -> None:
        self.watch(self.screen, "look", self.recolor, init=False)  # the screen's agent colours
        # Two lines a row: key over who wrote it, value over when (fits a narrow side pane).
        # Fixed widths: measured widths come out squashed when rows land while the screen is hidden.
        # Text, not str: a str label is parsed as markup, whose emoji table (rich._emoji_codes,
        # ~3 ms) would load on the way to a session's first page for these two labels alone.
        self.add_column(Text("key · by"), key="key", width=KEY_WIDTH)
        self.add_column(Text("value · at"), key="value", width=VALUE_WIDTH)

    async def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.offer = open_offer(snapshot.items, snapshot.position)
        self.show_context(snapshot.context, snapshot.changed, last_call_seen(snapshot.items, snapshot.position))

    async def extend(self, items: Sequence[Item]) -> None:
        await self.show(advance(self.snapshot, items))

    def _key_width(self) -> int:
        """The key column: KEY_WIDTH, or up to KEY_MOST for a longer key ("escalation_reason" read
        "escalation_reas…"), taken from the value column while it keeps VALUE_WIDTH."""
        longest = max((len(key) + 2 for key in self.context), default=0)  # ("✱ " before a fresh key)
        return max(KEY_WIDTH, min(longest, KEY_MOST))

    def _value_width(self) -> int:
        """The value column takes the pane's width beside the key column (at least VALUE_WIDTH):
        a value is not cut at 26 characters in a 78-column pane."""
        width = self.scrollable_content_region.width  # inside the border, beside a scrollbar
        # Each of the two columns has its padding on both sides; two cells stay for the vertical
        # scrollbar a long context shows (without them, a horizontal one would come too).
        room = width - 4 * self.cell_padding - 2
        return max(VALUE_WIDTH - (self._key_width() - KEY_WIDTH), room - self._key_width()) if width else VALUE_WIDTH

    def on_resize(self) -> None:
        column = self.columns.get(ColumnKey("value"))
        if column is not None and column.width != self._value_width():
            self.show_context(self.context, self.changed, self.seen)

    def show_context(self, context: dict[str, ContextEntry], changed: set[str], seen: dict[str, int] | None = None) -> None:
        self.context, self.changed, self.seen = dict(context), set(changed), seen
        self.clear()
        key_width, value_width = self._key_width(), self._value_width()
        for name, wanted in (("key", key_width), ("value", value_width)):
            column = self.columns.get(ColumnKey(name))
            if column is not None and column.width != wanted:
                column.width = wanted
                self.refresh(layout=True)
        accent = self._accent()
        if self.offer is not None:
            # Untrusted words (the model's arguments) as literal text; staff withdraw it with /withdraw.
            self.add_row(
                Text.assemble(("? offer", "bold"), "\n  ", self.look.label(self.offer.agent, bold=False)),
                Text.assemble(literal(_clip(self.offer.action, value_width), "bold"), "\n", (_clip(OFFER_WAITING, value_width), "dim")),
                key="__offer__",
                height=2,
            )
        for key, entry in sorted(context.items()):
            fresh = key in changed
            style = f"bold {accent}" if fresh else "bold"
            writer = self.look.label(entry.writer, bold=False) if entry.writer in self._agents() else literal(entry.writer, "italic")
            self.add_row(
                Text.assemble(("✱ " if fresh else "  ", style), literal(_clip(key, key_width - 2), style), "\n  ", writer),
                Text.assemble(
                    literal(_clip(compact_json(entry.value), value_width), "bold" if fresh else ""),
                    "\n",
                    (f"#{entry.seq} · {entry.created_at:%H:%M:%S}", "dim"),
                ),
                key=key,
                height=2,
            )
        keys = f"{len(context)} key{'s' if len(context) != 1 else ''}" if context else "empty"
        self.border_subtitle = f"{keys} · {seen_text(seen)}" if seen else keys

    def _selected_key(self) -> str | None:
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return key if key in self.context else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event.row_key.value
        if key in self.context:
            from supportdesk.tui.screens.detail import DetailScreen, context_detail

            self.app.push_screen(DetailScreen(context_detail(key, self.context[key])))

    def action_copy_value(self) -> None:
        key = self._selected_key()
        if key is not None:
            self.app.copy_to_clipboard(json.dumps(self.context[key].value, ensure_ascii=False, indent=2))
            self.notify(f"copied the value of {key} to the clipboard", timeout=2, markup=False)

    def _agents(self) -> set[str]:
        config = self.look.config
        return set(config.agents) if config else set()

    def _accent(self) -> str:
        try:
            return self.app.current_theme.accent or "yellow"
        except Exception:  # no app yet (unit use)
            return "yellow"

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self.show_context(self.context, self.changed, self.seen)
