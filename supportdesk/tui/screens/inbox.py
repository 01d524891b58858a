"""The inbox: every recently active conversation on the desk, one row each, most urgent first.

Most urgent first means (`by_urgency`, said in the heading): conversations that need staff or
hold a pending approval; then those whose customer has waited past the SLA target; then the
rest by state (staff holding it, agents working, waiting for the customer, snoozed, resolved);
within each, the longest wait first.

A row is a session and where it stands: customer, holder, state, how long in that state, the
last line said. The state is the summary the store keeps with the appends (`desk_state.fold` of
the log), so the whole list is one query (`Store.desk`), re-read when the store's change feed
says something changed (sessions other processes create appear without a keypress).

Staff act from here: Enter opens the conversation, `a`/`d` approve or deny its pending approval
(through the runner, so a granted refund really happens). New activity re-sorts the rows but
never moves the row under the cursor: that session keeps its place until the cursor leaves it.
Customer text is drawn as `rich.text.Text` (literal), never as markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Label, Static

from supportdesk.folds.desk_state import LABELS, SHORT_LABELS, STATE_GROUPS, ConversationState, State, at, in_group
from supportdesk.folds.desk_state import label as state_label
from supportdesk.items import utcnow
from supportdesk.engine.log import Change, DeskRow, StoreError
from supportdesk.text import clip_words, one_line, plain_line, safe_text
from supportdesk.tui.screens._feed import FollowsChanges
from supportdesk.tui.widgets.footer import DeskFooter

if TYPE_CHECKING:
    from supportdesk.tui.app import SupportDeskApp

# How many of the most recently active sessions the inbox lists.
INBOX_LIMIT = 200
CUSTOMER_WIDTH = 22
WAIT_WIDTH = 7
TAGS_WIDTH = 18
NARROW_CUSTOMER_WIDTH = 12
NARROW_TAGS_WIDTH = 10
# Narrow, the columns above are the least each gets: width the last line does not need (beyond
# LAST_KEEPS characters) goes to the customer, then the tags, up to their wide widths (issue 39:
# the customer stayed at 12 characters with room to spare).
LAST_KEEPS = 24
AGENT_WIDTH = 10
# Below this many columns the inbox narrows: the customer and tags columns shrink, the state reads
# in its short words and the time in the state goes, so at 80 columns the last line keeps some
# room, the tags stay, and nothing runs off the right edge. Every wide column
# with a last line of 27 characters takes 130.
NARROW_BELOW = 130
# (label, key, width; None: the last line, which takes what the others leave), left to right.
WIDE_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("Customer", "customer", CUSTOMER_WIDTH),
    ("Agent", "agent", AGENT_WIDTH),
    ("State", "state", max(len(label) for label in LABELS.values())),
    ("For", "for", 5),
    ("Last line", "last", None),
    # The customer's running SLA clock and the tags (issue 19), after the last line.
    ("Wait", "wait", WAIT_WIDTH),
    ("Tags", "tags", TAGS_WIDTH),
)
_NARROWER = {
    "customer": NARROW_CUSTOMER_WIDTH, "state": max(len(label) for label in SHORT_LABELS.values()), "tags": NARROW_TAGS_WIDTH,
}
# Narrow, the time in the state ("For") goes and the tags stay (a `!high #vip` conversation must
# say so at 80 columns); the customer's running wait stays too.
NARROW_COLUMNS: tuple[tuple[str, str, int | None], ...] = tuple(
    (label, key, _NARROWER.get(key, width)) for label, key, width in WIDE_COLUMNS if key != "for"
)
# Below this many columns (60x20) even the narrow table ran off the right edge, the wait and the
# tags out of sight and the last line 4-5 characters: the agent and the last line leave the row
# for the preview line under the table (which names the agent), and the rest fit whole.
TINY_BELOW = 80
TINY_COLUMNS: tuple[tuple[str, str, int | None], ...] = tuple(
    (label, key, width) for label, key, width in NARROW_COLUMNS if key not in ("agent", "last")
)
# The state filter's steps (`s` cycles them): everything, then each group staff ask for
# (desk_state's, shared with the session browser).
STATE_FILTERS: tuple[tuple[str, Callable[[ConversationState], bool]], ...] = tuple(
    (words, partial(in_group, group)) for group, words in STATE_GROUPS.items()
)
# A state's look in its cell: (bold?, theme variable for the colour or "").
_STATE_LOOK: dict[State, tuple[bool, str]] = {
    "needs_staff": (True, "warning"),
    "staff": (False, "accent"),
    "ai": (False, ""),
    "snoozed": (False, "text-muted"),
    "resolved": (False, "text-muted"),
}


def waited(since: datetime | None, now: datetime) -> str:
    """How long a state has held, in the unit a person reads at a glance: 45s, 12m, 3h, 2d."""
    if since is None:
        return ""
    seconds = max(0, int((now - since).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def customer_wait(state: ConversationState, sla: Any, now: datetime) -> tuple[str, bool]:
    """The customer's running wait (`waiting_since`, kept by the fold as the SLA clock measures it)
    and whether it is past its `[desk.sla]` target (first response until the first answer, then
    next response)."""
    if state.waiting_since is None:
        return "", False
    target = sla.first_response if state.answers == 0 else sla.next_response
    late = target is not None and (now - state.waiting_since).total_seconds() > target
    return waited(state.waiting_since, now), late


def _last_said(state: ConversationState) -> str:
    """The last line as the conversation reads it: an agent's without its Markdown marks."""
    return plain_line(state.last_line) if state.last_role == "agent" else state.last_line


