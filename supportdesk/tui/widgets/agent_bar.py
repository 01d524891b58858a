"""The active-agent bar: who holds the conversation, plus a small line of session facts.

A pane (`projection.Pane`) for the agent: shown a snapshot's, then each handoff's as it lands.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from supportdesk.folds.desk_state import ConversationState
from supportdesk.items import Handoff, Item
from supportdesk.tui.projection import Snapshot
from supportdesk.tui.widgets.render import AgentLook, literal
from supportdesk.text import counted

# The header's word for each state (desk_state.State) and its style.
STATE_LOOKS = {
    "ai": ("AI", "dim"),
    "needs_staff": ("NEEDS STAFF", "bold"),
    "staff": ("STAFF", "bold"),
    "snoozed": ("SNOOZED", "italic"),
    "resolved": ("RESOLVED", "bold"),
}


def state_parts(state: ConversationState, write_as: str = "") -> list[tuple[int, Text]]:
    """The header's state words as parts, each with the rank it keeps when room runs out
    (1 stays longest): who holds it, who the input writes as, the state, the priority, the tags."""
    parts: list[tuple[int, Text]] = []
    if state.held_by_staff:
        held = Text("✋ ", style="bold")
        held.append_text(literal(state.holder, "bold"))
        held.append(" holds it")
        parts.append((1, held))
    if state.state not in ("ai", "staff", "needs_staff"):
        word, style = STATE_LOOKS[state.state]
        shown = Text(word, style=style)
        if state.state == "snoozed" and state.snoozed_until is not None:
            shown.append(f" until {state.snoozed_until:%Y-%m-%d %H:%M}", style="dim")
        parts.append((3, shown))
    if state.tags:
        tags = Text()
        for tag in state.tags:
            tags.append(" " if tags else "")
            tags.append_text(literal(f"#{tag}", "italic"))
        parts.append((5, tags))
    if state.priority and state.priority != "none":
        parts.append((4, Text(f"! {state.priority}", style="bold" if state.priority in ("high", "urgent") else "")))
    if write_as:
        parts.append((2, Text.assemble(("as ", "dim"), (write_as, "bold" if write_as == "staff" else ""))))
    return parts


def state_text(state: ConversationState, write_as: str = "", width: int | None = None) -> Text:
    """`✋ dana holds it · #vip #refund · ! high · as staff` — who holds the conversation when a
    person does, the state when it is not the agents', tags, priority, who the input writes as.

    Given a `width`, whole parts are left out (the least needed first) until the rest fits: a
    narrow header never shows a word cut in half ("as staf")."""
    parts = state_parts(state, write_as)

    def joined(kept: list[tuple[int, Text]]) -> Text:
        return Text(" · ").join(text for _, text in kept)

    out = joined(parts)
    while width is not None and parts and out.cell_len > width:
        parts.remove(max(parts, key=lambda part: part[0]))
        out = joined(parts)
    return out


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def fit_parts(text: Text, width: int) -> Text:
    """`text` in at most `width` cells, cut where one of its " · " parts ends (at a space when
    even the first is too long) and ended with "…"; nothing when not even a word fits:
    "session … · 14 items · 1 hand…" and "s…" read as words that are not there."""
    if width <= 0 or text.cell_len <= width:
        return text
    plain = text.plain[: max(0, width - 1)]
    at = max(plain.rfind(" · "), plain.rfind(" ("))  # (the per-agent usage is in brackets)
    if at <= 0:
        at = plain.rstrip().rfind(" ")
    if at <= 0:
        return Text()  # not even a whole word fits: nothing rather than "s…"
    cut = text[:at]
    cut.rstrip()
    cut.append("…", style="dim")
    return cut


class SessionFacts(Static):
    """The session's facts beside the badge, cut between whole parts for the width it has."""

    def __init__(self, **kwargs):
        super().__init__("", markup=False, **kwargs)
        self.facts = Text()

    def show(self, facts: Text) -> None:
        self.facts = facts
        self.update(facts)

    def render(self) -> Text:
        return fit_parts(self.facts.copy(), self.content_size.width)


class WorkingIndicator(Static):
    """`⠹ Billing is working…` while a turn runs; hidden otherwise."""

    working: reactive[str] = reactive("")  # the agent working, "" when idle

    def __init__(self, look: AgentLook, **kwargs):
        super().__init__("", markup=False, **kwargs)
        self.look = look
        self._frame = 0
        self._timer: Timer | None = None

    def on_mount(self) -> None:
        self.display = False

    def watch_working(self, agent: str) -> None:
        self.display = bool(agent)
        if agent and self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        elif not agent and self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._paint()

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        # The next spinner glyph is as wide as the last: a repaint, not a relayout of the screen
        # (ten a second, each as costly as the longest reply streaming below).
        self._paint(layout=False)

    def _paint(self, *, layout: bool = True) -> None:
        if self.working:
            self.update(
                Text.assemble((SPINNER[self._frame] + " ", "bold"), self.look.label(self.working), (" is working…", "italic")),
                layout=layout,
            )


