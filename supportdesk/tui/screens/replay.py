"""Replay: a past session, read-only, as of a position cursor k.

The panes are the same projections as the live chat's, taken at k (`projection.cursor`) and
shown through the same pane protocol. Moving k reads only what it needs: the handoff stops come
from one index read at open (`kind_seqs`), and each move reads the items stepped over (or a
window ending at k), the agent and the context as of k.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, CSSPathType
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Static

from supportdesk.engine.log import StoreError
from supportdesk.text import safe_text
from supportdesk.tui.projection import Snapshot, cursor
from supportdesk.tui.screens.browser import ConfirmFork
from supportdesk.tui.seen import mark_seen
from supportdesk.tui.widgets.panes import PANE_BINDINGS, PaneActions, session_panes
from supportdesk.tui.widgets import AgentBar, AgentLook, Conversation, HandoffTimeline
from supportdesk.tui.widgets.footer import DeskFooter

if TYPE_CHECKING:
    from supportdesk.tui.app import SupportDeskApp


# The position line's key hint, longest first: the first that fits is shown (none when none does).
POSITION_HINTS = ("home/end · f fork from here · esc close", "f fork · esc close", "esc close")

class ConfirmForkHere(ConfirmFork):
    """The browser's fork question, for a fork from the replay cursor (items 1..k, not all)."""

    QUESTION = "Fork from here?"

    def __init__(self, session_id: str, title: str, upto: int, total: int) -> None:
        super().__init__(session_id, title, upto)
        self.total = total

    def consequence(self) -> str:
        return (
            f"A new session gets a copy of items 1–{self.item_count} of {self.total} and opens live; "
            "this one stays as it is."
        )


