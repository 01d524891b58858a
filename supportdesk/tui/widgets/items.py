"""What each kind of item looks like: its Rich renderable and how it is framed in the pane.

Stored items are drawn as lines by `ItemLines` (one widget for the whole window). Only a reply
that is still streaming is a widget of its own: a Markdown widget fed by MarkdownStream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
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
FOLDED_KINDS = frozenset({"tool_call", "tool_result", "context_set"})


def stamp(item: Item) -> str:
    return f"{item.created_at:%H:%M:%S}"


@dataclass(frozen=True)
class Frame:
    """How an item sits in the pane: the component classes that colour it and the space around it."""

    style: str  # component class of the block (background, text colour)
    edge: str | None = None  # component class whose colour draws a bar down the left; None: no bar
    left: int = 1  # blank cells between the bar (or the pane's edge) and the text
    margin_top: int = 0
    margin_bottom: int = 0


NOTICE_STYLES = {
    "provider_error": "notice-error",
    "approval_denied": "notice-error",
    "approval_granted": "notice-granted",
    "info": "notice-info",
}


def frame(item: Item) -> Frame:
    if item.kind == "message":
        # An agent's bar is drawn in the agent's own colour (see ItemLines).
        return Frame(f"item-lines--{item.role}", f"item-lines--edge-{item.role}", margin_bottom=1)
    if item.kind == "handoff":
        return Frame("item-lines--handoff", margin_top=1, margin_bottom=1)
    if item.kind == "notice":
        style = NOTICE_STYLES.get(item.notice_kind, "notice")
        return Frame(f"item-lines--{style}", f"item-lines--edge-{style}", margin_bottom=1)
    error = item.kind == "tool_result" and item.is_error
    return Frame("item-lines--folded-error" if error else "item-lines--folded", left=2)


def renderable(item: Item, look: AgentLook, *, expanded: bool = False) -> RenderableType:
    """The item's content. Untrusted text goes in as data: literal Text, or Markdown for agents."""
    if item.kind == "message":
        header = Text.assemble(speaker(item, look), (f"  {stamp(item)}", "dim"))
        body = RichMarkdown(safe_text(item.text)) if item.role == "agent" else literal(item.text)
        return Group(header, body)
    if item.kind == "handoff":
        icon = HANDOFF_ICONS.get(item.handoff_kind, "→")
        return Text.assemble((f"{icon} handoff ", "bold"), handoff_text(item, look), (f"  {stamp(item)}", "dim"))
    if item.kind == "notice":
        return notice_text(item)
    return folded_text(item, look, expanded=expanded)


def notice_text(item: Item) -> Text:
    out = Text(f"{NOTICE_ICONS.get(item.notice_kind, '!')} ", style="bold")
    out.append_text(literal(item.text))
    if item.notice_kind == "approval_requested":
        out.append(f"\n  {APPROVAL_HINT}", style="italic")
    elif item.notice_kind == "provider_error":
        out.append("\n  the customer's message is kept · /retry runs the agents again", style="italic")
    out.append(f"  {stamp(item)}", style="dim")
    return out


def folded_text(item: Item, look: AgentLook, *, expanded: bool) -> Text:
    """Tool calls, tool results and context writes: one line (cut with …) unless expanded."""
    line = Text("▾ " if expanded else "▸ ", style="dim")
    if item.kind == "tool_call":
        line.append("⚙ ")
        line.append_text(look.label(item.agent, bold=False))
        line.append(" called ")
        line.append(item.name, style="bold")
        if expanded:
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
        line.append_text(literal(item.output if expanded else " ".join(item.output.split())))
    else:  # context_set
        line.append("• context ")
        line.append_text(literal(item.key, "bold"))
        if item.value is None:
            line.append(" cleared", style="italic")
        else:
            line.append(" = ")
            value = json.dumps(item.value, ensure_ascii=False, indent=2) if expanded else compact_json(item.value)
            line.append_text(literal(value))
        line.append(f"  by {item.writer}", style="dim")
    line.append(f"  {stamp(item)}", style="dim")
    if not expanded:
        line.no_wrap, line.overflow = True, "ellipsis"
    return line


class StreamingReply(Vertical):
    """A reply as it streams: a Markdown widget fed by MarkdownStream, growing in place.

    Once the message is stored the pane draws it with the other items and this widget goes.
    """

    def __init__(self, look: AgentLook, agent: str):
        super().__init__(classes="message -agent -streaming")
        self.look = look
        self.agent = agent
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="speaker", markup=False)
        yield Markdown("", classes="body")

    def on_mount(self) -> None:
        self.styles.border_left = ("outer", self.look.color(self.agent))

    def _header(self) -> Text:
        return Text.assemble(self.look.label(self.agent), (" · writing…", "dim italic"))

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self.query_one(".speaker", Static).update(self._header())
        self.styles.border_left = ("outer", look.color(self.agent))

    @property
    def source(self) -> str:
        return self.query_one(Markdown).source

    async def write(self, fragment: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(safe_text(fragment))

    async def stop(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


def is_agent_reply(item: Item) -> bool:
    return isinstance(item, Message) and item.role == "agent"