def tags_text(state: ConversationState) -> str:
    words = [f"#{tag}" for tag in state.tags]
    if state.priority and state.priority != "none":
        words.insert(0, f"!{state.priority}")
    return " ".join(words)


# How the inbox orders its rows, in the words the heading shows.
ORDER_WORDS = "needs staff › SLA breached › longest wait"
SHORT_ORDER_WORDS = "needs staff › SLA › wait"


def by_urgency(rows: Sequence[DeskRow], now: datetime, sla: Any = None) -> list[DeskRow]:
    """Needs staff or holds a pending approval first; then a customer waiting past the SLA
    target (`sla`: the desk's `[desk.sla]`); then by state; within each, the longest wait first."""

    def key(row: DeskRow) -> tuple[Any, ...]:
        state = row.state
        needs = state.needs_staff or bool(state.pending)
        late = sla is not None and customer_wait(state, sla, now)[1]
        waiting = state.waiting_since or state.since or row.session.updated_at or now
        return (not needs, not late, state.urgency, waiting, row.session.id)

    return sorted(rows, key=key)


# At or above this amount, granting takes a deliberate press of the Grant button (Cancel has the
# focus and `y` does nothing); below it `y` or Enter grants. Either way the amount is shown first.
LARGE_AMOUNT = 1000.0
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


def approval_amount(arguments: dict[str, Any], text: str) -> float | None:
    """The amount an approval moves: its `amount` argument, else the first $ figure of its notice."""
    value = arguments.get("amount")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    found = _MONEY.search(text)
    return float(found.group(1).replace(",", "")) if found else None


def approval_words(tool: str, arguments: dict[str, Any], text: str) -> str:
    """What granting does, in one line: the tool, its amount and what it acts on."""
    amount = approval_amount(arguments, text)
    on = ", ".join(f"{key} {value}" for key, value in arguments.items() if key not in ("amount", "reason") and isinstance(value, (str, int, float)))
    parts = [tool.replace("_", " ")]
    if amount is not None:
        parts.append(f"${amount:,.2f}")
    if on:
        parts.append(f"({on})")
    return one_line(safe_text(" ".join(parts)), 120)


