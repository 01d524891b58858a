"""The handoff timeline: every handoff up to the position, newest last; select one to jump."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supportdesk.items import Handoff
from supportdesk.tui.widgets.render import HANDOFF_ICONS, AgentLook, literal


REASON_WIDTH = 40


class HandoffTimeline(OptionList):
    """Each option is one handoff item; its id is the item's seq."""

    class Jump(Message):
        def __init__(self, seq: int):
            super().__init__()
            self.seq = seq

    def __init__(self, look: AgentLook, **kwargs):
        super().__init__(**kwargs)
        self.look = look
        self.handoffs: list[Handoff] = []
        self.current: int | None = None  # the seq of the marked handoff (replay)
        self.position: int | None = None  # replay's cursor: handoffs after it are dimmed

    def show(self, handoffs: Sequence[Handoff], current: int | None = None, position: int | None = None) -> None:
        self.handoffs = list(handoffs)
        self.current = current
        self.position = position
        self._rebuild()

    def add(self, handoff: Handoff) -> None:
        if any(h.seq == handoff.seq for h in self.handoffs):
            return
        self.handoffs.append(handoff)
        self.add_option(self._option(len(self.handoffs), handoff))
        self.highlighted = len(self.handoffs) - 1
        self.border_subtitle = f"{len(self.handoffs)}"

    def _rebuild(self) -> None:
        self.clear_options()
        self.add_options([self._option(n, h) for n, h in enumerate(self.handoffs, 1)])
        self.border_subtitle = f"{len(self.handoffs)}" if self.handoffs else ""
        if self.current is not None:
            for index, handoff in enumerate(self.handoffs):
                if handoff.seq == self.current:
                    self.highlighted = index
        elif self.handoffs:
            self.highlighted = len(self.handoffs) - 1

    def _option(self, number: int, handoff: Handoff) -> Option:
        marked = handoff.seq == self.current
        ahead = self.position is not None and handoff.seq > self.position
        icon = HANDOFF_ICONS.get(handoff.handoff_kind, "→")
        line = Text("▶ " if marked else "  ", style="bold")
        line.append(f"{handoff.created_at:%H:%M}", style="dim")
        line.append(f" #{handoff.seq:<4}", style="dim")
        line.append_text(self.look.label(handoff.from_agent, bold=marked))
        line.append(f" {icon} ")
        line.append_text(self.look.label(handoff.to_agent))
        line.append(f"  {handoff.handoff_kind}", style="italic")
        if handoff.reason:
            line.append("\n    ")
            reason = literal(handoff.reason, "italic")
            reason.truncate(REASON_WIDTH, overflow="ellipsis")  # one line each, however long the reason
            line.append_text(reason)
        if ahead:
            line.stylize("dim")  # not yet happened at the replay's position
        return Option(line, id=f"h{handoff.seq}")

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self._rebuild()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.Jump(int(event.option.id[1:])))
