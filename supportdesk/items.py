"""The session item kinds: the only things a session log holds.

A session is an ordered, append-only list of these. Every pane of the TUI, every
export and every eval is a fold over them, so a new kind is one model here (added to
`Item`), then one branch in each consumer's `match` (tests/test_item_kinds.py lists them).

Items are built without `seq`/`session_id`/`created_at` by the engine; the store
stamps those when it appends them, in the same transaction that takes the seq.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args

from supportdesk.exact import constructed
from supportdesk.records import FORBID_EXTRA, SharedMethods

if TYPE_CHECKING:
    from pydantic import TypeAdapter

Role = Literal["customer", "agent", "staff", "system"]
# How people read a message's speaker for the roles that are not an agent (an agent's message
# is titled by its agent): one table for the TUI and the exports.
ROLE_TITLES: dict[str, str] = {"customer": "Customer", "staff": "Staff", "system": "System"}
HandoffKind = Literal["route", "escalate", "return", "manual"]
NoticeKind = Literal[
    "limit",  # a runner limit was reached; the turn ended and went to the fallback agent
    "provider_error",  # the model server failed; the customer's message is still stored
    "approval_requested",  # a tool wants staff approval before acting
    "approval_granted",
    "approval_denied",
    "human_requested",  # the customer asked for a person
    "customer_action",  # the customer acted on their own device (tau2 telecom's simulated customer): data, never agents'
    "info",
]
# Where a staff action came from (the audit's "origin").
Origin = Literal["tui", "cli", "api", "chatwoot"]
# The states staff may put a conversation in (`staff` is reached by taking it over, and left by
# releasing it): back to the agents, waiting for a person, snoozed until a time, resolved.
SettableState = Literal["ai", "needs_staff", "snoozed", "resolved"]
Priority = Literal["none", "low", "medium", "high", "urgent"]

# What the agent reads as the output of a call held for staff approval (`pending_text`). The
# state itself is data: `ToolResult.awaits_approval`, which every reader reads (the TUI must not
# draw such a call as done, the desk's figures must not count it as made). The sentence is
# written only here; a log stored before the field existed is read through `_read_legacy`.
APPROVAL_PENDING = "waiting for staff approval"


def pending_text(reason: str) -> str:
    """The output the agent reads for a call held for staff approval, saying why."""
    return f"{APPROVAL_PENDING}: {reason}"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# Items are records (`supportdesk.records`): frozen dataclasses that pydantic validates and
# dumps when an item comes from outside or is written, so reading and drawing a session's first
# page imports no pydantic. kw_only: every kind is built by naming its fields. Every kind shares
# one `__eq__` and `__repr__` (records.SharedMethods; eq=False, repr=False): generating them for
# each kind, and a signature for each kind without a docstring, was about 40 % of this module's
# import.
@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class _ItemBase(SharedMethods):
    """What every item has: where it sits in its session, when, and who held the conversation."""

    __pydantic_config__ = FORBID_EXTRA

    session_id: str = ""
    seq: int = 0
    created_at: datetime = field(default_factory=utcnow)
    # The agent that held the conversation when this item was written.
    agent: str = ""
    # Agent-private bookkeeping (token usage, routing confidence, request ids).
    # It is stored with the item but never shown to the agents as conversation.
    meta: dict[str, Any] = field(default_factory=dict)
    # Declared per kind, not a field: whether an item of this kind changes who holds the
    # conversation, its staff state (a snooze), its tags or its priority. Such items are few
    # per session, so a reader that shows where a conversation stands reads every one of them,
    # not only the latest page (`STATE_KINDS`; tests/test_kind_lists.py ties it to desk_state).
    holds_state: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Message(_ItemBase):
    """Something said: by the customer, an agent, or staff (a note the customer never sees)."""

    kind: Literal["message"] = "message"
    role: Role
    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolCall(_ItemBase):
    """An agent asks for a tool with these arguments."""

    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ToolResult(_ItemBase):
    """What a tool call gave back (or why it failed, or that it waits for staff approval)."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    output: str
    is_error: bool = False
    # The call has not happened: it waits for staff to approve it (an `approval_requested` notice
    # follows). Readers read this, never the output's words.
    awaits_approval: bool = False


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Handoff(_ItemBase):
    """The conversation passes from one agent to another."""

    kind: Literal["handoff"] = "handoff"
    from_agent: str
    to_agent: str
    reason: str = ""
    # `kind` is the item discriminator, so the handoff's own sort lives here.
    handoff_kind: HandoffKind = "route"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class ContextSet(_ItemBase):
    """One write to the shared context. `value=None` clears the key."""

    kind: Literal["context_set"] = "context_set"
    key: str
    value: Any = None
    writer: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Notice(_ItemBase):
    """Something the desk says about the conversation: a limit, an error, an approval asked or decided."""

    kind: Literal["notice"] = "notice"
    notice_kind: NoticeKind
    text: str
    data: dict[str, Any] = field(default_factory=dict)


