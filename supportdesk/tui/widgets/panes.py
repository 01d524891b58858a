"""The panes every view of a session shares: the conversation beside the handoff timeline
and the context inspector. The chat screen (position = the end) and the replay screen
(position = the cursor) compose the same ones, as the same fold at two positions."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

from supportdesk.tui.widgets.conversation import Conversation
from supportdesk.tui.widgets.inspector import ContextInspector
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.tui.widgets.timeline import HandoffTimeline


def session_panes(look: AgentLook, inspector_title: str) -> ComposeResult:
    """Use inside a screen's compose: `yield from session_panes(look, "...")`."""
    with Horizontal(id="panes"):
        yield Conversation(look, id="conversation")
        with Vertical(id="side"):
            timeline = HandoffTimeline(look, id="timeline")
            timeline.border_title = "Handoffs"
            yield timeline
            inspector = ContextInspector(look, id="inspector")
            inspector.border_title = inspector_title
            yield inspector
