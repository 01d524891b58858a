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

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen

from supportdesk.engine.log import Store
from supportdesk.items import Item
from supportdesk.tui.projection import Pane, Snapshot
from supportdesk.tui.widgets.conversation import Conversation
from supportdesk.tui.widgets.inspector import ContextInspector
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.tui.widgets.timeline import HandoffTimeline

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

    def compose_panes(self, look: AgentLook, store: Store, inspector_title: str) -> ComposeResult:
        yield Conversation(look, store, id="conversation")
        with Vertical(id="side"):
            timeline = HandoffTimeline(look, store, id="timeline")
            timeline.border_title = "Handoffs"
            yield timeline
            inspector = ContextInspector(look, id="inspector")
            inspector.border_title = inspector_title
            yield inspector

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

    def action_toggle_side(self) -> None:
        self.query_one(SessionPanes).toggle_side()

    def action_maximize_pane(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None and not self.maximize(self.focused):
            self.notify("this part of the screen does not maximise", severity="warning", timeout=3)


def session_panes(look: AgentLook, store: Store, inspector_title: str) -> ComposeResult:
    """Use inside a screen's compose: `yield from session_panes(look, store, "...")`."""
    panes = SessionPanes(id="panes")
    with panes:
        yield from panes.compose_panes(look, store, inspector_title)