class ReplayScreen(PaneActions):
    CSS_PATH: ClassVar[CSSPathType] = "replay.tcss"
    # The footer shows one label per pair of keys ("←→ Item"); help lists each key with its tooltip.
    ITEM = Binding.Group("Item", compact=True)
    HANDOFF = Binding.Group("Handoff", compact=True)
    BINDINGS = [
        # Priority: the panes' own scrolling keys must not swallow the cursor's.
        Binding("left", "step(-1)", "Back", tooltip="One item back", priority=True, group=ITEM),
        Binding("right", "step(1)", "Forward", tooltip="One item forward", priority=True, group=ITEM),
        Binding("left_square_bracket,p", "handoff(-1)", "Prev handoff", tooltip="To the previous handoff", group=HANDOFF),
        Binding("right_square_bracket,n", "handoff(1)", "Next handoff", tooltip="To the next handoff", group=HANDOFF),
        Binding("home", "go('start')", "Start", tooltip="To the start of the session", priority=True, show=False),
        Binding("end", "go('end')", "End", tooltip="To the end of the session", priority=True, show=False),
        Binding("f", "fork", "Fork", tooltip="Fork a new live session from this item (asks first)"),
        # Said on the position line instead: the footer keeps its labels at 80 columns.
        Binding("escape,q", "close", "Close", tooltip="Close the replay", show=False),
        *PANE_BINDINGS,
    ]

    position: var[int] = var(0, init=False)
    # The position every pane has finished drawing (`position` is set before the reads for it):
    # what tests and anything else that must see the whole screen at k wait on.
    shown: var[int] = var(-1, init=False)
    # The session as of the cursor, as every pane shows it (None until the first read).
    snapshot: var[Snapshot | None] = var(None, init=False)

    def __init__(self, desk, look: AgentLook, session_id: str, position: int | None = None):
        super().__init__(look)
        self.desk = desk
        self.session_id = session_id
        self._start_at = position
        self.total = 0

    @property
    def store(self):
        return self.desk.store

    def compose(self) -> ComposeResult:
        with Vertical(id="header"):
            yield AgentBar(self.look, id="agent-bar")
            yield Static("", id="position", markup=False)
        yield from session_panes(self.look, self.store, "Context as of here · ✱ this step")
        yield DeskFooter(compact=True)

    @property
    def stops(self) -> list[int]:
        """The seqs of the session's handoffs: previous/next handoff are bisects."""
        shown = self.snapshot
        return shown.stops + shown.later_stops if shown is not None else []

    async def on_mount(self) -> None:
        first = await cursor(self.store, self.session_id, self._start_at)
        if first is None or first.session is None:
            self.app.notify(f"no session {self.session_id!r}", severity="error")
            self.dismiss()
            return
        self.info = first.session
        self.total = self.info.item_count
        mark_seen(self.session_id, self.total)
        self.sub_title = f"replay {self.info.id}"
        self.position = first.position
        await self._show(first)
        self.query_one(Conversation).focus()

    # --- moving the cursor ----------------------------------------------------------------------------

    async def show_position(self, k: int) -> None:
        """Every pane as of item k."""
        self.position = k
        moved = await cursor(self.store, self.session_id, k, self.snapshot)
        if moved is not None:
            await self._show(moved)

    async def _show(self, snap: Snapshot) -> None:
        self.snapshot = snap
        await self.show_panes(snap)
        self.query_one(AgentBar).set_facts(self.session_id, self.total, len(self.stops), extra="replay · read-only")
        self.query_one("#position", Static).update(self.position_text(snap.position, len(snap.stops)))
        self.shown = snap.position

    def position_text(self, k: int, handoff_index: int) -> Text:
        text = Text("◆ ", style="bold")
        text.append(f"handoff {handoff_index} of {len(self.stops)}", style="bold")
        text.append(" · ")
        text.append(f"item {k} of {self.total}", style="bold")
        if k == self.total:
            text.append("  (end)", style="dim")
        elif k == 0:
            text.append("  (start)", style="dim")
        # The keys' hint in the room left, in whole parts (at 80 columns it read "… esc…").
        room = self.query_one("#position", Static).content_size.width if self.is_mounted else 0
        for hint in POSITION_HINTS:
            if not room or text.cell_len + 5 + len(hint) <= room:
                text.append("     " + hint, style="dim")
                break
        return text

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_position)

    def _fit_position(self) -> None:
        snap = self.snapshot
        if snap is not None and self.shown >= 0:
            self.query_one("#position", Static).update(self.position_text(snap.position, len(snap.stops)))

    @work(exclusive=True, group="replay-move")
    async def move_to(self, k: int) -> None:
        await self.show_position(max(0, min(k, self.total)))

    def action_step(self, delta: int) -> None:
        self.move_to(self.position + delta)

    def action_handoff(self, direction: int) -> None:
        if not self.stops:
            self.notify("this session has no handoffs", severity="warning")
            return
        if direction > 0:
            index = bisect_right(self.stops, self.position)
            target = self.stops[index] if index < len(self.stops) else None
        else:
            index = bisect_left(self.stops, self.position)
            target = self.stops[index - 1] if index > 0 else None
        if target is None:
            self.notify("no more handoffs that way", severity="information", timeout=2)
            return
        self.move_to(target)

    def action_go(self, where: str) -> None:
        self.move_to(0 if where == "start" else self.total)

    @on(HandoffTimeline.Jump)
    def jump(self, event: HandoffTimeline.Jump) -> None:
        self.move_to(event.seq)

    def action_fork(self) -> None:
        """Ask (as the browser does), then make a new live session of items 1..k and open it."""
        upto = self.position
        def chosen(yes: bool | None) -> None:
            if yes:
                self._fork(upto)

        self.app.push_screen(ConfirmForkHere(self.session_id, self.info.title, upto, self.total), chosen)

    @work(exclusive=True, group="replay-fork")
    async def _fork(self, upto: int) -> None:
        try:
            info = await self.store.fork(self.session_id, upto)
        except StoreError as exc:
            self.app.notify(safe_text(f"Could not fork the session: {exc}"), severity="error")
            return
        self.app.notify(f"forked {self.session_id} at item {upto} into {info.id}")
        # Opening the fork pops this screen, which cancels what runs in its context: the load
        # must run in the app's, or it is cut off half-way (no fork line in the header).
        self.app.call_later(cast("SupportDeskApp", self.app).open_session, info.id)

    def action_close(self) -> None:
        self.dismiss()
