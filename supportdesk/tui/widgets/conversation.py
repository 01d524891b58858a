"""The conversation pane: a bounded window of the log, never the whole session.

At most a few pages of items are mounted. Scrolling to the top reads the page before the
window from the store (an index lookup); scrolling to the bottom of a window that stops
short of the position reads the page after it. A live reply streams into a MessageView
that stays the last child until its message is stored.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from supportdesk.items import Item, Message
from supportdesk.store import SessionStore
from supportdesk.tui.projection import PAGE
from supportdesk.tui.widgets.items import MessageView, StreamingReply, item_id, item_widget
from supportdesk.tui.widgets.render import AgentLook

T = TypeVar("T")

def serialized(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Run a window change under the pane's lock: a page loading on scroll must not interleave
    with a replay step or a live append (they would mount the same item twice)."""

    @functools.wraps(method)
    async def locked(self: Conversation, *args: Any, **kwargs: Any) -> T:
        async with self._lock:
            return await method(self, *args, **kwargs)

    return locked


# More than this many mounted items and the far end of the window is let go (it reloads on demand).
MAX_MOUNTED = 3 * PAGE
# A replay jump mounts about a screenful; scrolling up (or a short window) loads the rest.
JUMP_PAGE = 12


class Conversation(VerticalScroll, can_focus=True):
    """Items `first..last` of one session are mounted; `end` is the position the pane may show."""

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 0 1;
        scrollbar-size-vertical: 1;
    }
    Conversation #older { color: $text-muted; text-align: center; width: 1fr; margin-bottom: 1; }
    Conversation .item { height: auto; }
    Conversation .message { margin: 0 0 1 0; padding: 0 1; }
    Conversation .message .speaker { height: 1; }
    Conversation .message .body { height: auto; }
    Conversation .message.-streaming { height: auto; }
    Conversation .message.-customer { background: $boost; border-left: outer $secondary; }
    Conversation .message.-staff { background: $warning 8%; border-left: outer $warning; }
    Conversation .message.-system { color: $text-muted; border-left: outer $panel-lighten-2; }
    Conversation Markdown { margin: 0; padding: 0; background: transparent; }
    Conversation Markdown > *:last-child { margin-bottom: 0; }
    Conversation .folded { color: $text-muted; padding: 0 1 0 2; text-wrap: nowrap; text-overflow: ellipsis; }
    Conversation .folded.-expanded { text-wrap: wrap; }
    Conversation .folded:hover { background: $boost; }
    Conversation .folded:focus { background: $boost; color: $text; }
    Conversation .folded.-error { color: $text-error; }
    Conversation .handoff { padding: 0 1; margin: 1 0 1 0; background: $primary 12%; }
    Conversation .notice { padding: 0 1; margin: 0 0 1 0; background: $warning 10%; border-left: outer $warning; }
    Conversation .notice.-provider-error, Conversation .notice.-approval-denied {
        background: $error 10%; border-left: outer $error;
    }
    Conversation .notice.-approval-granted { background: $success 10%; border-left: outer $success; }
    Conversation .notice.-info { background: $boost; border-left: outer $primary; }
    Conversation .-flash { background: $accent 30%; }
    """

    def __init__(self, look: AgentLook, *, id: str | None = None):
        super().__init__(id=id)
        self.look = look
        self.store: SessionStore | None = None
        self.session_id: str | None = None
        self.items: list[Item] = []  # the mounted window, oldest first
        self.end = 0
        self.stream: StreamingReply | None = None
        self._loading = False
        self._lock = asyncio.Lock()

    @property
    def first(self) -> int:
        return self.items[0].seq if self.items else self.end + 1

    @property
    def last(self) -> int:
        return self.items[-1].seq if self.items else self.end

    def compose(self):
        yield Static("", id="older", markup=False)

    # --- whole-window changes ---------------------------------------------------------------------

    @serialized
    async def show(self, store: SessionStore | None, session_id: str | None, items: Sequence[Item], end: int) -> None:
        """Replace the window: `items` are the page ending at `end`."""
        self.store, self.session_id, self.end = store, session_id, end
        await self._drop_stream()
        await self._clear()
        await self._mount_items(list(items))
        self.anchor()
        self.call_after_refresh(self._fill_if_short)

    async def _clear(self) -> None:
        self.items = []
        await self.remove_children(".item")
        self._update_hint()

    async def _replace_window(self, page: list[Item]) -> None:
        """Swap the whole window for `page` in one batch (a replay jump)."""
        old = {item.seq for item in self.items}
        with self.app.batch_update():
            removal = self.remove_children(".item")
            self.items = []
            if old.isdisjoint(item.seq for item in page):
                # No id is in both windows, so the old widgets may go while the new ones come.
                mounting = self._mount_items(page)
                await removal
                await mounting
            else:
                await removal
                await self._mount_items(page)

    async def _mount_items(self, items: list[Item], *, front: bool = False) -> None:
        if not items:
            return
        widgets = [item_widget(item, self.look) for item in items]
        if front:
            await self.mount_all(widgets, after=self.query_one("#older"))
            self.items[:0] = items
        elif self.stream is not None:
            await self.mount_all(widgets, before=self.stream)
            self.items.extend(items)
        else:
            await self.mount_all(widgets)
            self.items.extend(items)
        self._update_hint()

    def _update_hint(self) -> None:
        hint = self.query_one("#older", Static)
        earlier = self.first - 1
        if earlier > 0:
            hint.update(Text(f"↑ {earlier} earlier item{'s' if earlier != 1 else ''} · scroll up to load", style="dim italic"))
        elif self.items:
            hint.update(Text("start of the session", style="dim italic"))
        else:
            hint.update(Text("no messages yet · type below and press Enter", style="dim italic"))

    async def _prune(self, *, keep_end: bool) -> None:
        """Let go of the far side of a window grown past MAX_MOUNTED."""
        excess = len(self.items) - MAX_MOUNTED
        if excess <= 0:
            return
        drop = self.items[:excess] if keep_end else self.items[-excess:]
        self.items = self.items[excess:] if keep_end else self.items[:-excess]
        for item in drop:
            for widget in self.query(f"#{item_id(item.seq)}"):
                await widget.remove()
        self._update_hint()

    # --- the live end -----------------------------------------------------------------------------

    @serialized
    async def extend(self, items: Sequence[Item]) -> list[Item]:
        """New items from the log (live). Returns the ones this pane had not seen."""
        fresh = [item for item in items if item.seq > self.end]
        if not fresh:
            return []
        at_end = self.last >= self.end
        self.end = fresh[-1].seq
        if not at_end:
            return fresh  # the user is reading older items; they load when scrolled to
        for item in fresh:
            if isinstance(item, Message) and item.role == "agent" and self.stream is not None:
                # The reply that was streaming is stored: it becomes that item in place.
                await self.stream.finish(item)
                self.items.append(item)
                self.stream = None
            else:
                await self._mount_items([item])
        if self.is_anchored:
            await self._prune(keep_end=True)
        return fresh

    @property
    def is_anchored(self) -> bool:
        return self._anchored and not self._anchor_released

    @serialized
    async def start_stream(self, agent: str) -> None:
        await self._drop_stream()
        if self.last < self.end:
            return  # scrolled back: the reply will be there when they come down
        self.stream = StreamingReply(self.look, agent)
        await self.mount(self.stream)

    async def write_stream(self, text: str) -> None:
        if self.stream is not None:
            await self.stream.write(text)

    async def _drop_stream(self) -> None:
        if self.stream is not None:
            stream, self.stream = self.stream, None
            await stream.abandon()

    @serialized
    async def end_stream(self) -> None:
        """The step ended without storing a message (tool calls, an error): drop the draft."""
        await self._drop_stream()

    # --- replay's cursor ---------------------------------------------------------------------------

    @serialized
    async def set_position(self, position: int) -> None:
        """Show the log up to `position` (replay): trim or extend the window, or reload it."""
        assert self.store is not None and self.session_id is not None
        self.end = position
        if self.items and self.first <= position <= self.last:
            while self.items and self.items[-1].seq > position:
                item = self.items.pop()
                await self.query_one(f"#{item_id(item.seq)}").remove()
        elif self.items and self.last < position <= self.last + JUMP_PAGE:
            await self._mount_items(await self.store.range(self.session_id, self.last + 1, position))
            await self._prune(keep_end=True)
        else:
            page = await self.store.range(self.session_id, max(1, position - JUMP_PAGE + 1), position)
            await self._replace_window(page)
        self._update_hint()
        self.anchor()
        self.call_after_refresh(self._fill_if_short)

    # --- on demand --------------------------------------------------------------------------------

    def _fill_if_short(self) -> None:
        """A window shorter than the pane cannot be scrolled up, so load older items now."""
        if not self._loading and self.items and self.first > 1 and self.max_scroll_y == 0 and self.store is not None:
            self._loading = True
            self.run_worker(self.load_older(), group="conversation-load", exclusive=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fill_if_short)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
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
            await self._mount_items(older, front=True)
            await self._prune(keep_end=False)

            def keep_place() -> None:
                # What was on screen stays put: move down by what was added above it.
                self.scroll_to(y=self.scroll_y + self.virtual_size.height - before, animate=False, immediate=True)

            self.call_after_refresh(keep_place)
        finally:
            self._loading = False
        self.call_after_refresh(self._fill_if_short)

    @serialized
    async def load_newer(self) -> None:
        try:
            if self.store is None or self.session_id is None or self.last >= self.end:
                return
            newer = await self.store.range(self.session_id, self.last + 1, min(self.end, self.last + PAGE))
            await self._mount_items(newer)
            await self._prune(keep_end=True)
        finally:
            self._loading = False

    @serialized
    async def reveal(self, seq: int) -> Widget | None:
        """Scroll to item `seq`, loading a window around it if it is not mounted."""
        if self.store is None or self.session_id is None:
            return None
        if not (self.items and self.first <= seq <= self.last):
            await self._drop_stream()
            await self._clear()
            around = await self.store.range(self.session_id, max(1, seq - PAGE // 2), min(self.end, seq + PAGE // 2))
            await self._mount_items(around)
        widgets = self.query(f"#{item_id(seq)}")
        if not widgets:
            return None
        target = widgets.first()
        self.release_anchor()
        self.call_after_refresh(self.scroll_to_widget, target, animate=False, top=True)
        target.add_class("-flash")
        self.set_timer(1.5, lambda: target.remove_class("-flash"))
        return target

    @serialized
    async def follow(self) -> None:
        """Back to the live end (End key): reload the last page if the window left it."""
        if self.last < self.end and self.store is not None and self.session_id is not None:
            await self._clear()
            await self._mount_items(await self.store.range(self.session_id, max(1, self.end - PAGE + 1), self.end))
        self.anchor()

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        for widget in self.query(".item"):
            if isinstance(widget, (MessageView, StreamingReply)):
                widget.recolor(look)
            else:
                widget.look = look  # type: ignore[attr-defined]
                widget.refresh()
