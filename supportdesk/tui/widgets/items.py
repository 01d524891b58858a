"""What each kind of item looks like: its Rich renderable and how it is framed in the pane.

Stored items are drawn as lines by `ItemLines` (one widget for the whole window). Only a reply
that is still streaming is a widget of its own: a Markdown widget fed by MarkdownStream.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, assert_never

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from supportdesk import items as k
from supportdesk.staff import describe
from supportdesk.text import safe_text
if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

from supportdesk.tui.widgets.markdown_text import agent_text
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

STAFF_ICONS = {"takeover": "✋", "release": "↩", "state_change": "◆", "tag_change": "#"}
APPROVAL_HINT = "approve: /approve or ctrl+y · deny: /deny or ctrl+g"


def stamp(item: k.Item) -> str:
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


def frame(item: k.Item) -> Frame:
    match item:
        case k.Message():
            # An agent's bar is drawn in the agent's own colour (see ItemLines).
            return Frame(f"item-lines--{item.role}", f"item-lines--edge-{item.role}", margin_bottom=1)
        case k.Handoff():
            return Frame("item-lines--handoff", margin_top=1, margin_bottom=1)
        case k.Notice():
            style = NOTICE_STYLES.get(item.notice_kind, "notice")
            return Frame(f"item-lines--{style}", f"item-lines--edge-{style}", margin_bottom=1)
        case k.ToolResult() if item.is_error:
            return Frame("item-lines--folded-error", left=2)
        case k.ToolCall() | k.ToolResult() | k.ContextSet():
            return Frame("item-lines--folded", left=2)
        case k.StaffReply():
            return Frame("item-lines--staff-reply", "item-lines--edge-staff-reply", margin_bottom=1)
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return Frame("item-lines--staff-act", margin_top=1, margin_bottom=1)
        case k.Offer() | k.Decline():
            return Frame("item-lines--notice", "item-lines--edge-notice", margin_bottom=1)
        case k.Confirmation():
            return Frame("item-lines--notice-granted", "item-lines--edge-notice-granted", margin_bottom=1)
        case _:
            assert_never(item)


def renderable(item: k.Item, look: AgentLook, *, expanded: bool = False) -> RenderableType:
    """The item's content. Untrusted text goes in as data: literal Text, or Markdown for agents."""
    match item:
        case k.Message():
            header = Text.assemble(speaker(item, look), (f"  {stamp(item)}", "dim"))
            # Rich's Markdown (markdown-it, Pygments) loads with the first reply that has Markdown syntax.
            body = agent_text(safe_text(item.text)) if item.role == "agent" else literal(item.text)
            return Group(header, body)
        case k.Handoff():
            icon = HANDOFF_ICONS.get(item.handoff_kind, "→")
            return Text.assemble((f"{icon} handoff ", "bold"), handoff_text(item, look), (f"  {stamp(item)}", "dim"))
        case k.Notice():
            return notice_text(item)
        case k.ToolCall() | k.ToolResult() | k.ContextSet():
            return folded_text(item, look, expanded=expanded)
        case k.StaffReply():
            header = Text.assemble((f"{safe_text(item.person)} (staff, to the customer)", "bold"), (f"  {stamp(item)}", "dim"))
            return Group(header, literal(item.text))
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return Text.assemble((f"{STAFF_ICONS[item.kind]} ", "bold"), literal(describe(item)), (f"  {stamp(item)}", "dim"))
        case k.Offer():
            # An offer made for the agent it is passed up to says so: staff see who runs it on the yes.
            runner = f" · {look.title(item.for_agent)} runs it" if item.for_agent else ""
            words = f"{item.action}{runner} · waiting for the customer's yes (/withdraw to take it back)"
            return Text.assemble(("? offer ", "bold"), literal(words), (f"  {stamp(item)}", "dim"))
        case k.Confirmation():
            words = f"the customer said yes to {item.tool} ({item.source}); it runs as offered"
            return Text.assemble(("✔ confirmed ", "bold"), literal(words), (f"  {stamp(item)}", "dim"))
        case k.Decline():
            return Text.assemble(("✗ offer closed ", "bold"), literal(f"{item.tool}: {item.why}"), (f"  {stamp(item)}", "dim"))
        case _:
            assert_never(item)


def folds(item: k.Item) -> bool:
    """Whether the item is drawn as one line that expands to show more (a cleared key has no more)."""
    match item:
        case k.ToolCall() | k.ToolResult():
            return True
        case k.ContextSet():
            return item.value is not None
        case k.Message() | k.Handoff() | k.Notice() | k.Takeover() | k.Release() | k.StateChange() | k.StaffReply() | k.TagChange():
            return False
        case k.Offer() | k.Confirmation() | k.Decline():
            return False
        case _:
            assert_never(item)


def is_pending(item: k.ToolResult) -> bool:
    """A tool call held for staff approval: it has not happened yet, so it must not read as done."""
    return item.awaits_approval


def notice_text(item: k.Notice) -> Text:
    out = Text(f"{NOTICE_ICONS.get(item.notice_kind, '!')} ", style="bold")
    out.append_text(literal(item.text))
    if item.notice_kind == "approval_requested":
        out.append(f"\n  {APPROVAL_HINT}", style="italic")
    elif item.notice_kind == "provider_error":
        out.append("\n  the customer's message is kept · /retry runs the agents again", style="italic")
    out.append(f"  {stamp(item)}", style="dim")
    return out


def folded_text(item: k.ToolCall | k.ToolResult | k.ContextSet, look: AgentLook, *, expanded: bool) -> Text:
    """Tool calls, tool results and context writes: one line (cut with …) unless expanded."""
    marker = ("▾ " if expanded else "▸ ") if folds(item) else "  "
    line = Text(marker, style="dim")
    match item:
        case k.ToolCall():
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
        case k.ToolResult():
            pending = is_pending(item)
            line.append("✗ " if item.is_error else "⏸ " if pending else "✓ ", style="bold")
            line.append(item.name, style="bold")
            line.append(" → ")
            output = item.output if expanded else " ".join(item.output.split())
            line.append_text(literal(output, "italic" if pending else ""))
        case k.ContextSet():
            line.append("• context ")
            line.append_text(literal(item.key, "bold"))
            if item.value is None:
                line.append(" cleared", style="italic")
            else:
                line.append(" = ")
                value = json.dumps(item.value, ensure_ascii=False, indent=2) if expanded else compact_json(item.value)
                line.append_text(literal(value))
            line.append(f"  by {item.writer}", style="dim")
        case _:
            assert_never(item)
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
        from textual.widgets import Markdown  # only a streaming reply needs the widget

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

    def _body(self) -> Markdown:
        from textual.widgets import Markdown

        return self.query_one(Markdown)

    @property
    def source(self) -> str:
        return self._body().source

    async def write(self, fragment: str) -> None:
        if self._stream is None:
            body = self._body()
            self._stream = body.get_stream(body)
        await self._stream.write(safe_text(fragment))

    async def stop(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            await stream.stop()
        except asyncio.CancelledError:
            # Textual's MarkdownStream.stop cancels its task and awaits it: a task cancelled
            # before its first step (a write that added nothing never let it run) re-raises that
            # cancellation here, which ended the turn's worker as if the screen were closing,
            # the working indicator up and the turn left half read.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this task itself is being cancelled: let it


def is_agent_reply(item: k.Item) -> bool:
    return isinstance(item, k.Message) and item.role == "agent"
