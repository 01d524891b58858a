"""The panes every view of a session shares: the conversation beside the handoff timeline
and the context inspector. The chat screen (position = the end) and the replay screen
(position = the cursor) compose the same ones, as the same fold at two positions.

The side column (timeline over inspector) is 52 columns when the terminal has room for it and
~40 columns of conversation; below that it collapses and the conversation takes the whole width.
One key (`PANE_BINDINGS`) toggles the side column at any width: beside the conversation when
wide, in its place when narrow, so the conversation never gets squeezed below `MIN_CONVERSATION`.
Any pane can be maximised (Textual's `Screen.maximize`); Esc restores it.

Every pane of a session screen (these, the agent bar, any other widget the screen composes
that implements `projection.Pane`) is updated through `PaneActions.show_panes` (a whole
snapshot) and `PaneActions.extend_panes` (new items at the live end), and takes the agents'
colours from the screen's `look` reactive: a new pane composed anywhere on the screen gets
all three by implementing the protocol and watching `look`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget

from supportdesk.engine.log import Store
from supportdesk.items import Item
from supportdesk.tui.projection import Pane, Snapshot, advance, new_session
from supportdesk.tui.widgets.conversation import Conversation
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.tui.widgets.timeline import HandoffTimeline

if TYPE_CHECKING:
    from supportdesk.tui.widgets.inspector import ContextInspector

SIDE_WIDTH = 52
# The least width the conversation gets while the terminal has it.
MIN_CONVERSATION = 40

# Shared by every screen that composes `SessionPanes`; the actions are `PaneActions`'.
PANE_BINDINGS = [
    Binding("f2", "toggle_side", "Side", tooltip="Show or hide the handoffs and context column"),
    Binding("f3", "maximize_pane", "Max", tooltip="Maximise the focused pane (Esc restores it)", show=False),
]


class SessionPanes(Horizontal):
    """The conversation and the side column, laid out for the width they have."""

    DEFAULT_CSS = f"""
    SessionPanes {{ height: 1fr; }}
    SessionPanes > #side {{ width: {SIDE_WIDTH}; }}
    SessionPanes.-side-hidden > #side {{ display: none; }}
    SessionPanes.-side-only > #conversation {{ display: none; }}
    SessionPanes.-side-only > #side {{ width: 1fr; }}
    """

    # Too narrow for both: the side column and the conversation take turns.
    narrow: var[bool] = var(False)
    # Whether the side column shows, one choice per layout (the toggle changes the current one).
    side_when_wide: var[bool] = var(True)
    side_when_narrow: var[bool] = var(False)

    def compose_panes(self, look: AgentLook, store: Store, inspector_title: str, *, inspector_later: bool = False) -> ComposeResult:
        yield Conversation(look, store, id="conversation")
        with Vertical(id="side"):
            timeline = HandoffTimeline(look, store, id="timeline")
            timeline.border_title = "Handoffs"
            yield timeline
            if inspector_later:
                yield InspectorSlot(inspector_title)
            else:
                yield _inspector(look, inspector_title)

    @property
    def side_shown(self) -> bool:
        return self.side_when_narrow if self.narrow else self.side_when_wide

    def on_resize(self, event: events.Resize) -> None:
        self.narrow = event.size.width < SIDE_WIDTH + MIN_CONVERSATION

    def toggle_side(self) -> None:
        if self.narrow:
            self.side_when_narrow = not self.side_when_narrow
        else:
            self.side_when_wide = not self.side_when_wide

    def watch_narrow(self) -> None:
        self._arrange()

    def watch_side_when_wide(self) -> None:
        self._arrange()

    def watch_side_when_narrow(self) -> None:
        self._arrange()

    def _arrange(self) -> None:
        shown = self.side_shown
        self.set_class(not shown, "-side-hidden")
        self.set_class(shown and self.narrow, "-side-only")
        # The focus never stays on a pane that just went away.
        focused = self.screen.focused if self.is_attached else None
        if focused is None or not self.query("#side"):
            return  # nothing focused, or the panes are not mounted yet (or are going)
        side = self.query_one("#side")
        conversation = self.query_one(Conversation)
        if focused is not None and not shown and side in focused.ancestors:
            conversation.focus()
        elif focused is conversation and shown and self.narrow:
            self.query_one(HandoffTimeline).focus()


def _inspector(look: AgentLook, title: str) -> ContextInspector:
    from supportdesk.tui.widgets.inspector import ContextInspector

    inspector = ContextInspector(look, id="inspector")
    inspector.border_title = title
    return inspector


class InspectorSlot(Widget):
    """Where the context inspector goes, drawn as an empty one, until `PaneActions.mount_inspector`
    puts the inspector there (after the screen's first frame).

    The inspector is a DataTable: its import, its stylesheet (parsed when the first one is
    mounted), its ten component classes and its first render were part of the chat screen's first
    frame, which is what a person waits for at start-up. The slot is a pane: it keeps what it was
    shown, and the inspector starts from that.
    """

    DEFAULT_CSS = """
    InspectorSlot {
        height: 1fr;
        border: round $secondary 70%;
        border-title-color: $text-primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
        padding: 0 1;
        color: $text;
        text-style: bold;
    }
    """

    def __init__(self, title: str) -> None:
        super().__init__(id="inspector-slot")
        self.border_title = title
        self.snapshot: Snapshot | None = None
        self._later: list[Item] = []  # items after `snapshot`, folded in when the inspector shows it

    def render(self) -> Text:
        # The inspector's column labels (from inspector.py's widths, without importing it).
        return Text(f"{'key · by':<18}  {'value · at'}")

    async def show(self, snapshot: Snapshot) -> None:
        self.snapshot, self._later = snapshot, []
        count = len(snapshot.context)
        self.border_subtitle = f"{count} key{'s' if count != 1 else ''}" if count else "empty"

    async def extend(self, items: Sequence[Item]) -> None:
        self._later.extend(items)

    def shown(self) -> Snapshot:
        """What the inspector should show now."""
        snapshot = self.snapshot or new_session("")
        return advance(snapshot, self._later) if self._later else snapshot


class PaneActions(Screen):
    """What the screens that compose `SessionPanes` share: the one path their panes are updated
    on, the agents' colours they watch, and the actions behind `PANE_BINDINGS`."""

    # The agents' titles and colours; every pane watches it, so a theme change is one assignment.
    look: var[AgentLook] = var(AgentLook(None), init=False)

    def __init__(self, look: AgentLook) -> None:
        super().__init__()
        self.set_reactive(PaneActions.look, look)
        self._panes: list[Pane] | None = None

    def recolor(self, look: AgentLook) -> None:
        """The theme changed the agents' colours (the app calls this on every screen that has it)."""
        self.look = look

    @property
    def panes(self) -> list[Pane]:
        """Every widget of this screen that implements `Pane`, in the order they are composed."""
        if self._panes is None:
            self._panes = [widget for widget in self.walk_children() if isinstance(widget, Pane)]
        return self._panes

    async def show_panes(self, snapshot: Snapshot) -> None:
        for pane in self.panes:
            await pane.show(snapshot)

    async def extend_panes(self, items: Sequence[Item]) -> None:
        for pane in self.panes:
            await pane.extend(items)

    async def mount_inspector(self) -> None:
        """Put the context inspector in its slot (composed with `inspector_later`), showing what
        the slot was shown. Nothing is awaited between showing it and handing it the slot's place
        among the panes, so no update falls between the two."""
        slots = self.query(InspectorSlot)
        if not slots:
            return
        slot = slots.first()
        inspector = _inspector(self.look, str(slot.border_title))
        await slot.parent.mount(inspector, before=slot)  # type: ignore[union-attr]
        if not slot.is_attached:
            return  # the screen closed meanwhile
        await inspector.show(slot.shown())
        self._panes = None  # walked again: the inspector instead of the slot
        await slot.remove()

    def action_toggle_side(self) -> None:
        self.query_one(SessionPanes).toggle_side()

    def action_maximize_pane(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None and not self.maximize(self.focused):
            self.notify("this part of the screen does not maximise", severity="warning", timeout=3)


def session_panes(look: AgentLook, store: Store, inspector_title: str, *, inspector_later: bool = False) -> ComposeResult:
    """Use inside a screen's compose: `yield from session_panes(look, store, "...")`.

    `inspector_later`: compose an `InspectorSlot` in the inspector's place; the screen calls
    `mount_inspector` once its first frame is drawn."""
    panes = SessionPanes(id="panes")
    with panes:
        yield from panes.compose_panes(look, store, inspector_title, inspector_later=inspector_later)
