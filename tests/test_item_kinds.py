"""Every item kind reaches every consumer of the log, and a kind without a branch fails here.

A new kind is one model in `supportdesk/items.py` added to the `Item` union. This file is what
makes the rest of the change visible: it needs samples of the new kind (below), then every
consumer listed in `CONSUMERS` must take them. Each consumer dispatches with `match` ending in
`assert_never`, so a kind it does not name raises instead of drawing, exporting or sending
something wrong; `test_a_kind_without_a_branch_fails_in_every_consumer` proves that for each.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, get_args

import pytest
from rich.console import Console

from supportdesk.channels.view import customer_event
from supportdesk.config import DeskConfig, parse_desk
from supportdesk.engine.protocol import StepRequest
from supportdesk.items import pending_text
from supportdesk.reports.export import in_brief_transcript, item_line, session_markdown
from supportdesk.integrations.sdk_items import sdk_from_item
from supportdesk.folds.desk_state import advance, start
from supportdesk.items import (
    ITEM_KINDS,
    ITEM_TYPES,
    Confirmation,
    Decline,
    DeclineWhy,
    Offer,
    ContextSet,
    Handoff,
    HandoffKind,
    Item,
    Message,
    Notice,
    NoticeKind,
    Priority,
    Release,
    Role,
    SettableState,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
    _ItemBase,
)
from supportdesk.models.history import build_messages
from supportdesk.models.offline.view import View
from supportdesk.folds.sla import SlaProgress
from supportdesk.store import SessionInfo, figure_summary
from supportdesk.store.kept_folds import advance_all
from supportdesk.engine.history_window import item_text
from supportdesk.staff import action_name, actor_of, audit_detail
from supportdesk.tui.screens.chat import bears_on_attention
from supportdesk.tui.screens.detail import item_detail
from supportdesk.tui.widgets.items import folds, frame, renderable
from supportdesk.tui.widgets.render import HANDOFF_ICONS, NOTICE_ICONS, AgentLook
from tests.conftest import TEST_DESK

AT = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)
ENVELOPE: dict[str, Any] = {"session_id": "s1", "created_at": AT, "agent": "billing"}

# Samples of every kind, in the shapes consumers tell apart (each role, notice and handoff kind,
# an error, a pending approval, a cleared key). A new kind adds its samples here.
SAMPLES: dict[str, list[Item]] = {
    "message": [Message(seq=1 + n, role=role, text=f"a {role} line", **ENVELOPE) for n, role in enumerate(get_args(Role))],
    "tool_call": [ToolCall(seq=10, call_id="c1", name="refund", arguments={"amount": 12.5}, **ENVELOPE)],
    "tool_result": [
        ToolResult(seq=11, call_id="c1", name="refund", output='{"refunded": 12.5}', **ENVELOPE),
        ToolResult(seq=12, call_id="c1", name="refund", output="boom", is_error=True, **ENVELOPE),
        ToolResult(seq=13, call_id="c2", name="refund", output=pending_text("refund"), awaits_approval=True, **ENVELOPE),
    ],
    "handoff": [
        Handoff(seq=20 + n, from_agent="triage", to_agent="billing", reason="money", handoff_kind=kind, **ENVELOPE)
        for n, kind in enumerate(get_args(HandoffKind))
    ],
    "context_set": [
        ContextSet(seq=30, key="customer_id", value="CUS-1", writer="billing", **ENVELOPE),
        ContextSet(seq=31, key="customer_id", value=None, writer="staff", **ENVELOPE),
    ],
    "notice": [
        Notice(seq=40 + n, notice_kind=kind, text=f"a {kind} notice", data={"approval_id": "ap1"}, **ENVELOPE)
        for n, kind in enumerate(get_args(NoticeKind))
    ],
    "takeover": [Takeover(seq=50, person="dana", reason="angry customer", **ENVELOPE)],
    "release": [Release(seq=51, person="dana", to_agent="billing", summary="refund agreed", **ENVELOPE)],
    "state_change": [
        StateChange(seq=52 + n, person="dana", state=state, reason="why", **ENVELOPE)
        for n, state in enumerate(get_args(SettableState))
    ],
    "staff_reply": [StaffReply(seq=60, person="dana", text="I have refunded you", origin="cli", **ENVELOPE)],
    "tag_change": [
        TagChange(seq=61, person="dana", added=["vip"], removed=["new"], **ENVELOPE),
        *(TagChange(seq=62 + n, person="dana", priority=p, **ENVELOPE) for n, p in enumerate(get_args(Priority))),
    ],
    "offer": [
        Offer(seq=70, offer_id="of1", tool="refund", arguments={"amount": 12.5}, action="refund $12.50",
              text="Before I do anything: shall I refund $12.50? Please answer yes or no.", call_id="c3", **ENVELOPE),
        # Offered on behalf of the agent it is passed up to (its limit covers it): that one runs it.
        Offer(seq=71, offer_id="of2", tool="refund", arguments={"amount": 129.99}, action="refund $129.99",
              text="Shall I have our senior colleague refund $129.99?", call_id="c4", for_agent="senior", **ENVELOPE),
    ],
    "confirmation": [
        Confirmation(seq=72, offer_id="of1", tool="refund", arguments={"amount": 12.5}, source=source, answer_seq=71, **ENVELOPE)
        for source in ("text", "button")
    ],
    "decline": [
        Decline(seq=74 + n, offer_id="of1", tool="refund", why=why, answer_seq=71, **ENVELOPE)
        for n, why in enumerate(get_args(DeclineWhy))
    ],
}
EVERY_SAMPLE = [item for kind in ITEM_KINDS for item in SAMPLES.get(kind, [])]


def _config() -> DeskConfig:
    return parse_desk(TEST_DESK, "test.toml", tool_names=["refund", "explode"])


def _request(item: Any) -> StepRequest:
    config = _config()
    return StepRequest("s1", config.agents["billing"], config, [], [], [item], {})


def _rendered(item: Any, expanded: bool) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(renderable(item, AgentLook(_config()), expanded=expanded))
    return console.file.getvalue()


def _markdown(item: Any) -> str:
    info = SessionInfo(id="s1", title="t", created_at=AT, updated_at=AT, entry_agent="triage",
                       active_agent="billing", status="open", item_count=1, handoff_count=0)
    return session_markdown(info, [item], _config())


# Every function that dispatches on an item's kind. A new consumer of the log joins this list.
CONSUMERS: dict[str, Callable[[Any], object]] = {
    "tui frame": frame,
    "tui text": lambda item: _rendered(item, expanded=False),
    "tui text, expanded": lambda item: _rendered(item, expanded=True),
    "tui folds": folds,
    "tui detail": item_detail,
    "tui attention": bears_on_attention,
    "conversation state (header, inbox)": lambda item: advance(start("triage"), item),
    "staff actor": actor_of,
    "staff action name": action_name,
    "staff audit": audit_detail,
    "export line (CLI)": lambda item: item_line(item, _config()),
    "CLI brief transcript": in_brief_transcript,
    "export markdown": _markdown,
    "provider history": lambda item: build_messages(_request(item)),
    "offline view": lambda item: View(_request(item)),
    "customer's view (serve)": lambda item: customer_event(item, _config()),
    "Agents SDK items": sdk_from_item,
    "history window (what a model call sees)": item_text,
    # Every append runs these inside the store's transaction: a kind without a branch here
    # would fail the append itself (store/kept_folds.py).
    "figures' share (kept by the store)": lambda item: figure_summary.fold([item], figure_summary.start("triage", AT), [False]),
    "store's kept folds (state, share, SLA clocks)": lambda item: advance_all(
        start("triage"), figure_summary.start("triage", AT), SlaProgress(), [item]
    ),
}


def test_the_kinds_are_declared_once_by_the_union() -> None:
    assert ITEM_KINDS == tuple(model.kind for model in ITEM_TYPES)
    assert len(set(ITEM_KINDS)) == len(ITEM_KINDS)


def test_every_kind_has_samples() -> None:
    missing = [kind for kind in ITEM_KINDS if not SAMPLES.get(kind)]
    assert missing == [], f"add samples of {missing} to SAMPLES, then a branch to every consumer"
    assert sorted(SAMPLES) == sorted(ITEM_KINDS)
    assert all(item.kind == kind for kind, items in SAMPLES.items() for item in items)


@pytest.mark.parametrize("consumer", CONSUMERS, ids=str)
@pytest.mark.parametrize("item", EVERY_SAMPLE, ids=lambda item: f"{item.kind}-{item.seq}")
def test_every_consumer_takes_every_kind(consumer: str, item: Item) -> None:
    CONSUMERS[consumer](item)


def test_every_notice_and_handoff_kind_has_its_icon() -> None:
    assert set(NOTICE_ICONS) == set(get_args(NoticeKind))
    assert set(HANDOFF_ICONS) == set(get_args(HandoffKind))


@dataclass(frozen=True, kw_only=True)
class Rating(_ItemBase):
    """A kind no consumer knows: what a new kind is before its branches are written."""

    kind: Literal["rating"] = "rating"
    stars: int


@pytest.mark.parametrize("consumer", CONSUMERS, ids=str)
def test_a_kind_without_a_branch_fails_in_every_consumer(consumer: str) -> None:
    with pytest.raises(AssertionError):
        CONSUMERS[consumer](Rating(seq=99, stars=5, **ENVELOPE))


def test_items_are_equal_when_the_same_kind_holds_the_same_fields() -> None:
    """Every kind shares records.SharedMethods' __eq__/__repr__ (not one generated per kind)."""
    when = datetime(2026, 3, 14, 9, 30, tzinfo=timezone.utc)
    a = Message(role="customer", text="hi", created_at=when)
    assert a == Message(role="customer", text="hi", created_at=when)
    assert a != Message(role="customer", text="hi!", created_at=when)
    assert a != StaffReply(person="hi", text="hi", created_at=when)  # another kind is never equal
    assert repr(a).startswith("Message(session_id='', seq=0, created_at=") and "text='hi'" in repr(a)
    with pytest.raises(TypeError):
        hash(a)


def test_an_offer_made_for_the_agent_it_is_passed_up_to_names_who_runs_it_on_screen_and_in_the_export() -> None:
    """Staff see which agent runs an offered call on the customer's yes when it is not the agent
    that asked (a refund above billing's limit, offered for the senior: `Offer.for_agent`)."""
    own, passed_up = SAMPLES["offer"]
    assert passed_up.for_agent and not own.for_agent
    senior = _config().agents.get("senior")
    title = senior.title if senior else "senior"
    assert f"{title} runs it" in " ".join(_rendered(passed_up, expanded=False).split())
    assert "runs it" not in _rendered(own, expanded=False)
    assert "senior runs it" in item_line(passed_up) and "runs it" not in item_line(own)
