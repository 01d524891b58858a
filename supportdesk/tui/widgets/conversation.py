"""The conversation pane: a bounded window of the log, never the whole session.

The window (at most a few pages of items) is drawn as lines by one `ItemLines` widget.
Scrolling to the top reads the page before the window from the store (an index lookup);
scrolling to the bottom of a window that stops short of the position reads the page after it.
A live reply streams into a Markdown widget below the lines until its message is stored.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from rich.text import Text
from textual import events, on
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.widgets import Static

from supportdesk.items import Item
from supportdesk.engine.log import Store
from supportdesk.tui.projection import JUMP_PAGE, MAX_WINDOW, PAGE, Snapshot
from supportdesk.tui.widgets.item_lines import ItemLines
from supportdesk.tui.widgets.items import StreamingReply, folds, is_agent_reply
from supportdesk.tui.widgets.render import AgentLook

T = TypeVar("T")


def serialized(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Run a window change under the pane's lock: a page loading on scroll must not interleave
    with a replay step or a live append (they would show the same item twice)."""

    @functools.wraps(method)
    async def locked(self: Conversation, *args: Any, **kwargs: Any) -> T:
        async with self._lock:
            return await method(self, *args, **kwargs)

    return locked


# A streaming reply takes the tokens that arrived in one frame in one write (Textual's 60 fps),
# and waits at least STREAM_SPACING times what drawing its last write cost: a long reply's
# relayout grows with it, and back-to-back relayouts would leave no time for the keyboard.
STREAM_FRAME = 1 / 60
STREAM_SPACING = 4
STREAM_MAX_WAIT = 0.5


