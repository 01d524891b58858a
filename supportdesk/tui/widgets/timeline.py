"""The handoff timeline: a page of handoffs (newest last); select one to jump to it.

A long session may hold thousands of handoffs, so the list shows a page of them with a row
for the earlier (and, in replay, later) ones; selecting that row pages.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supportdesk.items import Handoff
from supportdesk.tui.projection import HANDOFF_PAGE
from supportdesk.tui.widgets.render import HANDOFF_ICONS, AgentLook, literal

REASON_WIDTH = 40


class HandoffTimeline(OptionList):
    """Each handoff option's id is `h<seq>`; the paging rows are `earlier` and `later`."""

    class Jump(Message):
        def __init__(self, seq: int):
            super().__init__()
            self.seq = seq

    class Page(Message):
        def __init__(self, direction: int):
            super().__init__()
            self.direction = direction  # -1 earlier, +1 later

    def __init__(self, look: AgentLook, **kwargs):
        super().__init__(**kwargs)
        self.look = look
        self.handoffs: list[Handoff] = []  # the page shown
        self.before = 0  # handoffs earlier than the page
        self.after = 0  # handoffs later than the page (replay)
        self.current: int | None = None  # the seq of the marked handoff (replay)

    @property
    def total(self) -> int:
        return self.before + len(self.handoffs) + self.after

    def show(self, handoffs: Sequence[Handoff], *, before: int = 0, after: int = 0, current: int | None = None) -> None:
        self.handoffs, self.before, self.after, self.current = list(handoffs), before, after, current
        self._rebuild()

    def mark(self, current: int | None) -> None:
        """Move the replay marker within the listed page: two rows change, not the whole list."""
        if current == self.current:
            return
        previous, self.current = self.current, current
        by_seq = {h.seq: (self.before + n, h) for n, h in enumerate(self.handoffs, 1)}
        for seq in (previous, current):
            if seq in by_seq:
                number, handoff = by_seq[seq]
                self.replace_option_prompt(f"h{seq}", self._option(number, handoff).prompt)
        if current is not None and current in by_seq:
            self.highlighted = self.get_option_index(f"h{current}")
        else:
            self.highlighted = None

    def add(self, handoff: Handoff) -> None:
        """A handoff just landed (live): it joins the end of the page."""
        if any(h.seq == handoff.seq for h in self.handoffs):
            return
        if self.after:  # an earlier page is shown: the new one waits below it
            self.after += 1
            self._rebuild()
            return
        self.handoffs.append(handoff)
        if len(self.handoffs) > HANDOFF_PAGE:
            self.handoffs.pop(0)
            self.before += 1
            self._rebuild()
        else:
            self.add_option(self._option(self.before + len(self.handoffs), handoff))
            self.highlighted = self.option_count - 1
            self.border_subtitle = str(self.total)

    def _rebuild(self) -> None:
        self.clear_options()
        options: list[Option] = []
        if self.before:
            options.append(Option(Text(f"  ↑ {self.before} earlier handoffs · select to show", style="dim italic"), id="earlier"))
        options += [self._option(self.before + n, h) for n, h in enumerate(self.handoffs, 1)]
        if self.after:
            options.append(Option(Text(f"  ↓ {self.after} later handoffs · select to show", style="dim italic"), id="later"))
        self.add_options(options)
        self.border_subtitle = str(self.total) if self.total else ""
        marked = [i for i, o in enumerate(options) if self.current is not None and o.id == f"h{self.current}"]
        if marked:
            self.highlighted = marked[0]
        elif self.handoffs and self.current is None and not self.after:
            self.highlighted = len(options) - 1
        else:
            self.highlighted = None

    def _option(self, number: int, handoff: Handoff) -> Option:
        marked = handoff.seq == self.current
        icon = HANDOFF_ICONS.get(handoff.handoff_kind, "→")
        line = Text("▶ " if marked else "  ", style="bold")
        line.append(f"{handoff.created_at:%H:%M}", style="dim")
        line.append(f" #{handoff.seq:<4} ", style="dim")
        line.append_text(self.look.label(handoff.from_agent, bold=marked))
        line.append(f" {icon} ")
        line.append_text(self.look.label(handoff.to_agent))
        line.append(f"  {handoff.handoff_kind}", style="italic")
        if handoff.reason:
            line.append("\n    ")
            reason = literal(handoff.reason, "italic")
            reason.truncate(REASON_WIDTH, overflow="ellipsis")  # one line each, however long the reason
            line.append_text(reason)
        return Option(line, id=f"h{handoff.seq}")

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self._rebuild()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if option_id == "earlier":
            self.post_message(self.Page(-1))
        elif option_id == "later":
            self.post_message(self.Page(1))
        elif option_id.startswith("h"):
            self.post_message(self.Jump(int(option_id[1:])))
