"""Where a conversation stands, folded from its log: who holds it, whether staff are needed and why,
since when, and the last thing said.

One definition for every reader: the chat screen's "needs staff" header, the inbox's rows and its
badge, and the per-session summary the stores keep up to date as they append (`advance` over the
items of each append, as they keep `item_count`), so listing the desk never re-reads a log.

No Textual, no SQL: only the item kinds and the standard library. The fold never reads a clock:
`since` is the `created_at` of the item that began the state, so a fold of the same items gives
the same state on any machine, in any process, at any time.

Asking for a person, reaching a limit, a provider failing or staff denying an approval needs staff
until a person acts (a note, a reply, a manual handoff, a take-over or release, a state change) or
the customer writes again and the agents take a new turn. A pending approval needs staff until it
is decided, whatever else is said meanwhile; a denial decided while other approvals are still
pending is remembered (`unanswered_denial`) and shows once the last of them is decided. Deciding
is not what answers a denial: the customer was refused something, and a person (or the customer,
writing again) has to take it from there, whoever else was granted meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal, assert_never, get_args

from supportdesk import items as k
from supportdesk.text import one_line

State = Literal["ai", "needs_staff", "staff", "snoozed", "resolved"]
# Why the state holds. For `ai`: working / waiting_customer; for `needs_staff`: the rest.
Detail = Literal[
    "working",
    "waiting_customer",
    "approval",
    "human_requested",
    "limit",
    "denied",
    "provider_error",
    "flagged",  # staff set it to needs_staff themselves (`state needs_staff`)
    "snooze_ended",  # a snooze's time passed (`at(state, now)`): back to staff
    "",
]
STATES: tuple[State, ...] = get_args(State)

# What the inbox calls each (state, detail), in one place. The six labels, plus the
# needs-staff reasons it does not name: a failed provider, a denied approval, a staff flag, a
# snooze that ended.
LABELS: dict[tuple[State, Detail], str] = {
    ("ai", "working"): "agent working",
    ("ai", "waiting_customer"): "waiting for the customer",
    ("needs_staff", "approval"): "waiting for staff approval",
    ("needs_staff", "human_requested"): "human requested",
    ("needs_staff", "limit"): "limit reached",
    ("needs_staff", "denied"): "approval denied",
    ("needs_staff", "provider_error"): "provider error",
    ("needs_staff", "flagged"): "flagged for staff",
    ("needs_staff", "snooze_ended"): "snooze ended",
    ("staff", ""): "staff holding",
    ("snoozed", ""): "snoozed",
    ("resolved", ""): "resolved/idle",
}

# The same in a few words, for a narrow inbox (under 130 columns).
SHORT_LABELS: dict[tuple[State, Detail], str] = {
    ("ai", "working"): "agent working",
    ("ai", "waiting_customer"): "awaiting customer",
    ("needs_staff", "approval"): "needs approval",
    ("needs_staff", "human_requested"): "human requested",
    ("needs_staff", "limit"): "limit reached",
    ("needs_staff", "denied"): "approval denied",
    ("needs_staff", "provider_error"): "provider error",
    ("needs_staff", "flagged"): "flagged",
    ("needs_staff", "snooze_ended"): "snooze ended",
    ("staff", ""): "staff holding",
    ("snoozed", ""): "snoozed",
    ("resolved", ""): "resolved/idle",
}
assert set(SHORT_LABELS) == set(LABELS)

# The inbox's order: the lower the sooner (then the longest wait first).
URGENCY: dict[tuple[State, Detail], int] = {
    ("needs_staff", "approval"): 0,
    ("needs_staff", "human_requested"): 0,
    ("needs_staff", "limit"): 1,
    ("needs_staff", "provider_error"): 1,
    ("needs_staff", "denied"): 1,
    ("needs_staff", "flagged"): 1,
    ("needs_staff", "snooze_ended"): 1,
    ("staff", ""): 2,
    ("ai", "working"): 3,
    ("ai", "waiting_customer"): 4,
    ("snoozed", ""): 5,
    ("resolved", ""): 6,
}

# The state filters staff cycle through in the inbox and the session browser, in order, with
# their words. Judged on the state as of now (`at`): a snooze that has ended needs staff.
StateGroup = Literal["all", "needs_staff", "working", "waiting_customer", "idle"]
STATE_GROUPS: dict[StateGroup, str] = {
    "all": "all",
    "needs_staff": "needs staff",
    "working": "agent working",
    "waiting_customer": "waiting for the customer",
    "idle": "resolved/idle",
}

# The "needs staff" sentence the chat screen's header shows, by detail.
_REASONS: dict[Detail, str] = {
    "human_requested": "the customer asked for a person",
    "limit": "a limit was reached",
    "denied": "an approval was denied",
    "provider_error": "the model server failed",
    "flagged": "staff flagged it",
    "snooze_ended": "its snooze ended",
}

# The last line is for a one-line row, not a transcript: long messages are cut here.
LAST_LINE_CHARS = 160
# Context keys that name the customer, best first.
_CUSTOMER_KEYS = ("customer_name", "customer_email", "customer_id")

# One encoder made once: `json.dumps` with any option builds a new JSONEncoder at every call, and the
# stores encode the three summaries at every append, inside the write lock. Same text as
# `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True)
class PendingApproval:
    """A tool call waiting for staff approval."""

    approval_id: str
    tool: str


@dataclass(frozen=True)
class ConversationState:
    """Where a conversation stands after the items folded so far (through `seq`)."""

    holder: str = ""  # the agent holding it, or the staff member's name when a person holds it
    held_by_staff: bool = False
    state: State = "ai"
    detail: Detail = "waiting_customer"
    since: datetime | None = None  # when (state, detail) began: an item's created_at
    last_line: str = ""
    last_role: str = ""  # who said the last line: customer, agent, staff, system
    customer: str = ""  # name, email or id when the log has learned it
    pending: tuple[PendingApproval, ...] = ()
    tags: tuple[str, ...] = ()
    priority: str = ""
    snoozed_until: datetime | None = None
    # The customer's running wait (sla.py's clock, kept here so a list can show it without reading
    # the log): since their unanswered message, None once an agent or a person answered; and how
    # many answers they had (0: the running wait is the first response).
    waiting_since: datetime | None = None
    answers: int = 0
    # An approval was denied and no person (nor the customer, writing again) has answered since:
    # needs_staff/denied once no approval is pending.
    unanswered_denial: bool = False
    seq: int = 0  # the last item folded in
    # Which of _CUSTOMER_KEYS `customer` came from (a better key replaces a worse one).
    customer_rank: int = len(_CUSTOMER_KEYS)
    # The offer waiting for the customer's yes: (offer id, the action in words), or None.
    offer: tuple[str, str] | None = None

    @property
    def label(self) -> str:
        return label(self.state, self.detail)

    @property
    def urgency(self) -> int:
        return URGENCY.get((self.state, self.detail), len(URGENCY))

    @property
    def needs_staff(self) -> bool:
        return self.state == "needs_staff"

    @property
    def reason(self) -> str:
        """Why staff are needed, in a few words; "" when they are not (the chat header's text)."""
        if self.state != "needs_staff":
            return ""
        if self.detail == "approval":
            tools = ", ".join(dict.fromkeys(p.tool for p in self.pending))
            return f"approval pending: {tools}"
        return _REASONS.get(self.detail, self.label)

    def to_json(self) -> str:
        """The state as stored beside the session row (stdlib JSON, times as ISO 8601)."""
        # Shallow: asdict deep-copies every field, and the store writes this at every append.
        out = dict(self.__dict__)
        out["pending"] = [asdict(p) for p in self.pending]
        out["since"] = self.since.isoformat() if self.since else None
        out["snoozed_until"] = self.snoozed_until.isoformat() if self.snoozed_until else None
        out["waiting_since"] = self.waiting_since.isoformat() if self.waiting_since else None
        return _encode(out)

    @classmethod
    def from_json(cls, text: str) -> ConversationState:
        raw: dict[str, Any] = json.loads(text)
        known = {f for f in cls.__dataclass_fields__}
        raw = {k: v for k, v in raw.items() if k in known}  # a newer writer's extra fields
        for key in ("since", "snoozed_until", "waiting_since"):
            if raw.get(key):
                raw[key] = datetime.fromisoformat(raw[key])
        raw["pending"] = tuple(PendingApproval(**p) for p in raw.get("pending", ()))
        raw["tags"] = tuple(raw.get("tags", ()))
        # Without the frozen __init__ (one object.__setattr__ per field): an append parses the
        # state again under the write lock whenever another process appended last.
        fields = dict(_STATE_DEFAULTS)
        fields.update(raw)
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", fields)
        return new


# Every field's default (all immutable), for `from_json`'s fields a stored state lacks.
_STATE_DEFAULTS: dict[str, Any] = dict(ConversationState().__dict__)


def replace(current: ConversationState, /, **changes: Any) -> ConversationState:
    """`dataclasses.replace` for the state, without its per-field __init__ pass: the store
    folds every appended item inside its write lock, and `dataclasses.replace` was most of
    that time (ConversationState has no __post_init__ and no init=False fields to honour)."""
    new = object.__new__(ConversationState)
    fields = dict(current.__dict__)
    fields.update(changes)
    object.__setattr__(new, "__dict__", fields)
    return new


def in_group(group: StateGroup, state: ConversationState) -> bool:
    """Whether `state` (already as of now: `at`) is in the filter `group`. The stores' queries
    for the same groups (`DeskFilter` in `Store.desk`) say the same in SQL."""
    match group:
        case "all":
            return True
        case "needs_staff":
            return state.state == "needs_staff"
        case "working":
            return (state.state, state.detail) == ("ai", "working")
        case "waiting_customer":
            return (state.state, state.detail) == ("ai", "waiting_customer")
        case "idle":
            return state.state in ("resolved", "snoozed")
        case _:
            assert_never(group)


@dataclass(frozen=True)
class DeskFilter:
    """Which conversations a list shows: a state group, a tag, a priority ("" for any)."""

    group: StateGroup = "all"
    tag: str = ""
    priority: str = ""

    def matches(self, state: ConversationState, now: datetime) -> bool:
        live = at(state, now)
        return (
            in_group(self.group, live)
            and (not self.tag or self.tag in live.tags)
            and (not self.priority or live.priority == self.priority)
        )

    @property
    def narrows(self) -> bool:
        return self != DeskFilter()


def label(state: State, detail: Detail, *, short: bool = False) -> str:
    words = SHORT_LABELS if short else LABELS
    return words.get((state, detail)) or words.get((state, ""), state)


def start(holder: str) -> ConversationState:
    """A new session's state: its entry agent holds it; nobody has said anything yet."""
    return ConversationState(holder=holder)


def _moved(
    state: ConversationState, to: State, detail: Detail, item: k.Item, changes: dict[str, Any] | None = None
) -> ConversationState:
    """The state moved to (to, detail) at `item`, with `changes` besides; `since` changes only
    when the pair does. (One copy for both: the store folds every appended item.)"""
    if (state.state, state.detail) == (to, detail) and state.since is not None:
        return replace(state, **changes) if changes else state
    return replace(state, state=to, detail=detail, since=item.created_at, **(changes or {}))


def at(state: ConversationState, now: datetime) -> ConversationState:
    """The state as of `now`: a snooze whose time has passed is back with staff. (The fold reads
    no clock; readers that show a live state pass theirs.)"""
    if state.state == "snoozed" and state.snoozed_until is not None and now >= state.snoozed_until:
        return replace(state, state="needs_staff", detail="snooze_ended", since=state.snoozed_until)
    return state


def _after_decision(state: ConversationState, item: k.Item) -> ConversationState:
    """Where the state settles after a decision: still waiting while approvals are pending, then
    with staff if any was denied, else the agents' (they tell the customer at once)."""
    if state.pending:
        return _moved(state, "needs_staff", "approval", item)
    if state.unanswered_denial:
        return _moved(state, "needs_staff", "denied", item)
    return _moved(state, "ai", "working", item)


def _answers_a_denial(item: k.Item) -> bool:
    """Whether the item takes a denied approval from there: a person acting on the conversation
    (not a decision, a tag or a context edit, which do not speak to the customer or move it), or
    the customer writing again."""
    match item:
        case k.Message(role="customer" | "staff") | k.Handoff(handoff_kind="manual"):
            return True
        case k.Takeover() | k.Release() | k.StaffReply() | k.StateChange():
            return True
        case k.Message() | k.Handoff() | k.Notice() | k.ContextSet() | k.ToolCall() | k.ToolResult() | k.TagChange():
            return False
        case k.Offer() | k.Confirmation() | k.Decline():
            return False
        case _:
            assert_never(item)


def advance(state: ConversationState, item: k.Item) -> ConversationState:
    """The state after one more item of the log.

    While a person holds the conversation (a take-over not yet released) it is theirs: whatever
    would hand it to the agents or call for staff leaves it `staff` (they are the staff); only
    resolving or snoozing it moves it, and a customer writing again brings it back to them."""
    moved = _waits(_advance(state, item), item)
    if moved.held_by_staff and moved.state in ("ai", "needs_staff"):
        # Judged against the state before the item, so a held conversation's `since` stays put.
        before = replace(moved, state=state.state, detail=state.detail, since=state.since)
        moved = _moved(before, "staff", "", item)
    # The last item folded in, set last (nothing above reads it): one copy fewer per item.
    if item.seq and moved.seq != item.seq:
        moved = replace(moved, seq=item.seq)
    return moved


def _waits(state: ConversationState, item: k.Item) -> ConversationState:
    """The customer's running wait: from their message until someone answers it; resolving the
    conversation keeps nobody waiting."""
    match item:
        case k.Message(role="customer"):
            return state if state.waiting_since is not None else replace(state, waiting_since=item.created_at)
        case k.Message(role="agent") | k.StaffReply():
            if state.waiting_since is None:
                return state
            return replace(state, waiting_since=None, answers=state.answers + 1)
        case k.StateChange(state="resolved"):
            return replace(state, waiting_since=None)
        case k.Message() | k.ToolCall() | k.ToolResult() | k.Handoff() | k.ContextSet() | k.Notice():
            return state
        case k.Takeover() | k.Release() | k.StateChange() | k.TagChange():
            return state
        case k.Offer() | k.Confirmation() | k.Decline():
            # The offer's question is an agent message of its own, which answers the wait.
            return state
        case _:
            assert_never(item)


def _advance(state: ConversationState, item: k.Item) -> ConversationState:
    if not state.held_by_staff and not isinstance(item, k.Takeover):
        holder = item.to_agent if isinstance(item, k.Handoff | k.Release) else item.agent
        if holder and holder != state.holder:
            state = replace(state, holder=holder)
    if state.unanswered_denial and _answers_a_denial(item):
        state = replace(state, unanswered_denial=False)
    sticky = state.state == "needs_staff" and state.detail != "approval"
    match item:
        case k.Message(role=role, text=text):
            said = {"last_line": one_line(text, LAST_LINE_CHARS), "last_role": role}
            if state.pending:
                return _moved(state, "needs_staff", "approval", item, said)
            match role:
                case "customer":
                    return _moved(state, "ai", "working", item, said)
                case "staff":
                    if state.state in ("snoozed", "resolved"):
                        return replace(state, **said)  # a note on a parked conversation does not reopen it
                    return _moved(state, "ai", "waiting_customer", item, said)
                case "agent" | "system":
                    if sticky:
                        return replace(state, **said)  # the agent's own words do not answer a call for staff
                    return _moved(state, "ai", "waiting_customer", item, said)
                case _:
                    assert_never(role)
        case k.Handoff(handoff_kind=kind):
            if kind == "manual" and sticky:
                return _moved(state, "ai", "working", item)  # staff acted
            return state
        case k.Notice(notice_kind=kind, data=data):
            match kind:
                case "approval_requested":
                    wanted = PendingApproval(str(data.get("approval_id", "")), str(data.get("tool", "a tool")))
                    state = replace(state, pending=(*state.pending, wanted))
                    return _moved(state, "needs_staff", "approval", item)
                case "approval_granted" | "approval_denied":
                    decided = str(data.get("approval_id", ""))
                    state = replace(state, pending=tuple(p for p in state.pending if p.approval_id != decided))
                    if kind == "approval_denied":
                        # The agent tells the customer (the runner takes that turn at once), but
                        # a refusal is a person's to follow up: it needs staff until one acts.
                        state = replace(state, unanswered_denial=True)
                    return _after_decision(state, item)
                case "human_requested" | "limit" | "provider_error":
                    if state.pending:
                        return state
                    return _moved(state, "needs_staff", kind, item)
                case "info" | "customer_action":  # (the customer's own phone: changes no desk state)
                    return state
                case _:
                    assert_never(kind)
        case k.ContextSet(key=key, value=value):
            if key in _CUSTOMER_KEYS and value:
                rank = _CUSTOMER_KEYS.index(key)
                if rank <= state.customer_rank:
                    return replace(state, customer=one_line(str(value), LAST_LINE_CHARS), customer_rank=rank)
            return state
        case k.ToolCall() | k.ToolResult():
            return state
        case k.Takeover(person=person):
            state = replace(state, holder=person, held_by_staff=True, snoozed_until=None)
            return _moved(state, "staff", "", item)
        case k.Release(to_agent=to_agent):
            state = replace(state, holder=to_agent, held_by_staff=False)
            if state.pending:
                return _moved(state, "needs_staff", "approval", item)
            # The agent answers the customer's next message.
            return _moved(state, "ai", "waiting_customer", item)
        case k.StaffReply(text=text):
            state = replace(state, last_line=one_line(text, LAST_LINE_CHARS), last_role="staff")
            if state.state in ("snoozed", "resolved") or state.pending:
                return state
            return _moved(state, "ai", "waiting_customer", item)  # staff answered the call
        case k.StateChange(state=to, until=until):
            match to:
                case "snoozed":
                    return _moved(replace(state, snoozed_until=until), "snoozed", "", item)
                case "resolved":
                    return _moved(replace(state, snoozed_until=None), "resolved", "", item)
                case "needs_staff":
                    return _moved(replace(state, snoozed_until=None), "needs_staff", "flagged", item)
                case "ai":
                    return _moved(replace(state, snoozed_until=None), "ai", "waiting_customer", item)
                case _:
                    assert_never(to)
        case k.TagChange(added=added, removed=removed, priority=priority):
            tags = tuple(t for t in dict.fromkeys((*state.tags, *added)) if t not in removed)
            return replace(state, tags=tags, priority=state.priority if priority is None else priority)
        case k.Offer(offer_id=offer_id, action=action):
            return replace(state, offer=(offer_id, action))
        case k.Confirmation() | k.Decline():
            return replace(state, offer=None)
        case _:
            assert_never(item)


def fold(items: Iterable[k.Item], state: ConversationState | None = None) -> ConversationState:
    """The state after `items`, from `state` (a new session's when None)."""
    state = state if state is not None else ConversationState()
    for item in items:
        state = advance(state, item)
    return state


def undecided_approvals(notices: Iterable[k.Item]) -> list[k.Notice]:
    """The approval requests among a session's notices that no grant or denial answered yet.

    A fold like the others: the runner decides from it, and the chat screen's first page reads
    it straight from the store's notices, without building the runner."""
    said = [n for n in notices if isinstance(n, k.Notice)]
    decided = {n.data.get("approval_id") for n in said if n.notice_kind in ("approval_granted", "approval_denied")}
    return [n for n in said if n.notice_kind == "approval_requested" and n.data.get("approval_id") not in decided]


def needs_staff(recent: Iterable[k.Item], pending: Iterable[k.Notice] = ()) -> str:
    """Why staff are needed, in a few words; "" when they are not.

    `recent` is the log's tail (a screen keeps a page of it); `pending` the approval requests
    still undecided in the whole log (the runner's answer), which the tail alone cannot know."""
    state = fold(recent)
    known = tuple(PendingApproval(str(n.data.get("approval_id", "")), str(n.data.get("tool", "a tool"))) for n in pending)
    if known:
        state = replace(state, pending=known, state="needs_staff", detail="approval")
    elif state.detail == "approval":
        if state.unanswered_denial:
            state = replace(state, pending=(), state="needs_staff", detail="denied")
        else:
            state = replace(state, pending=(), state="ai", detail="working")
    return state.reason


__all__ = [
    "undecided_approvals",
    "ConversationState",
    "DeskFilter",
    "Detail",
    "LABELS",
    "SHORT_LABELS",
    "PendingApproval",
    "State",
    "STATES",
    "STATE_GROUPS",
    "StateGroup",
    "URGENCY",
    "advance",
    "at",
    "fold",
    "in_group",
    "label",
    "needs_staff",
    "start",
]

# Every (state, detail) the fold can reach has a label and an urgency.
assert set(URGENCY) == set(LABELS)
