"""A window of items drawn as lines: one widget, however many items the window holds.

Each item is rendered once per width (and fold state) into strips; the compositor then asks only
for the lines it shows. Mounting a widget per item cost a style pass, a layout pass and a render
per widget on every window change: a replay jump is now one re-layout of one widget.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.color import Color
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from supportdesk.items import Item, Message
from supportdesk.tui.widgets.items import Frame, folds, frame, renderable
from supportdesk.tui.widgets.render import AgentLook

EDGE = "▌"

# How each part of an item is drawn, from the theme's variables: (background, colour), each a
# variable with an optional alpha as CSS writes it ("warning 8%" is `$warning 8%`), or None to
# keep the widget's own. These were component classes (`ItemLines > .item-lines--customer
# { background: $boost; }`): each was a styled node Textual matched against every stylesheet
# and resolved on the session screen's first frame (25 of them) and on every restyle. The
# styles are built here with Textual's own colour arithmetic (see `ItemLines._looks`), so they
# are the colours those rules gave, in every theme (tests/test_tui_item_looks.py compares them).
LOOKS: dict[str, tuple[str | None, str | None]] = {
    "item-lines--customer": ("boost", None),
    "item-lines--edge-customer": (None, "secondary"),
    "item-lines--agent": (None, None),
    "item-lines--edge-agent": (None, "primary"),
    "item-lines--staff": ("warning 8%", None),
    "item-lines--edge-staff": (None, "warning"),
    "item-lines--staff-reply": ("success 8%", None),
    "item-lines--edge-staff-reply": (None, "success"),
    "item-lines--staff-act": ("warning 12%", None),
    "item-lines--system": (None, "text-muted"),
    "item-lines--edge-system": (None, "panel-lighten-2"),
    "item-lines--folded": (None, "text-muted"),
    "item-lines--folded-error": (None, "text-error"),
    "item-lines--handoff": ("primary 12%", None),
    "item-lines--notice": ("warning 10%", None),
    "item-lines--edge-notice": (None, "warning"),
    "item-lines--notice-error": ("error 10%", None),
    "item-lines--edge-notice-error": (None, "error"),
    "item-lines--notice-granted": ("success 10%", None),
    "item-lines--edge-notice-granted": (None, "success"),
    "item-lines--notice-info": ("boost", None),
    "item-lines--edge-notice-info": (None, "primary"),
    "item-lines--cursor": ("accent 18%", None),
    "item-lines--hover": ("boost", None),
    "item-lines--flash": ("accent 30%", None),
}


def _theme_color(spec: str, variables: dict[str, str], *, background: bool) -> tuple[Color, bool]:
    """`spec` ("warning 8%") as Textual's CSS reads `$warning 8%`: the colour (its alpha times the
    percentage) and whether it is `auto` (a colour that contrasts with the background)."""
    name, _, alpha = spec.partition(" ")
    auto = False
    color: Color | None = None
    percent: float | None = float(alpha.rstrip("%")) / 100 if alpha else None
    for token in variables.get(name, "").split():
        if token == "auto" and not background:
            auto = True
        elif token.endswith("%"):
            percent = float(token.rstrip("%")) / 100
        else:
            color = Color.parse(token)
    if percent is not None:
        color = (color or Color(255, 255, 255)).multiply_alpha(percent)
    return color or Color(0, 0, 0, 0), auto


@dataclass
class Block:
    """One item's drawn lines and the frame they were drawn from."""

    strips: list[Strip]
    frame: Frame