class AgentBar(Horizontal):
    """Title, level and colour of the active agent; session id, size and token use beside it."""

    agent: reactive[str] = reactive("", init=False)
    # Why staff are needed ("" when they are not): said in words, and the bar takes the warning colour.
    attention: reactive[str] = reactive("", init=False)

    def __init__(self, look: AgentLook, **kwargs):
        super().__init__(**kwargs)
        self.look = look
        self.facts = Text()
        # Held from the start, not queried: a turn may begin (queued messages from the start
        # screen) before these are mounted, and an update must land all the same.
        self._badge = Static("", id="agent-badge", markup=False)
        self._attention = Static("", id="attention", markup=False)
        self._desk_state = Static("", id="desk-state", markup=False)
        self._facts = SessionFacts(id="session-facts")
        self._working = WorkingIndicator(look, id="working")
        self._state_shown: tuple[ConversationState | None, str] = (None, "")

    def compose(self) -> ComposeResult:
        yield self._badge
        yield self._desk_state
        yield self._attention
        yield self._facts
        yield self._working

    def watch_attention(self, reason: str) -> None:
        self.set_class(bool(reason), "-attention")
        self._attention.display = bool(reason)
        said = Text.assemble(("⚠ NEEDS STAFF", "bold"), " · ", literal(reason), no_wrap=True, overflow="ellipsis")
        self._attention.update(said if reason else "")

    def on_mount(self) -> None:
        self._attention.display = bool(self.attention)
        self._desk_state.display = False
        self.watch(self.screen, "look", self.recolor, init=False)  # the screen's agent colours

    async def show(self, snapshot: Snapshot) -> None:
        self.agent = snapshot.agent

    async def extend(self, items: Sequence[Item]) -> None:
        for item in items:
            if isinstance(item, Handoff):
                self.agent = item.to_agent

    def watch_agent(self, agent: str) -> None:
        self._paint()

    def recolor(self, look: AgentLook) -> None:
        self.look = look
        self._working.look = look
        self._paint()

    def _paint(self) -> None:
        badge = self._badge
        if not self.agent:
            badge.update(Text(" no agent yet ", style="dim"))
            return
        color = self.look.color(self.agent)
        level = self.look.level(self.agent)
        badge.update(
            Text.assemble(
                ("● ", color),
                (self.look.title(self.agent), f"bold {color}"),
                (f"  L{level}", "bold" if level > 1 else "dim"),
            )
        )
        self.styles.border_left = ("tall", color)
        self.call_after_refresh(self._fit_state)  # the badge's width changed with it

    def set_facts(
        self,
        session_id: str | None,
        items: int,
        handoffs: int,
        usage: dict[str, dict[str, int]] | None = None,
        extra: str = "",
        cost: float | None = None,
    ) -> None:
        facts = Text()
        # What the screen is (replay, a fork) first: on a narrow terminal the line is cut at the
        # right, and the counts matter less than knowing the session cannot be written to.
        if extra:
            facts.append_text(literal(extra, "bold"))
            facts.append(" · ")
        if session_id is None:
            facts.append("new session", style="italic")
        else:
            facts.append(f"session {session_id}", style="bold")
            facts.append(f" · {counted(items, 'item')} · {counted(handoffs, 'handoff')}", style="dim")
        if usage:
            total_in = sum(u["input_tokens"] for u in usage.values())
            total_out = sum(u["output_tokens"] for u in usage.values())
            estimated = any(not u.get("reported", 1) for u in usage.values())
            facts.append(" · tokens ", style="dim")
            facts.append(f"{total_in}↑ {total_out}↓{'~' if estimated else ''}")
            parts = [f"{self.look.title(a)} {u['input_tokens']}/{u['output_tokens']}" for a, u in usage.items()]
            facts.append(f" ({', '.join(parts)})", style="dim")
            if cost is not None:
                facts.append(f" · ${cost:.4f}{'~' if estimated else ''}")
        self.facts = facts
        self._facts.show(facts)

    def set_state(self, state: ConversationState | None, write_as: str = "", now: datetime | None = None) -> None:
        """Who holds the conversation and its state, tags, priority; who the input writes as."""
        from supportdesk.folds.desk_state import at

        shown = at(state, now) if state is not None and now is not None else state
        self._state_shown = (shown, write_as)
        self.set_class(shown is not None and shown.held_by_staff, "-staff")
        self._fit_state()

    def _fit_state(self) -> None:
        """The state's words that fit beside the badge (and the attention line and the spinner,
        which come first): on a narrow terminal whole parts go, never half a word."""
        shown, write_as = self._state_shown
        width = None
        if self.size.width:
            taken = self._badge.outer_size.width + (self._working.outer_size.width if self._working.display else 0)
            if self.attention:
                taken += 16  # "⚠ NEEDS STAFF · " and a word of the reason
            width = max(0, self.content_size.width - taken - 2)  # the state's own right padding
        text = state_text(shown, write_as, width) if shown is not None else Text("")
        self._desk_state.display = bool(text)
        self._desk_state.update(text)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_state)

    def set_working(self, agent: str) -> None:
        self._working.working = agent
