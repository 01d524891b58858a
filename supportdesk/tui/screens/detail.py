"""Details on demand: one value, tool call, tool result or message shown whole, in a scrollable box.

JSON (a context value, a call's arguments, a result that parses as JSON) is pretty-printed and
highlighted with `rich.syntax.Syntax`; anything else is literal text. `c` copies what is shown to
the clipboard (`App.copy_to_clipboard`, OSC 52 in terminals that allow it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, assert_never

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from supportdesk import items as k
from supportdesk.engine.log import ContextEntry
from supportdesk.staff import describe
from supportdesk.text import safe_text


@dataclass(frozen=True)
class Detail:
    """What the detail view shows: a title, a line about it, and the text (JSON or not)."""

    title: str
    about: str
    text: str
    is_json: bool = False


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def parsed_json(text: str) -> str | None:
    """The text pretty-printed if it is a JSON object or list, else None."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return as_json(json.loads(stripped))
    except ValueError:
        return None


def item_detail(item: k.Item) -> Detail:
    """Every item kind, whole."""
    when = f"#{item.seq} · {item.created_at:%Y-%m-%d %H:%M:%S}"
    match item:
        case k.Message():
            return Detail(f"{item.role} message", f"{when} · {item.agent}", item.text)
        case k.ToolCall():
            return Detail(f"call {item.name}", f"{when} · {item.agent} · {item.call_id}", as_json(item.arguments), True)
        case k.ToolResult():
            pretty = parsed_json(item.output)
            kind = "error from" if item.is_error else "result of"
            about = f"{when} · {item.agent} · {item.call_id}"
            return Detail(f"{kind} {item.name}", about, pretty or item.output, pretty is not None)
        case k.ContextSet():
            value = "(cleared)" if item.value is None else as_json(item.value)
            return Detail(f"context {item.key}", f"{when} · by {item.writer}", value, item.value is not None)
        case k.Handoff():
            text = f"{item.from_agent} → {item.to_agent} ({item.handoff_kind})\n\n{item.reason}"
            return Detail("handoff", when, text)
        case k.Notice():
            data = f"\n\n{as_json(item.data)}" if item.data else ""
            return Detail(f"notice: {item.notice_kind}", when, item.text + data)
        case k.StaffReply():
            return Detail("staff reply to the customer", f"{when} · {item.person} · from {item.origin}", item.text)
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return Detail(item.kind.replace("_", " "), f"{when} · {item.person} · from {item.origin}", describe(item))
        case k.Offer():
            text = f"{item.text}\n\n{item.tool} {as_json(item.arguments)}"
            return Detail(f"offer {item.tool}", f"{when} · {item.agent} · {item.offer_id}", text, True)
        case k.Confirmation():
            text = f"{item.tool} {as_json(item.arguments)}"
            return Detail(f"confirmation ({item.source})", f"{when} · {item.offer_id} · answer #{item.answer_seq}", text, True)
        case k.Decline():
            return Detail(f"offer closed: {item.why}", f"{when} · {item.offer_id} · {item.source}", item.tool)
        case _:
            assert_never(item)


def context_detail(key: str, entry: ContextEntry) -> Detail:
    about = f"#{entry.seq} · {entry.created_at:%Y-%m-%d %H:%M:%S} · by {entry.writer}"
    return Detail(f"context {key}", about, as_json(entry.value), True)


class DetailScreen(ModalScreen[None]):
    """One detail, whole and scrollable; Esc closes, `c` copies."""

    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("c", "copy", "Copy"),
    ]
    DEFAULT_CSS = """
    DetailScreen { align: center middle; background: $background 60%; }
    DetailScreen > #detail {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        background: $surface; border: thick $primary 60%; padding: 0 1;
        border-title-color: $text-primary; border-title-style: bold;
        border-subtitle-color: $text-muted;
    }
    DetailScreen #detail-about { color: $text-muted; margin-bottom: 1; }
    DetailScreen #detail-body { height: auto; max-height: 100%; }
    """

    def __init__(self, detail: Detail) -> None:
        super().__init__()
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="detail") as box:
            box.border_title = safe_text(self.detail.title)
            box.border_subtitle = "c copies · Esc closes"
            yield Static(Text(safe_text(self.detail.about)), id="detail-about")
            with VerticalScroll(id="detail-body"):
                yield Static(self._body(), id="detail-text")

    def _body(self) -> RenderableType:
        text = safe_text(self.detail.text)
        if self.detail.is_json:
            theme = "ansi_dark" if self.app.current_theme.dark else "ansi_light"
            return Syntax(text, "json", theme=theme, word_wrap=True, background_color="default")
        return Text(text)

    def on_mount(self) -> None:
        self.query_one("#detail-body").focus()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.detail.text)
        self.notify("copied to the clipboard", timeout=2)

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["Detail", "DetailScreen", "context_detail", "item_detail"]
