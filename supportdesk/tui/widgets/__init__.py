"""The desk's widgets: conversation window, agent bar, handoff timeline, context inspector, prompt."""

from typing import TYPE_CHECKING, Any

from supportdesk.tui.widgets.agent_bar import AgentBar, WorkingIndicator
from supportdesk.tui.widgets.conversation import Conversation
from supportdesk.tui.widgets.prompt import Prompt
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.tui.widgets.timeline import HandoffTimeline

if TYPE_CHECKING:
    from supportdesk.tui.widgets.inspector import ContextInspector


def __getattr__(name: str) -> Any:
    # The inspector (a DataTable: Textual's module and its stylesheet) loads when a screen mounts
    # one, after its first frame (widgets/panes.InspectorSlot), not with the other widgets.
    if name == "ContextInspector":
        from supportdesk.tui.widgets.inspector import ContextInspector

        return ContextInspector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["AgentBar", "AgentLook", "ContextInspector", "Conversation", "HandoffTimeline", "Prompt", "WorkingIndicator"]
