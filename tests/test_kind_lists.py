"""Lists of item kinds are derived from the declarations, never written beside them (issue 36
item 8): `items.STAFF_KINDS` from the staff acts' base class, `items.STATE_KINDS` (which the chat
header reads whole, `tui/projection.conversation_state`) from each kind's `holds_state`, and the
declaration is tied to what desk_state's fold does with every sample kind."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import get_args

from supportdesk.folds import desk_state
from supportdesk import items as k
from supportdesk.tui import projection
from tests.test_item_kinds import EVERY_SAMPLE

AT = datetime(2026, 3, 2, 10, 30, tzinfo=timezone.utc)
# What only the whole history can tell: who holds it (a person or not), a snooze, tags, priority.
DURABLE = ("held_by_staff", "snoozed_until", "tags", "priority")


def _bases() -> list[desk_state.ConversationState]:
    start = desk_state.start("triage")
    held = desk_state.advance(start, k.Takeover(person="dana", seq=1, created_at=AT))
    snoozed = desk_state.advance(start, k.StateChange(person="dana", state="snoozed", until=AT, seq=1, created_at=AT))
    tagged = replace(start, tags=("vip", "new"), priority="high")
    return [start, held, snoozed, tagged]


def _durable(state: desk_state.ConversationState) -> tuple:
    return tuple(getattr(state, name) for name in DURABLE)


def test_state_kinds_are_exactly_the_kinds_whose_items_change_the_durable_state():
    changes = {
        item.kind
        for item in EVERY_SAMPLE
        for base in _bases()
        if _durable(desk_state.advance(base, item)) != _durable(base)
    }
    assert set(k.STATE_KINDS) == changes
    assert projection.STAFF_STATE_KINDS == k.STATE_KINDS


def test_staff_kinds_are_the_staff_acts_of_the_union():
    staff = {model.kind for model in k.ITEM_TYPES if issubclass(model, k._StaffAct)}
    assert set(k.STAFF_KINDS) == staff == {model.kind for model in get_args(k.StaffAct)}
    assert set(k.STATE_KINDS) <= set(k.STAFF_KINDS)
