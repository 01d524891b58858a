"""The desk's widgets: conversation window, agent bar, handoff timeline, context inspector, prompt."""

from supportdesk.tui.widgets.agent_bar import AgentBar, WorkingIndicator
from supportdesk.tui.widgets.conversation import Conversation
from supportdesk.tui.widgets.inspector import ContextInspector
from supportdesk.tui.widgets.prompt import Prompt
from supportdesk.tui.widgets.render import AgentLook
from supportdesk.tui.widgets.timeline import HandoffTimeline

__all__ = ["AgentBar", "AgentLook", "ContextInspector", "Conversation", "HandoffTimeline", "Prompt", "WorkingIndicator"]
