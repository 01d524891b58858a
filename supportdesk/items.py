"""The session item kinds: the only things a session log holds.

A session is an ordered, append-only list of these. Every pane of the TUI, every
export and every eval is a fold over them, so a new kind is one model here (added to
`Item`), then one branch in each consumer's `match` (tests/test_item_kinds.py lists them).

Items are built without `seq`/`session_id`/`created_at` by the engine; the store
stamps those when it appends them, in the same transaction that takes the seq.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Role = Literal["customer", "agent", "staff", "system"]
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

# How the output of a tool result held for staff approval begins: the call has not happened
# yet (the TUI must not draw it as done, the desk's figures must not count it as made).
APPROVAL_PENDING = "waiting for staff approval"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class _ItemBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str = ""
    seq: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    # The agent that held the conversation when this item was written.
    agent: str = ""
    # Agent-private bookkeeping (token usage, routing confidence, request ids).
    # It is stored with the item but never shown to the agents as conversation.
    meta: dict[str, Any] = Field(default_factory=dict)


class Message(_ItemBase):
    kind: Literal["message"] = "message"
    role: Role
    text: str


class ToolCall(_ItemBase):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(_ItemBase):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    output: str
    is_error: bool = False


class Handoff(_ItemBase):
    kind: Literal["handoff"] = "handoff"
    from_agent: str
    to_agent: str
    reason: str = ""
    # `kind` is the item discriminator, so the handoff's own sort lives here.
    handoff_kind: HandoffKind = "route"


class ContextSet(_ItemBase):
    """One write to the shared context. `value=None` clears the key."""

    kind: Literal["context_set"] = "context_set"
    key: str
    value: Any = None
    writer: str


class Notice(_ItemBase):
    kind: Literal["notice"] = "notice"
    notice_kind: NoticeKind
    text: str
    data: dict[str, Any] = Field(default_factory=dict)


# --- what staff do as people (issue 19): each carries the person and where it came from -------


class _StaffAct(_ItemBase):
    # The member of staff who acted (settings' staff name, default the OS user).
    person: str
    origin: Origin = "tui"


class Takeover(_StaffAct):
    """A person takes the conversation from the agents: they stay silent until a `release`."""

    kind: Literal["takeover"] = "takeover"
    reason: str = ""


class Release(_StaffAct):
    """The person gives the conversation back to `to_agent`, with a summary that agent reads."""

    kind: Literal["release"] = "release"
    to_agent: str
    summary: str = ""


class StateChange(_StaffAct):
    """Staff set the conversation's state; `until` is when a snooze ends (then: needs_staff)."""

    kind: Literal["state_change"] = "state_change"
    state: SettableState
    until: datetime | None = None
    reason: str = ""


class StaffReply(_StaffAct):
    """What a person wrote to the customer (a staff note, `Message(role="staff")`, is internal)."""

    kind: Literal["staff_reply"] = "staff_reply"
    text: str


class TagChange(_StaffAct):
    """Tags added or removed, and the priority when it was set."""

    kind: Literal["tag_change"] = "tag_change"
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    priority: Priority | None = None


StaffAct = Takeover | Release | StateChange | StaffReply | TagChange

Item = Annotated[
    Union[Message, ToolCall, ToolResult, Handoff, ContextSet, Notice, Takeover, Release, StateChange, StaffReply, TagChange],
    Field(discriminator="kind"),
]
ITEM_ADAPTER: TypeAdapter[Item] = TypeAdapter(Item)
# Derived from the union above, so a new kind is declared once: its model, added to `Item`.
# Every consumer dispatches with `match` + `assert_never`; tests/test_item_kinds.py runs each
# kind through each of them, so a kind without a branch fails there, not on a user's screen.
ITEM_TYPES: tuple[type[_ItemBase], ...] = get_args(get_args(Item)[0])
ITEM_KINDS: tuple[str, ...] = tuple(model.model_fields["kind"].default for model in ITEM_TYPES)
STAFF_KINDS = frozenset({"takeover", "release", "state_change", "staff_reply", "tag_change"})
# Staff actions that are items of the older kinds (a note, a manual handoff, a context edit, an
# approval decision) name their person and origin in the item's meta under this key.
STAFF_META = "staff"

# The envelope is stored in columns; everything else of an item is its JSON body.
# A set, not a frozenset: pydantic's `exclude` is typed to take a set. Never changed.
ENVELOPE: set[str] = {"session_id", "seq", "created_at", "agent", "meta", "kind"}


def item_body(item: Item) -> dict[str, Any]:
    """The kind-specific fields of an item (what the store keeps as its JSON body)."""
    return item.model_dump(mode="json", exclude=set(ENVELOPE))


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