class ItemLines(Widget):
    """Items `items[0].seq .. items[-1].seq` of one session, oldest first, as lines.

    Everything kept between frames (drawn blocks, folds, the cursor, the flash) belongs to the
    session shown: the drawn blocks are keyed by (session, seq), and the rest is dropped when
    the window starts showing another session. Seqs restart at 1 in every session (and a fork
    shares its parent's first seqs): keyed by seq alone, the page of the session shown before
    was drawn in place of this one's (issue 39 §1).
    """

    DEFAULT_CSS = "ItemLines { height: auto; width: 1fr; }"

    def __init__(self, look: AgentLook, *, id: str | None = None):
        super().__init__(id=id)
        self.look = look
        self.items: list[Item] = []
        self.expanded: set[int] = set()  # seqs of folded items shown whole
        self.cursor: int | None = None  # the selected item's seq (drawn while show_cursor)
        self.show_cursor = False
        self.hover: int | None = None
        self.flash: int | None = None
        self.session_id: str | None = None  # the session the window's items belong to
        self._blocks: dict[tuple[str, int], tuple[tuple[int, bool], Block]] = {}
        self._tops: list[int] = []  # where each item's block starts, in lines
        self._height = 0
        self._laid_out: tuple[int, int] | None = None  # (width, version) the tops were computed for
        self._version = 0
        self._drawn_with: tuple[Style, ...] | None = None  # the styles the kept blocks were drawn in
        self._looks_cache: dict[str, Style] | None = None  # LOOKS in the current theme

    # --- the window ---------------------------------------------------------------------------------

    def set_items(self, items: Iterable[Item], session_id: str | None = None) -> None:
        """Show `items` (of `session_id`, or of the items' own session): a window of another
        session drops everything kept for the one shown before."""
        self.items = list(items)
        session = session_id or (self.items[0].session_id if self.items else None) or None
        if session != self.session_id:
            self._forget_session(session)
        self._changed()

    def append(self, items: Sequence[Item]) -> None:
        self.items.extend(self._own(items))
        self._changed()

    def prepend(self, items: Sequence[Item]) -> None:
        self.items[:0] = self._own(items)
        self._changed()

    def _own(self, items: Sequence[Item]) -> list[Item]:
        """The items of the session shown (a page of another one is never drawn here)."""
        if self.session_id is None:  # a new session: its first stored items name it
            self.session_id = next((item.session_id for item in items if item.session_id), None)
        return [item for item in items if not item.session_id or item.session_id == self.session_id]

    def _forget_session(self, session_id: str | None) -> None:
        self.session_id = session_id
        self._blocks.clear()
        self.expanded.clear()
        self.cursor = self.hover = self.flash = None

    def drop_first(self, count: int) -> list[Item]:
        dropped, self.items = self.items[:count], self.items[count:]
        self._changed()
        return dropped

    def drop_last(self, count: int) -> list[Item]:
        if count <= 0:
            return []
        dropped, self.items = self.items[-count:], self.items[:-count]
        self._changed()
        return dropped

    def truncate_after(self, seq: int) -> None:
        """Keep the items up to and including `seq`."""
        keep = bisect_right([item.seq for item in self.items], seq)
        self.drop_last(len(self.items) - keep)

    def index_of(self, seq: int) -> int | None:
        index = bisect_right([item.seq for item in self.items], seq) - 1
        return index if index >= 0 and self.items[index].seq == seq else None

    def _changed(self) -> None:
        live = {item.seq for item in self.items}
        drawn = {(item.session_id, item.seq) for item in self.items}
        self._blocks = {key: block for key, block in self._blocks.items() if key in drawn}
        self.expanded &= live
        if self.cursor not in live:
            self.cursor = None
        self._version += 1
        self._laid_out = None
        self.refresh(layout=True)

    # --- fold, select, flash ------------------------------------------------------------------------

    def toggle(self, seq: int) -> bool:
        """Expand or fold a tool call, tool result or context line. False if it does not fold."""
        index = self.index_of(seq)
        if index is None or not folds(self.items[index]):
            return False
        self.expanded ^= {seq}
        self._version += 1
        self._laid_out = None
        self.refresh(layout=True)
        return True

    def set_flash(self, seq: int | None) -> None:
        self.flash = seq
        self.refresh()

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self._forget_rendering()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._looks_cache = None
        # Textual calls this whenever a pseudo-class around the widget may have changed (the
        # focus moving to the prompt, a hover): opening a session made it three times, and each
        # redrew the whole page. The kept blocks go stale only when a style drawn into them did
        # (a theme change: every colour baked into the strips).
        drawn_with = self._styles_drawn() if self._blocks else None
        if drawn_with is None or drawn_with != self._drawn_with:
            self._drawn_with = drawn_with
            self._forget_rendering()

    def _styles_drawn(self) -> tuple[Style, ...]:
        """Every style `_render_block` draws with."""
        return (self.rich_style, *self._looks().values())

    def look_style(self, name: str) -> Style:
        """How part `name` of an item is drawn (a key of `LOOKS`), in the current theme."""
        return self._looks()[name]

    def _looks(self) -> dict[str, Style]:
        """Every part's style, computed as Textual's `DOMNode.rich_style` computes a component
        node's under this widget, once per restyle (a theme change restyles every widget)."""
        if self._looks_cache is not None:
            return self._looks_cache
        background, color, text_style, opacity = Color(0, 0, 0, 0), Color(255, 255, 255, 0), Style(), 1.0
        for node in reversed(self.ancestors_with_self):
            styles = node.styles
            opacity *= styles.opacity
            text_background = background
            if styles.has_rule("background"):
                tinted = styles.background.tint(styles.background_tint)
                text_background = background + tinted
                background += tinted.multiply_alpha(opacity)
            if styles.has_rule("color"):
                color = styles.color
            text_style += styles.text_style
            if styles.has_rule("auto_color") and styles.auto_color:
                color = text_background.get_contrast_text(color.a)
        variables = self.app.theme_variables
        looks: dict[str, Style] = {}
        for name, (background_spec, color_spec) in LOOKS.items():
            bg, fg = background, color
            text_background = bg
            if background_spec is not None:
                layer, _ = _theme_color(background_spec, variables, background=True)
                text_background = bg + layer
                bg = bg + layer.multiply_alpha(opacity)
            if color_spec is not None:
                fg, auto = _theme_color(color_spec, variables, background=False)
                if auto:
                    fg = text_background.get_contrast_text(fg.a)
            looks[name] = text_style + Style.from_color(
                (bg + fg).rich_color if (bg.a or fg.a) else None, bg.rich_color if bg.a else None
            )
        self._looks_cache = looks
        return looks

    def _forget_rendering(self) -> None:
        self._blocks.clear()
        self._laid_out = None
        self.refresh(layout=True)

    # --- geometry -----------------------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._layout(width)
        return self._height

    def region_of(self, seq: int) -> Region | None:
        """Where item `seq` is, in this widget's lines (y 0 is the first line of the window)."""
        index = self.index_of(seq)
        if index is None:
            return None
        width = self.size.width or 1
        self._layout(width)
        block = self._block(index, width)
        return Region(0, self._tops[index], width, len(block.strips))

    def seq_at(self, y: int) -> int | None:
        """The item drawn on line `y`, or None for the space between items."""
        if not self.items:
            return None
        self._layout(self.size.width or 1)
        index = bisect_right(self._tops, y) - 1
        if index < 0:
            return None
        block = self._block(index, self.size.width or 1)
        return self.items[index].seq if y < self._tops[index] + len(block.strips) else None

    def _layout(self, width: int) -> None:
        if self._laid_out == (width, self._version):
            return
        tops: list[int] = []
        y = 0
        below = 0  # the previous block's bottom margin: margins between blocks collapse, as in CSS
        for index in range(len(self.items)):
            block = self._block(index, width)
            y += max(below, block.frame.margin_top) if tops else block.frame.margin_top
            tops.append(y)
            y += len(block.strips)
            below = block.frame.margin_bottom
        self._tops, self._height = tops, y + below
        self._laid_out = (width, self._version)

    # --- drawing ------------------------------------------------------------------------------------

    def _block(self, index: int, width: int) -> Block:
        item = self.items[index]
        key = (width, item.seq in self.expanded)
        cached = self._blocks.get((item.session_id, item.seq))
        if cached is not None and cached[0] == key:
            return cached[1]
        if not self._blocks:
            self._drawn_with = self._styles_drawn()
        block = self._render_block(item, width, expanded=key[1])
        self._blocks[(item.session_id, item.seq)] = (key, block)
        return block

    def _render_block(self, item: Item, width: int, *, expanded: bool) -> Block:
        shape = frame(item)
        base = self.rich_style
        style = base + self.look_style(shape.style)
        edge: list[Segment] = []
        if shape.edge is not None:
            color = self.look_style(shape.edge).color
            if isinstance(item, Message) and item.role == "agent":
                color = Style.parse(self.look.color(item.agent)).color
            edge = [Segment(EDGE, Style(color=color, bgcolor=base.bgcolor))]
        inner = max(1, width - len(edge) - shape.left - 1)
        console = self.app.console
        options = console.options.update(width=inner, height=None)
        lines = console.render_lines(renderable(item, self.look, expanded=expanded), options, style=style, pad=True)
        left = Segment(" " * shape.left, style)
        right = Segment(" ", style)
        strips = [Strip([*edge, left, *line, right], width) for line in lines]
        return Block(strips, shape)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._layout(width)
        index = bisect_right(self._tops, y) - 1
        if index < 0:
            return Strip.blank(width, self.rich_style)
        block = self._block(index, width)
        row = y - self._tops[index]
        if row >= len(block.strips):
            return Strip.blank(width, self.rich_style)
        strip = block.strips[row]
        seq = self.items[index].seq
        highlight = None
        if seq == self.flash:
            highlight = "item-lines--flash"
        elif seq == self.cursor and self.show_cursor:
            highlight = "item-lines--cursor"
        elif seq == self.hover:
            highlight = "item-lines--hover"
        if highlight is not None:
            # Only the background changes: the text keeps its own colours.
            bg = Style(bgcolor=self.look_style(highlight).bgcolor)
            strip = Strip(Segment.apply_style(iter(strip), post_style=bg), strip.cell_length)
        return strip

    # --- the mouse ----------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        seq = self.seq_at(event.y)
        if seq is None:
            return
        self.cursor = seq
        self.toggle(seq)
        self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        seq = self.seq_at(event.y)
        index = None if seq is None else self.index_of(seq)
        hover = seq if index is not None and folds(self.items[index]) else None
        if hover != self.hover:
            self.hover = hover
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        if self.hover is not None:
            self.hover = None
            self.refresh()

    # --- reading it back (tests, the tmux check) ----------------------------------------------------

    def strips_of(self, seq: int) -> list[Strip]:
        """The item as drawn at the current width (no highlight)."""
        index = self.index_of(seq)
        return [] if index is None else self._block(index, self.size.width or 80).strips

    def text_of(self, seq: int) -> str:
        """The item as drawn, as plain text (one line per row)."""
        return "\n".join(strip.text.rstrip() for strip in self.strips_of(seq))
