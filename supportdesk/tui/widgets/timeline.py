"""The handoff timeline: a page of handoffs (newest last); select one to jump to it.

A long session may hold thousands of handoffs, so the list shows a page of them with a row
for the earlier (and, in replay, later) ones; selecting that row pages (a read of that page's
handoffs, remembered in the snapshot's `handoffs_read`).

A pane (`projection.Pane`): the live end lists the latest page and takes new handoffs as they
land; a replay cursor marks the handoff it is at, on a page around it.

Offers to the customer and their answers (issue 33: a consequential call waiting for the
customer's yes, the yes, the no and why) are marks among the handoffs, in log order: few per
session, read whole by kind once per session shown, then taken from the live feed. Selecting
one jumps to it like a handoff; they are not stops (replay steps from handoff to handoff).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supportdesk.engine.log import Store
from supportdesk.items import Confirmation, Decline, Handoff, Item, Offer
from supportdesk.tui.projection import HANDOFF_PAGE, Snapshot, advance, new_session, read_handoffs
from supportdesk.tui.widgets.render import HANDOFF_ICONS, AgentLook, literal
from supportdesk.text import clip_words

REASON_WIDTH = 40


def _words(text: str, width: int) -> str:
    """Untrusted words on one line of at most `width` cells, cut after a whole word with "…"."""
    return clip_words(" ".join(text.split()), width)

# The item kinds drawn as marks, and how a decline's reason reads.
MARK_KINDS = ("offer", "confirmation", "decline")
Mark = Offer | Confirmation | Decline
DECLINED_BECAUSE = {
    "no": "the customer said no",
    "change_of_mind": "the customer changed their mind",
    "question": "the customer asked a question",
    "other": "the customer wrote about something else",
    "expired": "the offer expired",
    "withdrawn": "staff withdrew it",
}
ANSWERED_BY = {"text": "in words", "button": "with a button", "staff": "by staff"}


class HandoffTimeline(OptionList):
    """Each handoff option's id is `h<seq>`; the paging rows are `earlier` and `later`."""

    class Jump(Message):
        def __init__(self, seq: int):
            super().__init__()
            self.seq = seq

    def __init__(self, look: AgentLook, store: Store | None = None, **kwargs):
        super().__init__(**kwargs)
        self.look = look
        self.store = store  # where a page of handoffs is read when paged to
        self.snapshot = new_session("")  # the stops paged through, the handoffs read so far
        self.handoffs: list[Handoff] = []  # the page shown
        self.before = 0  # handoffs earlier than the page
        self.after = 0  # handoffs later than the page (replay)
        self.current: int | None = None  # the seq of the marked handoff (replay)
        self.marks: list[Mark] = []  # the session's offers and answers, in log order
        self.marks_of: str | None = None  # the session they were read for
        self._built_for = 0  # the detail width the marks were drawn for

    @property
    def total(self) -> int:
        return self.before + len(self.handoffs) + self.after

    def on_mount(self) -> None:
        self.watch(self.screen, "look", self.recolor, init=False)  # the screen's agent colours

    @property
    def stops(self) -> list[int]:
        """Every handoff's seq this timeline pages through (live: so far; replay: the session's)."""
        return self.snapshot.stops + self.snapshot.later_stops

    async def read_marks(self, session_id: str | None) -> None:
        """The offers and answers of the session shown (read again only when it changes: a mark
        of one session never shows beside another's handoffs)."""
        if session_id == self.marks_of:
            return
        self.marks_of, self.marks = session_id, []
        if self.store is None or not session_id:
            return
        found: list[Mark] = []
        for kind in MARK_KINDS:
            found += [item for item in await self.store.of_kind(session_id, kind) if isinstance(item, Mark)]
        if self.marks_of == session_id:  # not overtaken by another session meanwhile
            self.marks = sorted(found, key=lambda item: item.seq)

    async def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        await self.read_marks(snapshot.session_id)
        if snapshot.live:
            self.show_page(snapshot.handoffs, before=len(snapshot.stops) - len(snapshot.handoffs))
            return
        index = len(snapshot.stops)  # handoffs at or before the cursor
        current = snapshot.stops[-1] if index else None
        if not (self.before <= index - 1 < self.before + HANDOFF_PAGE):
            # The current handoff is off the listed page: centre a page on it.
            await self._show_page_at(max(0, min(index - HANDOFF_PAGE // 2, len(self.stops) - HANDOFF_PAGE)), current)
        elif not self.option_count:
            await self._show_page_at(self.before, current)
        else:
            self.mark(current)

    async def extend(self, items: Sequence[Item]) -> None:
        """Handoffs just landed (live): each joins the end of the page."""
        before, was = self.snapshot.position, self.snapshot.session_id
        self.snapshot = advance(self.snapshot, items)
        if self.marks_of is None and not was:
            # A session begun on this screen: every mark it has comes through here.
            self.marks_of = self.snapshot.session_id
        fresh = [item for item in items if isinstance(item, Mark) and item.seq > before and item.session_id == self.marks_of]
        if fresh:
            known = {mark.seq for mark in self.marks}
            self.marks += [mark for mark in fresh if mark.seq not in known]
        for item in items:
            if isinstance(item, Handoff) and item.seq > before:
                self.add(item)
        if fresh and not self.after:
            self._rebuild()

    async def turn_page(self, direction: int) -> None:
        """Show the page of handoffs before (-1) or after (+1) the one listed."""
        stops = self.stops
        start = max(0, min(self.before + direction * HANDOFF_PAGE, max(0, len(stops) - HANDOFF_PAGE)))
        await self._show_page_at(start, self.current)

    async def _show_page_at(self, start: int, current: int | None) -> None:
        stops, session_id = self.stops, self.snapshot.session_id
        seqs = stops[start : start + HANDOFF_PAGE]
        if self.store is None or session_id is None:
            return  # no session yet, no handoffs to page through
        handoffs = await read_handoffs(self.store, session_id, seqs, self.snapshot.handoffs_read)
        self.show_page(handoffs, before=start, after=len(stops) - start - len(seqs), current=current)

    def show_page(self, handoffs: Sequence[Handoff], *, before: int = 0, after: int = 0, current: int | None = None) -> None:
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
        self._built_for = self._detail_width()
        self.clear_options()
        options: list[Option] = []
        if self.before:
            options.append(Option(Text(f"  ↑ {self.before} earlier handoffs · select to show", style="dim italic"), id="earlier"))
        options += self._rows()
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

    def _rows(self) -> list[Option]:
        """The page's handoffs with the marks that fall among them: after the previous page's
        last handoff and before the next page's first."""
        stops = self.stops
        low = stops[self.before - 1] if self.before and self.before - 1 < len(stops) else 0
        end = self.before + len(self.handoffs)
        high = stops[end] if self.after and end < len(stops) else None
        rows: list[tuple[int, Option]] = [(h.seq, self._option(self.before + n, h)) for n, h in enumerate(self.handoffs, 1)]
        rows += [(m.seq, self._mark_option(m)) for m in self.marks if m.seq > low and (high is None or m.seq < high)]
        return [option for _, option in sorted(rows, key=lambda row: row[0])]

    def _mark_option(self, mark: Mark) -> Option:
        """An offer names what it offers in the customer's words; an answer names the offer it
        answers (`to #seq`) and how (yes in words, a button or by staff; no and why)."""
        offered = {m.offer_id: m for m in self.marks if isinstance(m, Offer)}
        line = Text("  ")
        line.append(f"{mark.created_at:%H:%M}", style="dim")
        line.append(f" #{mark.seq:<4} ", style="dim")
        detail: Text
        match mark:
            case Offer():
                line.append("◇ offer", style="bold")
                detail = literal(_words(mark.action or mark.tool, self._detail_width()), "italic")
            case Confirmation():
                line.append("✔ yes", style="bold")
                detail = Text(f"confirmed {ANSWERED_BY.get(mark.source, mark.source)}", style="italic")
            case Decline():
                line.append("✘ no", style="bold")
                detail = Text(DECLINED_BECAUSE.get(mark.why, mark.why), style="italic")
            case _:
                assert_never(mark)
        if not isinstance(mark, Offer):
            offer = offered.get(mark.offer_id)
            line.append(f" to #{offer.seq}" if offer is not None else " to ")
            if offer is None:
                line.append_text(literal(mark.tool))
        if mark.agent:
            line.append(" · ", style="dim")
            line.append_text(self.look.label(mark.agent))
        line.append("\n    ")
        # The action is what the customer is asked to check: as much as the pane holds, whole words.
        detail.truncate(self._detail_width(), overflow="ellipsis")
        line.append_text(detail)
        return Option(line, id=f"m{mark.seq}")

    def _detail_width(self) -> int:
        width = self.scrollable_content_region.width if self.is_mounted else 0
        return max(REASON_WIDTH, width - 6)

    def on_resize(self) -> None:
        if self.marks and self._built_for != self._detail_width():
            self._rebuild()

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
            # One line each, however long the reason, ended on a whole word (issue 39).
            line.append_text(literal(_words(handoff.reason, REASON_WIDTH), "italic"))
        return Option(line, id=f"h{handoff.seq}")

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self._rebuild()

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if option_id == "earlier":
            await self.turn_page(-1)
        elif option_id == "later":
            await self.turn_page(1)
        elif option_id[:1] in ("h", "m"):
            self.post_message(self.Jump(int(option_id[1:])))
