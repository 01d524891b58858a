"""One lightweight widget per item in the conversation window.

Only agent messages get a Markdown widget; everything else is a single Static. Tool calls,
results and context writes are folded to one line and expand on click or Enter.
"""

from __future__ import annotations

import json

from rich.console import Group
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from supportdesk.items import Item, Message
from supportdesk.text import safe_text
from supportdesk.tui.widgets.render import (
    HANDOFF_ICONS,
    NOTICE_ICONS,
    AgentLook,
    call_summary,
    compact_json,
    handoff_text,
    literal,
    speaker,
)

APPROVAL_HINT = "approve: /approve or ctrl+y · deny: /deny or ctrl+g"


def item_id(seq: int) -> str:
    return f"item-{seq}"


def stamp(item: Item) -> str:
    return f"{item.created_at:%H:%M:%S}"


class MessageView(Static):
    """A stored message: who spoke (agent title in its colour) and what they said, in one widget.

    Agent text is Markdown (Rich's renderable: a window of them mounts in milliseconds, where a
    Markdown widget per message would not); customer, staff and system text is literal.
    """

    def __init__(self, item: Message, look: AgentLook):
        self.item: Message | None = item
        self.look = look
        self.agent = item.agent
        self.seq = item.seq
        super().__init__(classes=f"item message -{item.role}", id=item_id(item.seq), markup=False)

    def on_mount(self) -> None:
        if self.item.role == "agent":
            self.styles.border_left = ("outer", self.look.color(self.agent))

    def render(self) -> Group:
        item = self.item
        header = Text.assemble(speaker(item, self.look), (f"  {stamp(item)}", "dim"))
        body = RichMarkdown(safe_text(item.text)) if item.role == "agent" else literal(item.text)
        return Group(header, body)

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        if self.item.role == "agent":
            self.styles.border_left = ("outer", look.color(self.agent))
        self.refresh()


class StreamingReply(Vertical):
    """A reply as it streams: a Markdown widget fed by MarkdownStream, growing in place.

    When the message is stored it stays where it is and takes the item's seq.
    """

    def __init__(self, look: AgentLook, agent: str):
        super().__init__(classes="item message -agent -streaming")
        self.look = look
        self.agent = agent
        self.item: Message | None = None
        self.seq = 0
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="speaker", markup=False)
        yield Markdown("", classes="body")

    def on_mount(self) -> None:
        self.styles.border_left = ("outer", self.look.color(self.agent))

    def _header(self) -> Text:
        if self.item is None:
            return Text.assemble(self.look.label(self.agent), (" · writing…", "dim italic"))
        return Text.assemble(speaker(self.item, self.look), (f"  {stamp(self.item)}", "dim"))

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self.query_one(".speaker", Static).update(self._header())
        self.styles.border_left = ("outer", look.color(self.agent))

    async def write(self, fragment: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(safe_text(fragment))

    async def finish(self, item: Message) -> None:
        """The reply is stored: stop streaming and show exactly what the log holds."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.item, self.seq, self.agent = item, item.seq, item.agent
        self.id = item_id(item.seq)
        self.remove_class("-streaming")
        self.query_one(".speaker", Static).update(self._header())
        await self.query_one(Markdown).update(safe_text(item.text))

    async def abandon(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        await self.remove()


class FoldedLine(Static, can_focus=True):
    """Tool calls, tool results and context writes: one line, Enter or a click expands it."""

    BINDINGS = [Binding("enter,space", "toggle", "Expand", show=False)]
    expanded: reactive[bool] = reactive(False, layout=True)

    def __init__(self, item: Item, look: AgentLook):
        self.item = item
        self.look = look
        self.seq = item.seq
        super().__init__(classes=f"item folded -{item.kind.replace('_', '-')}", id=item_id(item.seq), markup=False)
        if item.kind == "tool_result" and item.is_error:
            self.add_class("-error")

    def render(self) -> Text:
        item = self.item
        marker = "▾ " if self.expanded else "▸ "
        line = Text(marker, style="dim")
        if item.kind == "tool_call":
            line.append("⚙ ")
            line.append_text(self.look.label(item.agent, bold=False))
            line.append(" called ")
            line.append(item.name, style="bold")
            if self.expanded:
                line.append("\n")
                line.append_text(literal(json.dumps(item.arguments, ensure_ascii=False, indent=2)))
            else:
                line.append("(")
                line.append_text(literal(call_summary(item.arguments)))
                line.append(")")
        elif item.kind == "tool_result":
            line.append("✗ " if item.is_error else "✓ ", style="bold")
            line.append(item.name, style="bold")
            line.append(" → ")
            line.append_text(literal(item.output if self.expanded else " ".join(item.output.split())))
        else:  # context_set
            line.append("• context ")
            line.append_text(literal(item.key, "bold"))
            if item.value is None:
                line.append(" cleared", style="italic")
            else:
                line.append(" = ")
                value = json.dumps(item.value, ensure_ascii=False, indent=2) if self.expanded else compact_json(item.value)
                line.append_text(literal(value))
            line.append(f"  by {item.writer}", style="dim")
        line.append(f"  {stamp(item)}", style="dim")
        if not self.expanded and self.size.width:
            line.truncate(self.size.width - 3, overflow="ellipsis")  # one line, whatever it holds
        return line

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")

    def action_toggle(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        self.expanded = not self.expanded


class HandoffLine(Static):
    """A handoff: the conversation changes hands here."""

    def __init__(self, item: Item, look: AgentLook):
        self.item = item
        self.look = look
        self.seq = item.seq
        super().__init__(classes=f"item handoff -{item.handoff_kind}", id=item_id(item.seq), markup=False)

    def render(self) -> Text:
        icon = HANDOFF_ICONS.get(self.item.handoff_kind, "→")
        return Text.assemble((f"{icon} handoff ", "bold"), handoff_text(self.item, self.look), (f"  {stamp(self.item)}", "dim"))


class NoticeLine(Static):
    """Limits, provider errors, approval requests and decisions: always visible."""

    def __init__(self, item: Item, look: AgentLook):
        self.item = item
        self.look = look
        self.seq = item.seq
        kind = item.notice_kind.replace("_", "-")
        super().__init__(classes=f"item notice -{kind}", id=item_id(item.seq), markup=False)

    def render(self) -> Text:
        item = self.item
        out = Text(f"{NOTICE_ICONS.get(item.notice_kind, '!')} ", style="bold")
        out.append_text(literal(item.text))
        if item.notice_kind == "approval_requested":
            out.append(f"\n  {APPROVAL_HINT}", style="italic")
        elif item.notice_kind == "provider_error":
            out.append("\n  the customer's message is kept · /retry runs the agents again", style="italic")
        out.append(f"  {stamp(item)}", style="dim")
        return out


def item_widget(item: Item, look: AgentLook) -> MessageView | FoldedLine | HandoffLine | NoticeLine:
    if item.kind == "message":
        return MessageView(item, look)
    if item.kind == "handoff":
        return HandoffLine(item, look)
    if item.kind == "notice":
        return NoticeLine(item, look)
    return FoldedLine(item, look)
