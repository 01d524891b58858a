"""The audit of staff actions: who of staff wrote an item (`actor_of`), what the action was in
words (`action_name`, `describe`, `audit_detail`), and the fold that lists every staff action
once (`audit`).

A staff action is an item like any other. The kinds issue 19 added (take-over, release, state
change, staff reply, tag change) carry `person` and `origin` as fields; the older kinds staff
also write (a note, a manual handoff, a context edit, an approval decision) carry them in the
item's meta under `STAFF_META`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, assert_never

from supportdesk import items as k
from supportdesk.items import STAFF_META
from supportdesk.staff.people import ORIGINS, Actor

# An item written as part of another staff action (the handoff a release to another agent makes):
# the action is audited once, as the item that names the person.
PART_OF_ACT = "part_of_staff_act"


def actor_of(item: k.Item) -> Actor | None:
    """Who of staff wrote this item, or None when it is not a staff action."""
    match item:
        case k.Takeover() | k.Release() | k.StateChange() | k.StaffReply() | k.TagChange():
            return Actor(item.person, item.origin)
        case (
            k.Message() | k.Handoff() | k.ContextSet() | k.Notice() | k.ToolCall() | k.ToolResult()
            | k.Offer() | k.Confirmation() | k.Decline()
        ):
            if item.meta.get(PART_OF_ACT):
                return None
            raw = item.meta.get(STAFF_META)
            if not isinstance(raw, dict):
                return _legacy_actor(item)
            origin = raw.get("origin")
            return Actor(str(raw.get("person") or "staff"), origin if origin in ORIGINS else "tui")
        case _:
            assert_never(item)


def _legacy_actor(item: k.Item) -> Actor | None:
    """Staff actions written before they named a person: still staff actions, by "staff"."""
    match item:
        case k.Message(role="staff") | k.Handoff(handoff_kind="manual"):
            return Actor("staff")
        case k.Notice(notice_kind="approval_granted" | "approval_denied"):
            return Actor("staff")
        case k.ContextSet(writer="staff"):
            return Actor("staff")
        case _:
            return None


def action_name(item: k.Item) -> str:
    """The audit's name for what the item did: takeover, release, reply, state, tag, note,
    handoff, context, approve, deny."""
    match item:
        case k.Takeover():
            return "takeover"
        case k.Release():
            return "release"
        case k.StaffReply():
            return "reply"
        case k.StateChange():
            return "state"
        case k.TagChange():
            return "tag"
        case k.Message():
            return "note"
        case k.Handoff():
            return "handoff"
        case k.ContextSet():
            return "context"
        case k.Notice():
            return "approve" if item.notice_kind == "approval_granted" else "deny" if item.notice_kind == "approval_denied" else "notice"
        case k.ToolCall() | k.ToolResult() | k.Offer() | k.Confirmation():
            return item.kind
        case k.Decline():
            return "withdraw" if item.why == "withdrawn" else "decline"
        case _:
            assert_never(item)


def describe(item: k.Takeover | k.Release | k.StateChange | k.StaffReply | k.TagChange) -> str:
    """One line for a staff item (CLI, export, the conversation pane). Text is data: the caller
    makes it inert for its medium."""
    match item:
        case k.Takeover():
            return f"{item.person} took the conversation over" + (f": {item.reason}" if item.reason else "")
        case k.Release():
            return f"{item.person} gave the conversation back to {item.to_agent}" + (f": {item.summary}" if item.summary else "")
        case k.StateChange():
            until = f" until {item.until:%Y-%m-%d %H:%M} UTC" if item.until is not None else ""
            why = f": {item.reason}" if item.reason else ""
            return f"{item.person} set the state to {item.state}{until}{why}"
        case k.StaffReply():
            return f"{item.person} (staff) wrote to the customer: {item.text}"
        case k.TagChange():
            return f"{item.person} " + tag_words(item)
        case _:
            assert_never(item)


def tag_words(item: k.TagChange) -> str:
    parts = []
    if item.added:
        parts.append("tagged " + ", ".join(item.added))
    if item.removed:
        parts.append("untagged " + ", ".join(item.removed))
    if item.priority is not None:
        parts.append(f"set priority {item.priority}")
    return " and ".join(parts) or "changed nothing"


@dataclass(frozen=True)
class AuditEntry:
    """One staff action as the audit lists it."""

    session_id: str
    seq: int
    at: datetime
    person: str
    origin: str
    action: str
    detail: str
    macro: str = ""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session": self.session_id,
            "seq": self.seq,
            "at": self.at.isoformat(),
            "person": self.person,
            "origin": self.origin,
            "action": self.action,
            "detail": self.detail,
        }
        if self.macro:
            out["macro"] = self.macro
        return out


def audit_detail(item: k.Item) -> str:
    match item:
        case k.Takeover():
            return item.reason
        case k.Release():
            return f"to {item.to_agent}" + (f": {item.summary}" if item.summary else "")
        case k.StateChange():
            until = f" until {item.until:%Y-%m-%d %H:%M} UTC" if item.until is not None else ""
            return f"{item.state}{until}" + (f": {item.reason}" if item.reason else "")
        case k.StaffReply() | k.Message():
            return item.text
        case k.TagChange():
            return tag_words(item)
        case k.Handoff():
            return f"{item.from_agent} → {item.to_agent}" + (f": {item.reason}" if item.reason else "")
        case k.ContextSet():
            return f"{item.key} = {item.value!r}" if item.value is not None else f"{item.key} cleared"
        case k.Notice():
            return str(item.data.get("tool", item.text))
        case k.ToolCall() | k.ToolResult():
            return item.name
        case k.Offer():
            return item.action
        case k.Confirmation():
            return f"{item.tool} confirmed ({item.source})"
        case k.Decline():
            return f"{item.tool} offer {item.why}"
        case _:
            assert_never(item)


def audit(items: list[k.Item]) -> list[AuditEntry]:
    """Every staff action in these items, once each, in log order."""
    entries = []
    for item in items:
        actor = actor_of(item)
        if actor is None:
            continue
        raw = item.meta.get(STAFF_META)
        macro = str(raw.get("macro", "")) if isinstance(raw, dict) else ""
        entries.append(
            AuditEntry(item.session_id, item.seq, item.created_at, actor.person, actor.origin,
                       action_name(item), audit_detail(item), macro)
        )
    return entries
