"""The staff actions that the command line and the web API both offer: take over, reply, release,
set the state, tag. One definition of each, and of when it is refused, so `supportdesk takeover ...`
(exit status 2) and `POST /api/staff/sessions/{id}/takeover` (a 4xx) refuse exactly the same things.

Each action is the runner's own (`staff/acts.py`, called as `Runner.takeover` ...); what this
module adds is reading the action's inputs as given (strings from a command line or a JSON body)
and the refusals the runner cannot make: an unknown session, a state or priority that does not
exist, a snooze that ends in the past. Nothing is written when an action is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, assert_never, cast, get_args

from supportdesk.items import Item, Priority, Release, SettableState, StaffReply, StateChange, TagChange, Takeover
from supportdesk.staff import Actor, describe, parse_when

StaffAction = Literal["takeover", "reply", "release", "state", "tag"]
STAFF_ACTIONS: tuple[StaffAction, ...] = get_args(StaffAction)


class Refused(Exception):
    """What was asked makes no sense here: one line naming why (exit 2 in the CLI, a 4xx in the API)."""


class UnknownSession(Refused):
    """No session has that id (or id prefix)."""


@dataclass(frozen=True)
class Inputs:
    """An action's inputs as given; each action reads the ones it takes."""

    reason: str = ""
    text: str = ""
    to: str | None = None  # release: the agent (default: the one that held it)
    summary: str = ""
    state: str = ""
    until: str | None = None  # a snooze's end: 2h, 3d, or an ISO time
    tags: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    priority: str | None = None


async def find_session(store: Any, given: str) -> str:
    """The session's id from its id or an unambiguous prefix of it."""
    info = await store.find_session(given)
    if info is None:
        raise UnknownSession(f"no session {given!r}; see `supportdesk sessions list`")
    return str(info.id)


def _settable(state: str) -> SettableState:
    if state not in get_args(SettableState):
        raise Refused(f"no state {state!r}; states: {', '.join(get_args(SettableState))}")
    return cast(SettableState, state)


def _priority(priority: str | None) -> Priority | None:
    if priority is not None and priority not in get_args(Priority):
        raise Refused(f"no priority {priority!r}; priorities: {', '.join(get_args(Priority))}")
    return cast("Priority | None", priority)


async def perform(runner: Any, session_id: str, action: StaffAction, given: Inputs, by: Actor) -> list[Item]:
    """Run one staff action on a session; the runner's TurnError and `Refused` are its refusals
    (a time that cannot be read is a `staff.WhenError`)."""
    match action:
        case "takeover":
            return [await runner.takeover(session_id, by, reason=given.reason)]
        case "reply":
            return [await runner.staff_reply(session_id, given.text, by)]
        case "release":
            return list(await runner.release(session_id, given.to, given.summary, by))
        case "state":
            state = _settable(given.state)
            now = runner.store.clock()
            until = parse_when(given.until, now) if given.until else None
            if until is not None and until <= now:
                raise Refused(f"--until {given.until!r} is in the past; a snooze ends later than now")
            return [await runner.set_state(session_id, state, until=until, reason=given.reason, by=by)]
        case "tag":
            priority = _priority(given.priority)
            return [await runner.tag(session_id, list(given.tags), list(given.remove), priority=priority, by=by)]
        case _:
            assert_never(action)


def said(item: Item) -> str:
    """One line for an item an action wrote: a staff item described, another (the handoff a
    release to another agent makes) by its kind."""
    if isinstance(item, Takeover | Release | StateChange | StaffReply | TagChange):
        return describe(item)
    return item.kind


__all__ = ["Inputs", "Refused", "STAFF_ACTIONS", "StaffAction", "UnknownSession", "find_session", "perform", "said"]
