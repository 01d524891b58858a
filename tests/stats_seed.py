"""A small desk history at fixed times, for the figures tests and the dashboard's snapshots.

Every case a figure has to get right appears once: a conversation that crosses midnight, a
refund held for approval (not made), a failed refund, a call id used twice, an escalation, a
provider error and a limit, an unanswered customer, a session with no items, usage with and
without a model name, an estimate among reported counts, offers to the customer accepted,
declined and expired (issue 33).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from supportdesk.items import Confirmation, Decline, DeclineWhy, Handoff, Message, Notice, Offer, StateChange, ToolCall, ToolResult, pending_text

# "Now" for every test of the figures: a Friday noon, UTC.
NOW = datetime(2026, 3, 20, 12, 0, tzinfo=timezone.utc)


class StepClock:
    """The store's clock, moved by hand: each append is stamped with the time set before it."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def _usage(tokens_in: int, tokens_out: int, model: str | None = None, reported: bool = True) -> dict:
    meta: dict = {"usage": {"input_tokens": tokens_in, "output_tokens": tokens_out, "reported": reported}}
    if model:
        meta["model"] = model
    return meta


def customer(text: str, agent: str = "triage") -> Message:
    return Message(role="customer", text=text, agent=agent)


def answer(agent: str, text: str, **meta) -> Message:
    return Message(role="agent", text=text, agent=agent, meta=meta)


def route(src: str, dst: str, kind: str = "route", **meta) -> Handoff:
    return Handoff(from_agent=src, to_agent=dst, reason=f"{src} to {dst}", handoff_kind=kind, agent=src, meta=meta)


def call(agent: str, call_id: str, name: str, **arguments) -> ToolCall:
    return ToolCall(call_id=call_id, name=name, arguments=arguments, agent=agent)


def result(agent: str, call_id: str, name: str, output: str, is_error: bool = False, held: bool = False) -> ToolResult:
    return ToolResult(call_id=call_id, name=name, output=output, is_error=is_error, agent=agent, awaits_approval=held)


def resolve(person: str = "lee") -> StateChange:
    """Staff mark the conversation resolved: a resolution is this, not an agent's last word."""
    return StateChange(state="resolved", person=person)


def offer(agent: str, offer_id: str, tool: str, action: str, **arguments) -> Offer:
    return Offer(offer_id=offer_id, tool=tool, arguments=arguments, action=action, text=f"Shall I {action}?", agent=agent)


def accepted(agent: str, offer_id: str, tool: str, **arguments) -> Confirmation:
    return Confirmation(offer_id=offer_id, tool=tool, arguments=arguments, agent=agent)


def declined(agent: str, offer_id: str, tool: str, why: DeclineWhy = "no") -> Decline:
    return Decline(offer_id=offer_id, tool=tool, why=why, agent=agent)


def notice(agent: str, kind: str, text: str = "") -> Notice:
    return Notice(notice_kind=kind, text=text or kind, agent=agent)