class Conversation(VerticalScroll, can_focus=True):
    """Items `first..last` of one session are in the window; `end` is the position the pane may show.

    A pane (`projection.Pane`): shown a snapshot, extended with the live end's new items."""

    ALLOW_MAXIMIZE = True

    # Shown in the footer while the conversation has the focus (short labels; help shows the tooltips).
    SELECT = Binding.Group("Select", compact=True)
    BINDINGS = [
        Binding("up", "select(-1)", "Up", tooltip="Select the item above", group=SELECT),
        Binding("down", "select(1)", "Down", tooltip="Select the item below", group=SELECT),
        Binding("enter,space", "open", "Open", tooltip="Expand or fold a tool or context line; open a message whole"),
        Binding("o", "details", "Details", tooltip="Show the selected item whole (pretty JSON), scrollable", show=False),
        Binding("c", "copy_item", "Copy", tooltip="Copy the selected item's text or value", show=False),
    ]

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 0 1;
        scrollbar-size-vertical: 1;
        /* The scrollbar's column is kept whether or not it shows: when a conversation grows past
           the pane, its text does not re-wrap (nor is the page drawn twice when it opens). */
        scrollbar-gutter: stable;
    }
    Conversation #older { color: $text-muted; text-align: center; width: 1fr; margin-bottom: 1; }
    Conversation #newer {
        dock: bottom; height: 1; width: 1fr; display: none;
        text-align: center; background: $accent 35%; color: $text;
    }
    Conversation #newer:hover { background: $accent 55%; }
    Conversation .message { margin: 0 0 1 0; padding: 0 1; height: auto; }
    Conversation .message .speaker { height: 1; }
    Conversation .message .body { height: auto; }
    Conversation Markdown { margin: 0; padding: 0; background: transparent; }
    /* The body's last block ends with its own margin: the reply's gap below. Not a :last-child
       rule on the blocks: every block mounted would restyle all its siblings (quadratic). */
    Conversation .-streaming { margin-bottom: 0; }
    """

    def __init__(self, look: AgentLook, store: Store | None = None, *, id: str | None = None):
        super().__init__(id=id)
        self.look = look
        self.store: Store | None = store  # where older and newer pages are read on demand
        self.session_id: str | None = None
        self.lines = ItemLines(look, id="lines")
        self.end = 0
        self.stream: StreamingReply | None = None
        self._unwritten: list[str] = []  # tokens of the streaming reply since its last frame
        self._frame_due = False
        self._frame_cost = 0.0  # seconds from the last write until its frame was drawn
        self._loading = False
        self._lock = asyncio.Lock()
        self.unseen = 0  # items that arrived below while staff were reading further up

    @property
    def items(self) -> list[Item]:
        """The window, oldest first."""
        return self.lines.items

    @property
    def first(self) -> int:
        return self.items[0].seq if self.items else self.end + 1

    @property
    def last(self) -> int:
        return self.items[-1].seq if self.items else self.end

    def holds(self, seq: int) -> bool:
        """Item `seq` is in the window (drawn, or one scroll away)."""
        return self.lines.index_of(seq) is not None

    def on_mount(self) -> None:
        self.watch(self.screen, "look", self.recolor, init=False)  # the screen's agent colours

    def compose(self):
        yield Static("", id="older", markup=False)
        yield self.lines
        yield Static("", id="newer", markup=False)

    def _set_unseen(self, count: int) -> None:
        """The bar at the foot of the pane: how much arrived below the part being read."""
        self.unseen = count
        bar = self.query_one("#newer", Static)
        bar.display = count > 0
        if count:
            bar.update(Text(f"↓ {count} new item{'s' if count != 1 else ''} below · ctrl+l or click to jump to the latest"))

    @on(events.Click, "#newer")
    def _jump_to_latest(self) -> None:
        self.run_worker(self.follow(), group="conversation-load")

    # --- whole-window changes ---------------------------------------------------------------------

    async def show(self, snapshot: Snapshot) -> None:
        """The live end: the snapshot's page replaces the window. A cursor: the window moves to it."""
        if snapshot.live:
            await self._show_window(snapshot.session_id, snapshot.items, snapshot.position)
        else:
            await self._set_position(snapshot)

    @serialized
    async def _show_window(self, session_id: str | None, items: Sequence[Item], end: int) -> None:
        """Replace the window: `items` are the page ending at `end`."""
        switched = session_id != self.session_id
        self.session_id, self.end = session_id, end
        await self._drop_stream()
        self._set_window(items)
        if switched:
            self.scroll_home(animate=False, immediate=True)  # no scroll offset carried over
        self._set_unseen(0)
        self.anchor()
        self.call_after_refresh(self._fill_if_short)

    def _set_window(self, items: Sequence[Item]) -> None:
        self.lines.set_items(items, self.session_id)
        self._update_hint()

    def _update_hint(self) -> None:
        hint = self.query_one("#older", Static)
        earlier = self.first - 1
        if earlier > 0:
            hint.update(Text(f"↑ {earlier} earlier item{'s' if earlier != 1 else ''} · scroll up to load", style="dim italic"))
        elif self.items:
            hint.update(Text("start of the session", style="dim italic"))
        else:
            hint.update(Text("no messages yet · type below and press Enter · F1 help · ctrl+q quits", style="dim italic"))

    def _prune(self, *, keep_end: bool) -> None:
        """Let go of the far side of a window grown past MAX_WINDOW."""
        excess = len(self.items) - MAX_WINDOW
        if excess <= 0:
            return
        if keep_end:
            self.lines.drop_first(excess)
        else:
            self.lines.drop_last(excess)
        self._update_hint()

    # --- the live end -----------------------------------------------------------------------------

    @serialized
    async def extend(self, items: Sequence[Item]) -> None:
        """New items from the log (live); those this pane has already seen are skipped."""
        fresh = [item for item in items if item.seq > self.end and self._ours(item)]
        if not fresh:
            return
        at_end = self.last >= self.end
        self.end = fresh[-1].seq
        if not at_end or not self.is_anchored:
            self._set_unseen(self.unseen + len(fresh))
        if not at_end:
            return  # the user is reading older items; they load when scrolled to
        if self.stream is not None and any(is_agent_reply(item) for item in fresh):
            # The reply that was streaming is stored: the stored item takes its place in one frame.
            with self.app.batch_update():
                await self._drop_stream()
                self.lines.append(fresh)
        else:
            self.lines.append(fresh)
        self._update_hint()
        if self.is_anchored:
            self._prune(keep_end=True)

    def _ours(self, item: Item) -> bool:
        """Whether `item` belongs to the session shown (a new session takes its first item's)."""
        if self.session_id is None and item.session_id:
            self.session_id = item.session_id
        return not item.session_id or item.session_id == self.session_id

    @property
    def is_anchored(self) -> bool:
        return self._anchored and not self._anchor_released

    @serialized
    async def start_stream(self, agent: str) -> None:
        await self._drop_stream()
        if self.last < self.end:
            return  # scrolled back: the reply will be there when they come down
        self.stream = StreamingReply(self.look, agent)
        self._frame_cost = 0.0  # a new reply is short again: quick to draw
        await self.mount(self.stream)

    async def write_stream(self, text: str) -> None:
        """A token of the streaming reply (see add_token), then a turn of the event loop."""
        self.add_token(text)
        # Tokens the client has already read come without the event loop running in between:
        # let keys and frames in at each one, or a burst holds the screen until it is all read.
        await asyncio.sleep(0)

    def add_token(self, text: str) -> None:
        """Add a token to the streaming reply: it is drawn with the others of its frame.

        One Markdown append (a parse of the open block, a relayout) per token fell behind a
        fast model and held up the keyboard; one per frame keeps up at any token rate."""
        if self.stream is None:
            return
        self._unwritten.append(text)
        if not self._frame_due:
            self._frame_due = True
            wait = min(STREAM_MAX_WAIT, max(STREAM_FRAME, STREAM_SPACING * self._frame_cost))
            self.set_timer(wait, self._write_frame)

    async def _write_frame(self) -> None:
        self._frame_due = False
        text, self._unwritten = "".join(self._unwritten), []
        if self.stream is not None and text:
            started = time.perf_counter()
            await self.stream.write(text)

            def drawn() -> None:
                self._frame_cost = time.perf_counter() - started

            self.call_after_refresh(drawn)

    async def _drop_stream(self) -> None:
        self._unwritten = []
        if self.stream is not None:
            stream, self.stream = self.stream, None
            await stream.stop()
            await stream.remove()

    @serialized
    async def end_stream(self) -> None:
        """The step ended without storing a message (tool calls, an error): drop the draft."""
        await self._drop_stream()

    # --- replay's cursor ---------------------------------------------------------------------------

    @serialized
    async def _set_position(self, snapshot: Snapshot) -> None:
        """Show the log up to the cursor (replay): trim or extend the window, or take the
        snapshot's (`projection.cursor` read what the move needed)."""
        same = snapshot.session_id == self.session_id
        position, self.session_id = snapshot.position, snapshot.session_id
        self.end = position
        stepped_over = [item for item in snapshot.items if item.seq > self.last]
        if not same:
            self.lines.set_items(snapshot.items[-JUMP_PAGE:], self.session_id)
        elif self.items and self.first <= position <= self.last:
            self.lines.truncate_after(position)
        elif self.items and self.last < position <= self.last + JUMP_PAGE and snapshot.items and snapshot.items[0].seq <= self.last + 1:
            self.lines.append(stepped_over)
            self._prune(keep_end=True)
        else:
            self.lines.set_items(snapshot.items[-JUMP_PAGE:], self.session_id)  # about a screenful; the rest on demand
        self._update_hint()
        self.anchor()
        self.call_after_refresh(self._fill_if_short)

    # --- on demand --------------------------------------------------------------------------------

    def _fill_if_short(self) -> None:
        """A window shorter than the pane cannot be scrolled up, so load older items now."""
        if not self.size.height:
            return  # not laid out yet: nothing is known to be short (on_resize asks again)
        if not self._loading and self.items and self.first > 1 and self.max_scroll_y == 0 and self.store is not None:
            self._loading = True
            self.run_worker(self.load_older(), group="conversation-load", exclusive=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill_if_short)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self.unseen and new >= self.max_scroll_y and self.last >= self.end:
            self._set_unseen(0)  # scrolled down to the latest: nothing below is unseen any more
        if self._loading or not self.items or self.store is None:
            return
        if new <= 0 and self.first > 1:
            self._loading = True
            self.run_worker(self.load_older(), group="conversation-load", exclusive=True)
        elif new >= self.max_scroll_y and self.last < self.end:
            self._loading = True
            self.run_worker(self.load_newer(), group="conversation-load", exclusive=True)

    @serialized
    async def load_older(self) -> None:
        try:
            if self.store is None or self.session_id is None or self.first <= 1:
                return
            before = self.virtual_size.height
            older = await self.store.range(self.session_id, max(1, self.first - PAGE), self.first - 1)
            self.lines.prepend(older)
            self._update_hint()
            self._prune(keep_end=False)

            session = self.session_id

            def keep_place() -> None:
                # What was on screen stays put: move down by what was added above it (unless
                # another session is shown by now: its window is not the one that grew).
                if self.session_id == session:
                    self.scroll_to(y=max(0, self.scroll_y + self.virtual_size.height - before), animate=False, immediate=True)

            self.call_after_refresh(keep_place)
        finally:
            self._loading = False
        self.call_after_refresh(self._fill_if_short)

    @serialized
    async def load_newer(self) -> None:
        try:
            if self.store is None or self.session_id is None or self.last >= self.end:
                return
            self.lines.append(await self.store.range(self.session_id, self.last + 1, min(self.end, self.last + PAGE)))
            self._update_hint()
            self._prune(keep_end=True)
        finally:
            self._loading = False

    @serialized
    async def reveal(self, seq: int) -> bool:
        """Scroll to item `seq` and flash it, loading a window around it if it is not in the window."""
        if self.store is None or self.session_id is None:
            return False
        if not (self.items and self.first <= seq <= self.last):
            await self._drop_stream()
            around = await self.store.range(self.session_id, max(1, seq - PAGE // 2), min(self.end, seq + PAGE // 2))
            self._set_window(around)
        if self.lines.index_of(seq) is None:
            return False
        self.release_anchor()
        self.lines.cursor = seq
        self.lines.set_flash(seq)
        self.call_after_refresh(self._scroll_to_item, seq, True)
        self.set_timer(1.5, lambda: self.lines.set_flash(None) if self.lines.flash == seq else None)
        return True

    def item_region(self, seq: int) -> Region | None:
        """Where item `seq` is in the pane's scrollable space (None if it is not in the window)."""
        region = self.lines.region_of(seq)
        return None if region is None else region.translate((0, self.lines.virtual_region.y))

    def _scroll_to_item(self, seq: int, top: bool = False) -> None:
        region = self.item_region(seq)
        if region is not None:
            self.scroll_to_region(region, animate=False, top=top, immediate=True)

    @serialized
    async def follow(self) -> None:
        """Back to the live end (ctrl+l, the new-items bar): reload the last page if the window left it."""
        if self.last < self.end and self.store is not None and self.session_id is not None:
            self._set_window(await self.store.range(self.session_id, max(1, self.end - PAGE + 1), self.end))
        self._set_unseen(0)
        self.anchor()

    # --- the keyboard: an item cursor -------------------------------------------------------------

    def on_focus(self) -> None:
        self.lines.show_cursor = True
        self.lines.refresh()

    def on_blur(self) -> None:
        self.lines.show_cursor = False
        self.lines.refresh()

    async def action_select(self, delta: int) -> None:
        """Move the item cursor; at the window's edge, load the next page that way first."""
        if not self.items:
            return
        index = self.lines.index_of(self.lines.cursor) if self.lines.cursor is not None else None
        if index is None:
            index = self._first_visible() if delta > 0 else self._last_visible()
        else:
            index += delta
            if index < 0 and self.first > 1:
                seq = self.items[0].seq
                self._loading = True
                await self.load_older()
                index = (self.lines.index_of(seq) or 0) - 1
            elif index >= len(self.items) and self.last < self.end:
                self._loading = True
                await self.load_newer()
            index = max(0, min(index, len(self.items) - 1))
        seq = self.items[index].seq
        self.lines.cursor = seq
        self.lines.refresh()
        if index == len(self.items) - 1 and self.last == self.end:
            self.anchor()  # the last item: back to following the live end
        else:
            self.release_anchor()
            # After the refresh: a page loaded above moves the window first.
            self.call_after_refresh(self._scroll_to_item, seq)

    def _visible_seqs(self) -> list[int]:
        top = self.scroll_offset.y - self.lines.virtual_region.y
        seqs = [self.lines.seq_at(y) for y in range(max(0, top), max(0, top + self.scrollable_content_region.height))]
        return [seq for seq in seqs if seq is not None]

    def _first_visible(self) -> int:
        seqs = self._visible_seqs()
        return self.lines.index_of(seqs[0]) or 0 if seqs else 0

    def _last_visible(self) -> int:
        seqs = self._visible_seqs()
        found = self.lines.index_of(seqs[-1]) if seqs else None
        return len(self.items) - 1 if found is None else found

    def _selected(self) -> Item | None:
        """The item under the cursor, or the latest one shown."""
        seq = self.lines.cursor if self.lines.cursor is not None else self.last
        index = self.lines.index_of(seq)
        return self.items[index] if index is not None else None

    def action_open(self) -> None:
        """Enter: a tool or context line folds and unfolds in place; anything else opens whole."""
        item = self._selected()
        if item is None:
            return
        if folds(item) and self.lines.cursor == item.seq:
            self.action_toggle()
        else:
            self.action_details()

    def action_details(self) -> None:
        from supportdesk.tui.screens.detail import DetailScreen, item_detail

        item = self._selected()
        if item is not None:
            self.app.push_screen(DetailScreen(item_detail(item)))

    def action_copy_item(self) -> None:
        from supportdesk.tui.screens.detail import item_detail

        item = self._selected()
        if item is not None:
            self.app.copy_to_clipboard(item_detail(item).text)
            self.notify(f"copied item #{item.seq} to the clipboard", timeout=2)

    def action_toggle(self) -> None:  # type: ignore[override]  # the fold key, not DOMNode's toggle(attribute)
        if self.lines.cursor is not None:
            self.lines.toggle(self.lines.cursor)

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self.lines.recolor(look)
        if self.stream is not None:
            self.stream.recolor(look)