class ConfirmGrant(ModalScreen[bool]):
    """Asks before an approval is granted, naming the action and its amount. Small amounts: `y`
    or Enter grant. Large ones (`large`): Cancel has the focus and no key grants; only the
    Grant button does. Any other printable key says no."""

    DEFAULT_CSS = """
    ConfirmGrant { align: center middle; background: $background 60%; }
    ConfirmGrant > #dialog { width: 64; max-width: 100%; height: auto; padding: 1 2; background: $surface;
                             border: thick $primary 60%; }
    ConfirmGrant.-large > #dialog { border: thick $warning 70%; }
    ConfirmGrant .dialog-title { text-style: bold; width: 100%; margin-bottom: 1; }
    ConfirmGrant #buttons { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmGrant #buttons Button { margin-left: 1; }
    """
    BINDINGS = [Binding("n,escape", "answer(False)", "Cancel")]

    def __init__(self, session_id: str, title: str, what: str, amount: float | None) -> None:
        super().__init__(classes="-large" if amount is None or amount >= LARGE_AMOUNT else "")
        self.session_id, self.session_title, self.what = session_id, title, what
        self.large = amount is None or amount >= LARGE_AMOUNT

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(f"Grant {self.what}?"), classes="dialog-title")
            then = (
                "A large amount: press Grant to move it (Tab, then Enter). The agent tells the customer."
                if self.large else "The tool runs now and the agent tells the customer."
            )
            yield Static(Text.assemble((one_line(safe_text(self.session_title), 60), "bold"), "\n",
                                       (self.session_id, "dim"), "\n\n", then))
            with Horizontal(id="buttons"):
                yield Button("Grant", variant="warning" if self.large else "primary", id="grant")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel" if self.large else "#grant", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id == "grant")

    def action_answer(self, answer: bool) -> None:
        if self.is_current:  # keys typed in a burst must not dismiss the screen below too
            self.dismiss(answer)

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character and event.key not in ("enter", "space", "tab"):
            event.stop()
            self.action_answer(event.character == "y" and not self.large)


def confirm_grant(session_id: str, title: str, what: str, amount: float | None) -> ConfirmGrant:
    return ConfirmGrant(session_id, title, what, amount)


def keep_place(order: list[DeskRow], session_id: str | None, index: int) -> list[DeskRow]:
    """`order` with session `session_id` moved back to row `index` (the row under the cursor)."""
    at = next((n for n, r in enumerate(order) if r.session.id == session_id), None)
    if at is None or at == index:
        return order
    row = order.pop(at)
    order.insert(min(index, len(order)), row)
    return order


class InboxTable(DataTable[Any]):
    """The inbox's rows; Enter opens the conversation under the cursor."""