# Each session: (id, entry agent, status, [(seconds before NOW, items appended together), ...]).
# Session rows are created at the time of their first step.
HOUR, DAY = 3600, 86400
SESSIONS: list[tuple[str, str, str, list[tuple[float, list]]]] = [
    # Today: a duplicate charge refunded by billing (level 1), answered in 2.5 s, done in 40 s.
    ("s-today-refund", "triage", "open", [
        (2 * HOUR, [customer("I was charged twice")]),
        (2 * HOUR - 2.5, [answer("triage", "Passing you to Billing", **_usage(400, 40, "gpt-test")),
                          route("triage", "billing", **_usage(10, 5, "gpt-test"))]),
        (2 * HOUR - 20, [offer("billing", "o1", "refund_charge", "refund 29.00 of CH-1", charge_id="CH-1", amount=29.0),
                         accepted("billing", "o1", "refund_charge", charge_id="CH-1", amount=29.0),
                         call("billing", "c1", "refund_charge", charge_id="CH-1", amount=29.0, reason="duplicate charge")]),
        (2 * HOUR - 21, [result("billing", "c1", "refund_charge", '{"refund_id": "RF-1", "amount": 29.0}')]),
        (2 * HOUR - 40, [answer("billing", "Refunded 29.00", **_usage(600, 60)), resolve()]),
    ]),
    # Started yesterday evening, back this morning: crosses midnight; a limit today.
    ("s-midnight", "triage", "open", [
        (14 * HOUR, [customer("My app crashes")]),
        (14 * HOUR - 12, [route("triage", "technical"), answer("technical", "Try reinstalling")]),
        (3 * HOUR, [customer("Still crashing")]),
        (3 * HOUR - 1, [notice("technical", "limit"), route("technical", "triage", "return"),
                        answer("triage", "A colleague will look", **_usage(50, 5, reported=False)), resolve()]),
    ]),
    # Three days ago: technical escalates to senior, whose credit waits for staff approval.
    ("s-approval", "triage", "awaiting_approval", [
        (3 * DAY, [customer("Service was down all week")]),
        (3 * DAY - 45, [route("triage", "technical")]),
        (3 * DAY - 90, [answer("technical", "Let me get a senior"), route("technical", "senior", "escalate")]),
        (3 * DAY - 100, [call("senior", "k1", "issue_credit", customer_id="CUS-1", amount=120.0, reason="outage"),
                         result("senior", "k1", "issue_credit", pending_text("credits of 120.00 need staff"), held=True),
                         notice("senior", "approval_requested")]),
    ]),
    # Ten days ago: billing escalates, senior refunds 300 after approval; the call id c1 comes
    # twice (the second call is the one the result answers); a failed refund in between.
    ("s-senior-refund", "triage", "open", [
        (10 * DAY, [customer("Refund my annual plan please")]),
        (10 * DAY - 8, [route("triage", "billing")]),
        (10 * DAY - 30, [call("billing", "c1", "refund_charge", charge_id="CH-9", amount=300.0, reason="duplicate charge"),
                         result("billing", "c1", "refund_charge", "refused by policy: above the level-1 limit", True),
                         answer("billing", "I'll escalate this"), route("billing", "senior", "escalate")]),
        (10 * DAY - 600, [call("senior", "c1", "refund_charge", charge_id="CH-9", amount=300.0, reason="duplicate charge"),
                          result("senior", "c1", "refund_charge", '{"refund_id": "RF-9", "amount": 300.0}'),
                          answer("senior", "Refunded 300.00", **_usage(900, 90, "gpt-test"))]),
        (10 * DAY - 5 * HOUR, [customer("Thanks!"), answer("senior", "You're welcome"), resolve()]),
    ]),
    # Forty days ago: the model server failed and nobody answered.
    ("s-provider-error", "triage", "open", [
        (40 * DAY, [customer("Hello?"), notice("triage", "provider_error")]),
    ]),
    # Twenty days ago: a person was asked for; billing credited 5.50 via senior (priced usage).
    ("s-human", "triage", "needs_human", [
        (20 * DAY, [customer("I want a person")]),
        (20 * DAY - 3, [route("triage", "billing"), answer("billing", "A person will join"), notice("billing", "human_requested")]),
        (20 * DAY - 5, [offer("billing", "o7", "cancel_subscription", "cancel the subscription of CUS-7", customer_id="CUS-7"),
                        declined("billing", "o7", "cancel_subscription", "no"),
                        offer("billing", "o8", "issue_credit", "credit 9.00 to CUS-7", customer_id="CUS-7", amount=9.0),
                        declined("billing", "o8", "issue_credit", "expired"),
                        offer("billing", "o9", "issue_credit", "credit 5.50 to CUS-7", customer_id="CUS-7", amount=5.5),
                        accepted("billing", "o9", "issue_credit", customer_id="CUS-7", amount=5.5)]),
        (20 * DAY - 9, [call("billing", "c7", "issue_credit", customer_id="CUS-7", amount=5.5, reason="goodwill"),
                        result("billing", "c7", "issue_credit", '{"credit_id": "CR-7", "amount": 5.5}')]),
    ]),
]
# A session opened this morning with nothing in it yet (started, but no activity).
EMPTY_SESSION = ("s-empty", "triage", 1 * HOUR)


async def seed_desk_history(store) -> None:
    """Write SESSIONS and EMPTY_SESSION through the store's contract, at their fixed times."""
    saved = store.clock
    clock = StepClock()
    store.clock = clock
    try:
        for sid, entry, status, steps in SESSIONS:
            for i, (ago, items) in enumerate(steps):
                clock.now = NOW - timedelta(seconds=ago)
                if i == 0:
                    await store.create_session(entry, session_id=sid, first=items)
                else:
                    await store.append(sid, items)
            if status != "open":
                await store.set_status(sid, status)
        sid, entry, ago = EMPTY_SESSION
        clock.now = NOW - timedelta(seconds=ago)
        await store.create_session(entry, session_id=sid)
    finally:
        store.clock = saved
