"""The conversation-state fold: the states and details the inbox shows, read from the log alone."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
import pytest

from supportdesk.folds.desk_state import (
    LABELS,
    URGENCY,
    ConversationState,
    PendingApproval,
    advance,
    fold,
    label,
    needs_staff,
    start,
)
from supportdesk.items import (
    ContextSet,
    Handoff,
    Item,
    Message,
    Notice,
    NoticeKind,
    Release,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
    ToolResult,
)

T0 = datetime(2026, 3, 3, 10, 0, tzinfo=timezone.utc)


def stamped(items: list[Item]) -> list[Item]:
    """The items as a store hands them back: seq 1.. and a minute apart."""
    return [replace(i, seq=n, created_at=T0 + timedelta(minutes=n)) for n, i in enumerate(items, 1)]


def customer(text: str = "I was charged twice") -> Message:
    return Message(role="customer", text=text, agent="triage")


def agent(text: str = "Let me check.", who: str = "billing") -> Message:
    return Message(role="agent", text=text, agent=who)


def notice(kind: NoticeKind, approval_id: str = "a1", tool: str = "refund") -> Notice:
    return Notice(notice_kind=kind, text=f"{kind} happened", agent="billing",
                  data={"approval_id": approval_id, "tool": tool})


def test_a_customer_message_sets_the_agents_to_work_and_an_answer_waits_for_the_customer() -> None:
    log = stamped([customer()])
    state = fold(log, start("triage"))
    assert (state.state, state.detail, state.label) == ("ai", "working", "agent working")
    assert state.since == log[0].created_at
    assert (state.holder, state.last_line, state.last_role, state.seq) == ("triage", "I was charged twice", "customer", 1)
    log = stamped([customer(), Handoff(from_agent="triage", to_agent="billing", agent="triage"), agent()])
    state = fold(log, start("triage"))
    assert (state.state, state.detail, state.label) == ("ai", "waiting_customer", "waiting for the customer")
    assert state.holder == "billing" and state.since == log[2].created_at
    assert state.last_line == "Let me check." and state.last_role == "agent"


def test_since_is_when_the_state_began_not_the_latest_item() -> None:
    log = stamped([customer(), ToolCall(call_id="c1", name="find_charges", agent="billing"),
                   ToolResult(call_id="c1", name="find_charges", output="[]", agent="billing")])
    state = fold(log)
    assert state.state == "ai" and state.detail == "working"
    assert state.since == log[0].created_at  # the tool steps did not restart the clock
    assert state.seq == 3


def test_a_pending_approval_needs_staff_until_decided_whatever_is_said_meanwhile() -> None:
    log = stamped([customer(), notice("approval_requested"), agent("I've asked a colleague to approve it.")])
    state = fold(log)
    assert (state.state, state.detail, state.label) == ("needs_staff", "approval", "waiting for staff approval")
    assert state.pending == (PendingApproval("a1", "refund"),)
    assert state.reason == "approval pending: refund"
    assert state.since == log[1].created_at
    granted = fold(stamped([*log, notice("approval_granted"), agent("Refunded.")]))
    assert granted.pending == () and (granted.state, granted.detail) == ("ai", "waiting_customer")
    # Two requests: deciding one leaves the other pending.
    two = fold(stamped([customer(), notice("approval_requested", "a1"), notice("approval_requested", "a2", "change_plan"),
                        notice("approval_granted", "a1")]))
    assert two.pending == (PendingApproval("a2", "change_plan"),) and two.detail == "approval"
    assert two.reason == "approval pending: change_plan"


def test_a_grant_is_staff_acting_and_the_agents_tell_the_customer() -> None:
    log = stamped([customer(), notice("approval_requested"), notice("approval_granted")])
    state = fold(log)
    assert (state.state, state.detail, state.pending) == ("ai", "working", ())
    assert state.since == log[2].created_at
    assert fold(stamped([*log, agent("Refunded.")])).detail == "waiting_customer"


def test_a_denial_needs_staff_until_a_person_acts_or_the_customer_writes_again() -> None:
    denied = [customer(), notice("approval_requested"), notice("approval_denied"),
              agent("Sorry, I can't refund that.")]
    log = stamped(denied)
    state = fold(log)
    assert (state.state, state.detail, state.label) == ("needs_staff", "denied", "approval denied")
    assert state.reason == "an approval was denied" and state.pending == ()
    assert state.since == log[2].created_at  # the denial, not the agent's words after it
    # What answers it: a person acting on the conversation, or the customer writing again.
    answered = {
        "note": Message(role="staff", text="I'll call them.", agent="billing"),
        "reply": StaffReply(person="ana", origin="tui", text="Let me look at this myself.", agent="billing"),
        "manual handoff": Handoff(from_agent="billing", to_agent="senior", handoff_kind="manual", agent="billing"),
        "resolve": StateChange(person="ana", origin="cli", state="resolved", agent="billing"),
        "customer": customer("So what now?"),
    }
    for what, item in answered.items():
        after = fold(stamped([*denied, item]))
        assert after.state != "needs_staff" and not after.unanswered_denial, what
    taken = fold(stamped([*denied, Takeover(person="ana", origin="tui", agent="billing")]))
    assert (taken.state, taken.unanswered_denial) == ("staff", False)
    released = fold(stamped([*denied, Takeover(person="ana", origin="tui", agent="billing"),
                             Release(person="ana", origin="tui", to_agent="billing", agent="billing")]))
    assert (released.state, released.detail) == ("ai", "waiting_customer")
    # What does not: the agents going on, a tag, a context edit, a routine handoff.
    for item in (agent("Anything else?"), TagChange(person="ana", origin="tui", added=("refund",), agent="billing"),
                 ContextSet(key="tier", value="gold", writer="staff", agent="billing"),
                 Handoff(from_agent="billing", to_agent="senior", handoff_kind="escalate", agent="billing")):
        still = fold(stamped([*denied, item]))
        assert (still.state, still.detail) == ("needs_staff", "denied"), item.kind


def test_a_denial_among_pending_approvals_shows_once_the_last_is_decided() -> None:
    two = [customer(), notice("approval_requested", "a1"), notice("approval_requested", "a2", "change_plan"),
           notice("approval_denied", "a1")]
    state = fold(stamped(two))
    assert (state.state, state.detail) == ("needs_staff", "approval") and state.unanswered_denial
    assert state.reason == "approval pending: change_plan"
    granted = fold(stamped([*two, notice("approval_granted", "a2", "change_plan")]))
    assert (granted.state, granted.detail) == ("needs_staff", "denied")  # the grant did not answer the denial
    # The customer wrote again while the other was pending: the agents answered, nothing is left.
    wrote = fold(stamped([*two, customer("ok"), agent("Noted."), notice("approval_granted", "a2", "change_plan")]))
    assert (wrote.state, wrote.detail) == ("ai", "working") and not wrote.unanswered_denial
    # The chat header's reading: the runner says nothing is pending any more.
    assert needs_staff(stamped(two), []) == "an approval was denied"
    # Kept summaries carry the flag through JSON.
    assert ConversationState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    ("kind", "words", "reason"),
    [
        ("human_requested", "human requested", "the customer asked for a person"),
        ("limit", "limit reached", "a limit was reached"),
        ("provider_error", "provider error", "the model server failed"),
    ],
)
def test_calls_for_staff_hold_until_staff_act_or_the_customer_writes_again(kind, words, reason) -> None:
    asked = [customer(), notice(kind), agent("Senior support will take it from here.", who="senior")]
    state = fold(stamped(asked))
    assert (state.state, state.detail, state.label, state.reason) == ("needs_staff", kind, words, reason)
    assert state.holder == "senior"
    note = Message(role="staff", text="on it", agent="senior")
    assert fold(stamped([*asked, note])).state == "ai"
    manual = Handoff(from_agent="senior", to_agent="billing", handoff_kind="manual", agent="senior")
    assert fold(stamped([*asked, manual])).state == "ai"
    routed = Handoff(from_agent="senior", to_agent="billing", handoff_kind="route", agent="senior")
    assert fold(stamped([*asked, routed])).state == "needs_staff"
    again = fold(stamped([*asked, customer("hello?")]))
    assert (again.state, again.detail) == ("ai", "working")


def test_the_customer_is_named_by_the_best_context_key_known() -> None:
    log = [customer(), ContextSet(key="customer_id", value="CUS-1001", writer="billing", agent="billing")]
    assert fold(stamped(log)).customer == "CUS-1001"
    log.append(ContextSet(key="customer_email", value="dana@example.com", writer="billing", agent="billing"))
    assert fold(stamped(log)).customer == "dana@example.com"
    log.append(ContextSet(key="customer_id", value="CUS-1002", writer="billing", agent="billing"))
    assert fold(stamped(log)).customer == "dana@example.com"  # an id does not replace an email


def test_the_last_line_is_one_bounded_line() -> None:
    state = fold(stamped([customer("line one\n\nline   two " + "x" * 500)]))
    assert state.last_line.startswith("line one line two x") and "\n" not in state.last_line
    assert len(state.last_line) == 160 and state.last_line.endswith("…")


def test_advancing_item_by_item_equals_folding_and_survives_json() -> None:
    log = stamped([customer(), ContextSet(key="customer_email", value="dana@example.com", writer="t", agent="triage"),
                   Handoff(from_agent="triage", to_agent="billing", agent="triage"), notice("approval_requested"),
                   agent("Waiting on approval.")])
    state = start("triage")
    for n, item in enumerate(log):
        state = advance(state, item)
        assert state == fold(log[: n + 1], start("triage"))
        assert ConversationState.from_json(state.to_json()) == state
    # A state from a newer writer with fields this one does not know still reads.
    assert ConversationState.from_json(state.to_json()[:-1] + ',"future":1}') == state


def test_needs_staff_takes_the_runners_pending_approvals_over_the_pages_tail() -> None:
    tail = [customer()]
    assert needs_staff(tail, []) == ""
    assert needs_staff(tail, [notice("approval_requested")]) == "approval pending: refund"
    # The page holds a request the runner says is decided (the decision is older than the page).
    assert needs_staff([notice("approval_requested")], []) == ""


def test_every_state_and_detail_pair_has_one_label_and_one_urgency() -> None:
    assert set(LABELS) == set(URGENCY)
    six = {"agent working", "waiting for staff approval", "human requested", "limit reached",
           "waiting for the customer", "resolved/idle"}
    assert six <= set(LABELS.values())
    for state, detail in LABELS:
        assert label(state, detail) == LABELS[(state, detail)]
    assert URGENCY[("needs_staff", "approval")] < URGENCY[("ai", "working")] < URGENCY[("resolved", "")]