class InboxScreen(FollowsChanges[None]):
    CSS_PATH = "inbox.tcss"
    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="Open the conversation under the cursor", show=False),
        Binding("a", "approve", "Approve", tooltip="Grant the pending approval of this conversation"),
        Binding("d", "deny", "Deny", tooltip="Deny the pending approval of this conversation"),
        Binding("s", "cycle_state", "State", tooltip="Filter by state: all, needs staff, working, waiting, idle"),
        Binding("g", "cycle_agent", "Agent", tooltip="Filter by the agent holding the conversation"),
        # Listed in help (F1); the footer keeps its keys within 80 columns.
        Binding("l", "cycle_tag", "Tag", tooltip="Filter by tag (and priority)", show=False),
        Binding("t", "take_over", "Take over", tooltip="Take the conversation under the cursor from the agents, and open it",
                show=False),
        Binding("escape", "app.pop_screen", "Back", tooltip="Back to the conversation"),
    ]

    state_filter: var[int] = var(0, init=False)
    agent_filter: var[str] = var("", init=False)
    tag_filter: var[str] = var("", init=False)

    def __init__(self, desk: Any, *, now: Callable[[], datetime] = utcnow, limit: int = INBOX_LIMIT):
        super().__init__()
        self.desk = desk
        self.now = now
        self.limit = limit
        self.rows: list[DeskRow] = []  # as read, newest activity first
        self.shown: list[DeskRow] = []  # as on screen
        # Set after each reload has drawn its rows (tests wait on it; so does nothing else).
        self.loads = 0
        # The layout shown (`_set_columns`, from the screen's width).
        self._narrow = False
        self._widths: dict[str, int] = {}  # each column's width (`_fit_columns`)
        self._tiny = False
        self._columns = WIDE_COLUMNS

    @property
    def store(self) -> Any:
        return self.desk.store

    def compose(self) -> ComposeResult:
        yield Static("", id="inbox-heading", markup=False)
        yield InboxTable(id="inbox", cursor_type="row", zebra_stripes=True)
        yield Static("", id="inbox-empty", markup=False)
        # Narrow, the last-line column holds a dozen characters: the row under the cursor's whole
        # last line shows here, above the footer.
        yield Static("", id="inbox-preview", markup=False)
        yield DeskFooter(compact=True)

    def on_mount(self) -> None:
        self._set_columns(self.app.size.width < NARROW_BELOW, self.app.size.width < TINY_BELOW)
        self.query_one(InboxTable).focus()
        self.reload()
        self.follow_changes(self.store)
        # "How long" and the SLA clock age while nothing is written: redraw them every second
        # (a clock that sat at "⚠16s" for half a minute was wrong for 29 of those seconds).
        self.set_interval(1, self._tick)

    def on_resize(self) -> None:
        narrow, tiny = self.size.width < NARROW_BELOW, self.size.width < TINY_BELOW
        if (narrow, tiny) != (self._narrow, self._tiny):
            table = self.query_one(InboxTable)
            under = self._current()
            row = table.cursor_row
            self._set_columns(narrow, tiny)  # (which puts the cursor back on the first row)
            self._redraw(cursor=(under.session.id if under else None, row))
        elif self._fit_columns() or "last" in self._widths:
            self._redraw()  # (the cells are cut for their columns' widths)

    def _set_columns(self, narrow: bool, tiny: bool = False) -> None:
        """Lay the table out for a wide, narrow or tiny screen (rows are drawn again after)."""
        self._narrow, self._tiny = narrow or tiny, tiny
        self.set_class(narrow or tiny, "-narrow")
        self._columns = TINY_COLUMNS if tiny else NARROW_COLUMNS if narrow else WIDE_COLUMNS
        table = self.query_one(InboxTable)
        table.clear(columns=True)
        for label, key, width in self._columns:
            table.add_column(Text(label), key=key, width=width)

    # --- reading ---------------------------------------------------------------------------------------

    @work(exclusive=True, group="inbox-load")
    async def reload(self) -> None:
        """Read the desk (one query) and redraw; a newer change cancels a read still running."""
        try:
            rows = await self.store.desk(limit=self.limit)
        except StoreError as exc:
            self.notify(safe_text(str(exc)), severity="error", markup=False)
            return
        # The inbox closed during the read (a take-over opened the chat): once popped it is being
        # pruned, its table may already be gone while it still counts as attached.
        if not self.is_attached or self._pruning:
            return
        self.rows = rows
        self._redraw()
        self.loads += 1

    async def on_change(self, change: Change) -> None:
        self.reload()

    # --- drawing ---------------------------------------------------------------------------------------

    def _filtered(self, now: datetime) -> list[DeskRow]:
        """The rows the filters let through, each as of `now` (a snooze that has ended is back with staff)."""
        _, wanted = STATE_FILTERS[self.state_filter]
        live = [DeskRow(r.session, at(r.state, now)) for r in self.rows]
        return [
            r for r in live
            if wanted(r.state)
            and (not self.agent_filter or r.state.holder == self.agent_filter)
            and (not self.tag_filter or self.tag_filter in tags_text(r.state).split())
        ]

    def _agent_title(self, name: str, staff: bool) -> str:
        agent = self.desk.config.agents.get(name) if not staff else None
        return agent.title if agent is not None else name

    def _state_style(self, state: State) -> str:
        bold, variable = _STATE_LOOK[state]
        colour = self.app.theme_variables.get(variable, "") if variable else ""
        return " ".join(part for part in ("bold" if bold else "", colour) if part)

    def _cells(self, row: DeskRow, now: datetime) -> list[Text]:
        """The row's cells for the columns shown (`_columns`), each cut to its column's width."""
        state = row.state
        width = self._widths
        who = state.customer or row.session.title or "Untitled session"
        line = _last_said(state)
        # Narrow, the line keeps its room: who said it shows as colour (the desk's side muted,
        # the customer's as is) rather than as a "customer: " prefix.
        # (Ended on a whole word: "A refund o…" read as a word that is not there.)
        room = width.get("last", 200)
        if self._narrow:
            last = Text(clip_words(one_line(safe_text(line), 400), room), overflow="ellipsis", no_wrap=True,
                        style="" if state.last_role == "customer" else self.app.theme_variables.get("text-muted", ""))
        else:
            said = f"{state.last_role}: {line}" if state.last_line else ""
            last = Text(clip_words(one_line(safe_text(said), 400), room), overflow="ellipsis", no_wrap=True)
        cells = {
            "customer": Text(clip_words(one_line(safe_text(who), 400), width.get("customer", CUSTOMER_WIDTH))),
            "agent": Text(one_line(self._agent_title(state.holder, state.held_by_staff), AGENT_WIDTH)),
            "state": Text(state_label(state.state, state.detail, short=self._narrow), style=self._state_style(state.state)),
            "for": Text(waited(state.since or row.session.updated_at, now)),
            "last": last,
            "wait": self._wait_cell(state, now),
            # Whole tags or none: "!high #vi…" reads as a tag that does not exist.
            "tags": Text(clip_words(safe_text(tags_text(state)), width.get("tags", TAGS_WIDTH))),
        }
        return [cells[key] for _, key, _ in self._columns]

    def _wait_cell(self, state: ConversationState, now: datetime) -> Text:
        """The customer's running wait; past its SLA target it is marked ⚠ in the error colour."""
        shown, late = customer_wait(state, self.desk.config.desk.sla, now)
        if late:
            return Text(f"⚠{shown}", style=f"bold {self.app.theme_variables.get('error', '')}".strip())
        return Text(shown)

    def _tick(self) -> None:
        """The time cells as of now, redrawn in place (the rows move only when a state changes)."""
        table = self.query_one(InboxTable)
        now = self.now()
        keys = {key for _, key, _ in self._columns}
        for row in self.shown:
            state = at(row.state, now)
            if "for" in keys:
                table.update_cell(row.session.id, "for", Text(waited(state.since or row.session.updated_at, now)))
            if "wait" in keys:
                table.update_cell(row.session.id, "wait", self._wait_cell(state, now))

    def _redraw(self, cursor: tuple[str | None, int] | None = None) -> None:
        """Draw the rows again; the session under the cursor (or `cursor`: a session and the row
        it was on) keeps its row."""
        table = self.query_one(InboxTable)
        now = self.now()
        current = self._current()
        cursor_id, cursor_row = cursor or (current.session.id if current else None, table.cursor_row)
        order = by_urgency(self._filtered(now), now, self.desk.config.desk.sla)
        self.shown = keep_place(order, cursor_id, cursor_row)
        scroll = table.scroll_offset
        self._fit_columns()
        table.clear()
        for row in self.shown:
            table.add_row(*self._cells(row, now), key=row.session.id)
        at = next((n for n, r in enumerate(self.shown) if r.session.id == cursor_id), 0)
        table.move_cursor(row=at, animate=False, scroll=False)
        table.scroll_to(scroll.x, scroll.y, animate=False, immediate=True)
        self._heading()
        self._preview()
        self.query_one("#inbox-empty", Static).update(
            "" if self.shown else ("No conversations yet." if not self.rows else "No conversation matches the filters.")
        )

    def _heading(self) -> None:
        # How many need staff is the badge's to say (top right, on every screen).
        state_name, _ = STATE_FILTERS[self.state_filter]
        agent = self._agent_title(self.agent_filter, False) if self.agent_filter else "all"
        tag = f" · tag: {self.tag_filter}" if self.tag_filter else ""
        # Narrow, the filters show only when one is on, and the order in short words: the
        # heading fits beside the badge at 80 columns (no word cut).
        filters = f" · state: {state_name} · agent: {agent}"
        if self._narrow and not (self.state_filter or self.agent_filter):
            filters = ""
        order = SHORT_ORDER_WORDS if self._narrow else ORDER_WORDS
        self.query_one("#inbox-heading", Static).update(
            Text.assemble(("Inbox", "bold"), f" · {len(self.shown)} of {len(self.rows)}{filters}",
                          Text(safe_text(tag)), (f" · by {order}", "dim"))
        )

    def _fit_columns(self) -> bool:
        """The columns' widths for the screen's width (`_widths`): the last line takes what the
        others leave; narrow, room beyond LAST_KEEPS (tiny: any room) widens the customer, then the
        tags. True when a cut column changed width (its cells are cut again: `_redraw`)."""
        table = self.query_one(InboxTable)
        widths = {key: size for _, key, size in self._columns if size is not None}
        has_last = any(size is None for _, _, size in self._columns)
        pads = 2 * len(self._columns) + 1
        give = max(0, self.size.width - sum(widths.values()) - pads - (LAST_KEEPS if has_last else 0))
        for key, most in (("customer", CUSTOMER_WIDTH), ("tags", TAGS_WIDTH)):
            if key in widths:
                add = min(give, max(0, most - widths[key]))
                widths[key] += add
                give -= add
        if has_last:
            widths["last"] = max(10, self.size.width - sum(widths.values()) - pads)
        changed = {k: v for k, v in widths.items() if k != "last"} != {k: v for k, v in self._widths.items() if k != "last"}
        self._widths = widths
        for column_key, column in table.columns.items():
            width = widths.get(column_key.value or "")
            if width is not None and (column.width != width or column.auto_width):
                column.auto_width = False
                column.width = width
        table.refresh(layout=True)
        return changed

    def watch_state_filter(self) -> None:
        self._redraw()

    def watch_agent_filter(self) -> None:
        self._redraw()

    def watch_tag_filter(self) -> None:
        self._redraw()

    # --- actions ---------------------------------------------------------------------------------------

    def _current(self) -> DeskRow | None:
        table = self.query_one(InboxTable)
        return self.shown[table.cursor_row] if 0 <= table.cursor_row < len(self.shown) else None

    @on(DataTable.RowHighlighted, "#inbox")
    def _preview(self) -> None:
        """The last line of the row under the cursor, whole (as literal text), and who said it."""
        row = self._current()
        state = row.state if row is not None else None
        if state is None or not state.last_line:
            self.query_one("#inbox-preview", Static).update("")
            return
        line = _last_said(state)
        # Tiny, the agent column is gone: the preview names who holds the conversation.
        holder = f"{self._agent_title(state.holder, state.held_by_staff)} · " if self._tiny else ""
        self.query_one("#inbox-preview", Static).update(
            Text.assemble((safe_text(holder), "bold"), (f"{state.last_role}: ", "bold"), Text(" ".join(safe_text(line).split())))
        )

    @on(DataTable.RowSelected, "#inbox")
    async def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        await self.action_open()

    async def action_open(self) -> None:
        row = self._current()
        if row is not None:
            await cast("SupportDeskApp", self.app).open_session(row.session.id)

    def action_cycle_state(self) -> None:
        self.state_filter = (self.state_filter + 1) % len(STATE_FILTERS)

    def action_cycle_agent(self) -> None:
        holders = ["", *sorted({r.state.holder for r in self.rows if r.state.holder})]
        at = holders.index(self.agent_filter) if self.agent_filter in holders else 0
        self.agent_filter = holders[(at + 1) % len(holders)]

    def action_cycle_tag(self) -> None:
        tags = ["", *sorted({word for r in self.rows for word in tags_text(r.state).split()})]
        at = tags.index(self.tag_filter) if self.tag_filter in tags else 0
        self.tag_filter = tags[(at + 1) % len(tags)]

    async def action_take_over(self) -> None:
        """Take the conversation under the cursor (the agents stay silent) and open it to reply."""
        from supportdesk.engine.errors import TurnError

        row = self._current()
        if row is None:
            return
        chat = getattr(self.app, "chat", None)
        person = chat.person if chat is not None else None
        try:
            await self.desk.runner.takeover(row.session.id, person)
        except (TurnError, StoreError) as exc:
            self.notify(safe_text(str(exc)), severity="error", markup=False)
            return
        await cast("SupportDeskApp", self.app).open_session(row.session.id)

    def action_approve(self) -> None:
        self._decide(True)

    def action_deny(self) -> None:
        self._decide(False)

    def _decide(self, granted: bool) -> None:
        row = self._current()
        if row is None or not row.state.pending:
            self.notify("No approval is waiting in this conversation", severity="warning")
            return
        if granted:
            self.ask_to_grant(row)  # what is granted, and how much, is shown first
        else:
            self.decide(row.session.id, row.state.pending[0].approval_id, row.state.pending[0].tool, granted)

    @work(group="inbox-decide")
    async def ask_to_grant(self, row: DeskRow) -> None:
        """Show the action and its amount before anything is granted; a large amount has Cancel
        focused and no one-key yes (one key once granted $1,299.99 with nothing shown)."""
        from supportdesk.folds.desk_state import undecided_approvals

        pending = row.state.pending[0]
        try:
            requests = undecided_approvals(await self.store.of_kind(row.session.id, "notice"))
        except StoreError as exc:
            self.notify(safe_text(str(exc)), severity="error", markup=False)
            return
        request = next((n for n in requests if n.data.get("approval_id") == pending.approval_id), None)
        arguments = request.data.get("arguments", {}) if request is not None else {}
        what = approval_words(pending.tool, arguments if isinstance(arguments, dict) else {}, request.text if request else "")
        amount = approval_amount(arguments if isinstance(arguments, dict) else {}, request.text if request else "")
        title = row.state.customer or row.session.title or "Untitled session"

        def answered(yes: bool | None) -> None:
            if yes:
                self.decide(row.session.id, pending.approval_id, pending.tool, True)

        self.app.push_screen(confirm_grant(row.session.id, title, what, amount), answered)

    @work(group="inbox-decide")
    async def decide(self, session_id: str, approval_id: str, tool: str, granted: bool) -> None:
        """Grant or deny through the runner: the tool runs (or not) and the agent tells the customer."""
        from supportdesk.engine.errors import TurnError
        from supportdesk.engine.runner import drain

        # The same person the chat screen acts as: the decision is theirs in the audit.
        chat = getattr(self.app, "chat", None)
        person = chat.person if chat is not None else None
        try:
            await drain(self.desk.runner.decide_approval(session_id, approval_id, granted, person))
        except (TurnError, StoreError) as exc:
            self.notify(safe_text(str(exc)), severity="error", markup=False)
            return
        verdict = "granted" if granted else "denied"
        self.notify(safe_text(f"{tool} {verdict} in session {session_id}"), title="Approval", markup=False)


__all__ = ["InboxScreen", "by_urgency", "keep_place", "waited"]
