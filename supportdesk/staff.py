"""Staff as people in the log: who acted, from where, and the audit of every staff action.

A staff action is an item like any other. The kinds issue 19 added (take-over, release, state
change, staff reply, tag change) carry `person` and `origin` as fields; the older kinds staff
also write (a note, a manual handoff, a context edit, an approval decision) carry them in the
item's meta under `STAFF_META`. `audit(items)` is the fold that lists them all, once each.
"""

from __future__ import annotations

import getpass
import os
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, assert_never, get_args

from supportdesk import items as k
from supportdesk.folders import config_dir
from supportdesk.items import STAFF_META, Origin

ORIGINS: tuple[str, ...] = get_args(Origin)
# An item written as part of another staff action (the handoff a release to another agent makes):
# the action is audited once, as the item that names the person.
PART_OF_ACT = "part_of_staff_act"
# The staff name when none is given (`--as`, the TUI's settings): this variable, else the OS user.
STAFF_NAME_VARIABLE = "SUPPORTDESK_STAFF"


def settings_path() -> Path:
    """The person's own settings (`[staff] name = "Dana"`), beside their replies.toml."""
    return config_dir() / "settings.toml"


class SettingsError(ValueError):
    """settings.toml cannot be used; the message is one line naming what to fix."""


def chosen_name() -> str | None:
    """The display name this person chose: $SUPPORTDESK_STAFF, else `[staff] name` in
    settings.toml; None when neither says. A settings file that cannot be read is a SettingsError."""
    name = os.environ.get(STAFF_NAME_VARIABLE, "").strip()
    if name:
        return name
    path = settings_path()
    if path.is_file():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: cannot be read ({exc}); fix it or remove it") from None
        staff = raw.get("staff", {})
        given = staff.get("name") if isinstance(staff, dict) else None
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise SettingsError(f"{path}: staff.name must be your name as text, like name = \"Dana\"")
        if given:
            return given.strip()
    return None


def default_person() -> str:
    """Who staff actions are by when nobody said (`--as`): the chosen name (`chosen_name`), else
    the OS user."""
    return chosen_name() or _os_user()


def default_actor(origin: Origin = "tui") -> Actor:
    """The acting person when nobody said (`--as`). An OS login nobody chose as a display name
    ("root") is kept for the audit but never shown to a customer (`Actor.unnamed`)."""
    name = chosen_name()
    return Actor(name, origin) if name else Actor(_os_user(), origin, unnamed=True)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without passwd entry)
        return "staff"


_DURATION = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class WhenError(ValueError):
    """A time that cannot be read; the message is one line for the user."""


def parse_duration(text: str) -> timedelta:
    """`30m`, `2h`, `3d`, `1w`."""
    found = _DURATION.match(text.strip().lower())
    if not found:
        raise WhenError(f"{text!r} is not a duration; write it like 30m, 2h, 3d or 1w")
    return timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})


def parse_when(text: str, now: datetime) -> datetime:
    """A moment given as a duration from `now` (`2h`: in two hours; `-2h` or `2h ago`: two hours
    ago) or as an ISO 8601 date or time (UTC unless it names its offset)."""
    raw = text.strip()
    past = raw.startswith("-") or raw.lower().endswith(" ago")
    bare = raw.lstrip("-").removesuffix(" ago").removesuffix(" AGO").strip()
    if _DURATION.match(bare.lower()):
        delta = parse_duration(bare)
        return now - delta if past else now + delta
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise WhenError(
            f"{text!r} is not a time; write a duration (2h, 3d, -1d for a day ago) or an ISO date (2026-03-09T09:00)"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Actor:
    """A member of staff acting from somewhere (tui, cli, api, chatwoot)."""

    person: str
    origin: Origin = "tui"
    macro: str = ""  # the macro this action is a step of (replies.toml), if any
    # The name is the OS login, not a display name anyone chose (`default_actor`): customers
    # are shown the team instead (issue 39 §5: a web customer read "root").
    unnamed: bool = False

    def meta(self) -> dict[str, Any]:
        """What an item of an older kind carries in its meta to say who wrote it."""
        said: dict[str, Any] = {"person": self.person, "origin": self.origin}
        if self.macro:
            said["macro"] = self.macro
        return {STAFF_META: said}

    def act_meta(self) -> dict[str, Any]:
        """The meta of a staff kind's item (its person and origin are fields): the macro, if any."""
        said: dict[str, Any] = {}
        if self.macro:
            said["macro"] = self.macro
        if self.unnamed:
            said["unnamed"] = True
        return {STAFF_META: said} if said else {}


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