# --- what staff do as people (issue 19): each carries the person and where it came from -------


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class _StaffAct(_ItemBase):
    """What a member of staff did, as a person."""

    # The member of staff who acted (settings' staff name, default the OS user).
    person: str
    origin: Origin = "tui"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Takeover(_StaffAct):
    """A person takes the conversation from the agents: they stay silent until a `release`."""

    kind: Literal["takeover"] = "takeover"
    holds_state: ClassVar[bool] = True
    reason: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Release(_StaffAct):
    """The person gives the conversation back to `to_agent`, with a summary that agent reads."""

    kind: Literal["release"] = "release"
    holds_state: ClassVar[bool] = True
    to_agent: str
    summary: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class StateChange(_StaffAct):
    """Staff set the conversation's state; `until` is when a snooze ends (then: needs_staff)."""

    kind: Literal["state_change"] = "state_change"
    holds_state: ClassVar[bool] = True
    state: SettableState
    until: datetime | None = None
    reason: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class StaffReply(_StaffAct):
    """What a person wrote to the customer (a staff note, `Message(role="staff")`, is internal)."""

    kind: Literal["staff_reply"] = "staff_reply"
    text: str


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class TagChange(_StaffAct):
    """Tags added or removed, and the priority when it was set."""

    kind: Literal["tag_change"] = "tag_change"
    holds_state: ClassVar[bool] = True
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    priority: Priority | None = None


StaffAct = Takeover | Release | StateChange | StaffReply | TagChange


# --- offers and the customer's answers (issue 33) ----------------------------------------------
# How an answer reached the desk: the customer's words read by engine/confirmation.py, a button
# (a channel's structured answer naming the offer), staff (withdrawing it), or the desk itself
# (an offer expires when the conversation moves on).
AnswerSource = Literal["text", "button", "staff", "desk"]
# Why an offer was closed without running: the customer said no, changed their mind, asked a
# question, wrote about something else, or the offer expired or staff withdrew it.
DeclineWhy = Literal["no", "change_of_mind", "question", "other", "expired", "withdrawn"]


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Offer(_ItemBase):
    """An agent asked for a call that needs the customer's yes: it did not run; the customer is
    asked `text`, which states `action` (the call in checkable words: amount, plan, target).
    Only a `confirmation` of this offer, answering the customer message right after it, runs
    the call, with exactly these arguments."""

    kind: Literal["offer"] = "offer"
    offer_id: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    action: str
    text: str
    # The model's call that asked (its tool_call/tool_result pair is in the log before this).
    call_id: str = ""
    # The agent the action is passed up to, when the offering agent may not make it (a refund
    # above its limit): the yes hands the conversation to this agent, which runs the call. Empty:
    # the offering agent (`agent`) runs it.
    for_agent: str = ""


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Confirmation(_ItemBase):
    """The customer said yes to an offer: the engine runs the offered call next, as offered."""

    kind: Literal["confirmation"] = "confirmation"
    offer_id: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    source: AnswerSource = "text"
    # The seq of the customer message that said yes.
    answer_seq: int = 0


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Decline(_ItemBase):
    """An offer closed without running: the customer's answer was not a yes, or it expired or
    was withdrawn. The agent reads it and the call is never made from this offer."""

    kind: Literal["decline"] = "decline"
    offer_id: str
    tool: str
    why: DeclineWhy
    source: AnswerSource = "text"
    # The seq of the customer message that answered (0: none did).
    answer_seq: int = 0


Item = Union[
    Message, ToolCall, ToolResult, Handoff, ContextSet, Notice, Takeover, Release, StateChange, StaffReply, TagChange,
    Offer, Confirmation, Decline,
]
# Derived from the union above, so a new kind is declared once: its record, added to `Item`.
# Every consumer dispatches with `match` + `assert_never`; tests/test_item_kinds.py runs each
# kind through each of them, so a kind without a branch fails there, not on a user's screen.
ITEM_TYPES: tuple[type[_ItemBase], ...] = get_args(Item)
ITEM_KINDS: tuple[str, ...] = tuple(model.kind for model in ITEM_TYPES)  # type: ignore[attr-defined]


@cache
def item_adapter() -> TypeAdapter[Item]:
    """pydantic's validator and serializer for any item, told apart by `kind` (built on first use)."""
    from pydantic import BeforeValidator, Field, TypeAdapter

    return TypeAdapter(Annotated[Annotated[Item, Field(discriminator="kind")], BeforeValidator(_read_legacy)])
# The kinds of what staff do as people (`_StaffAct`), and those that change where a conversation
# stands (`holds_state`): derived from the declarations, so a new kind cannot be left out.
STAFF_KINDS: tuple[str, ...] = tuple(model.kind for model in ITEM_TYPES if issubclass(model, _StaffAct))  # type: ignore[attr-defined]
STATE_KINDS: tuple[str, ...] = tuple(model.kind for model in ITEM_TYPES if model.holds_state)  # type: ignore[attr-defined]
# Staff actions that are items of the older kinds (a note, a manual handoff, a context edit, an
# approval decision) name their person and origin in the item's meta under this key.
STAFF_META = "staff"

# The envelope is stored in columns; everything else of an item is its JSON body.
# A set, not a frozenset: pydantic's `exclude` is typed to take a set. Never changed.
ENVELOPE: set[str] = {"session_id", "seq", "created_at", "agent", "meta", "kind"}


def item_body(item: Item) -> dict[str, Any]:
    """The kind-specific fields of an item (what the store keeps as its JSON body)."""
    return item_adapter().dump_python(item, mode="json", exclude=ENVELOPE)  # type: ignore[no-any-return]


def item_body_json(item: Item) -> str:
    """`item_body` as the JSON text the stores keep, from the item validated: items are not
    checked when the engine builds them, and a row no reader could read back is never written
    (raises pydantic's ValidationError instead)."""
    adapter = item_adapter()
    return adapter.dump_json(adapter.validate_python(vars(item)), exclude=ENVELOPE).decode()


def item_to_json(item: Item) -> dict[str, Any]:
    """The public JSON shape of an item (CLI `--json`, export)."""
    out: dict[str, Any] = {
        "seq": item.seq,
        "kind": item.kind,
        "agent": item.agent,
        "created_at": item.created_at.isoformat(),
    }
    out.update(item_body(item))
    return out


# --- reading stored items ----------------------------------------------------------------------
#
# Building pydantic's validator for the item union (and importing pydantic) costs more at
# start-up than reading and drawing a session's first page, and every stored row was validated
# when it was written. So a row whose every field already has exactly the type its record
# declares is constructed without the validator (`supportdesk.exact`); anything else (an unknown
# kind, a missing or extra field, a string where a number belongs, an odd timestamp) goes
# through `item_adapter()`, which builds it then and raises as it always has.


@cache
def _kind_models() -> dict[str, type[_ItemBase]]:
    return dict(zip(ITEM_KINDS, ITEM_TYPES))


def _read_legacy(data: Any) -> Any:
    """A stored item as today's records read it. A tool result stored before `awaits_approval`
    existed said so only by its output's first words: such a row (the field absent) is read with
    the field set from those words. This is the one place that reads them; a row that has the
    field is taken as it says."""
    if (
        type(data) is dict
        and data.get("kind") == "tool_result"
        and "awaits_approval" not in data
        and not data.get("is_error")
        and isinstance(data.get("output"), str)
        and data["output"].startswith(APPROVAL_PENDING)
    ):
        return {**data, "awaits_approval": True}
    return data


def _constructed(data: dict[str, Any]) -> Item | None:
    """The item `data` describes, if validation would accept every field as it is; else None."""
    data = _read_legacy(data)
    model = _kind_models().get(data.get("kind"))  # type: ignore[arg-type]
    return constructed(model, data) if model is not None else None  # type: ignore[return-value]


# Constructing in Python is slower per row than pydantic's validator once built (~2.5x), so it
# serves only the first rows a process reads (a session's first page) unless the validator is
# built sooner (`build_item_validator`, which the TUI calls after its first page).
_CONSTRUCTED_ROWS = 256
_constructed_left = _CONSTRUCTED_ROWS


def build_item_validator() -> None:
    """Build pydantic's validator for stored items now (the TUI does it in a thread after its
    first page, so later reads, and the first write, do not pay for it)."""
    item_adapter()


def _validator_built() -> bool:
    return item_adapter.cache_info().currsize > 0


def item_from_json(text: str | bytes) -> Item:
    """A stored item from its JSON: what `item_adapter().validate_json(text)` returns, and raises."""
    global _constructed_left
    if _constructed_left <= 0 or _validator_built():
        return item_adapter().validate_json(text)
    _constructed_left -= 1
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    item = _constructed(data) if type(data) is dict else None
    return item if item is not None else item_adapter().validate_json(text)
