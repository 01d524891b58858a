"""The issue's seed scenario, end to end through the real desk (runner, store, tools, model)."""

from __future__ import annotations

import pytest

from supportdesk.config import load_desk
from supportdesk.wiring import open_desk
from supportdesk.engine.events import Appended
from supportdesk.items import Confirmation, Decline, Handoff, Message, Offer, ToolCall, ToolResult
from tests.conftest import REPO

MESSAGES = [
    "Hi, I was charged twice for my subscription this month.",
    # Issue 39 §3: the account is named by its email before any of its charges is shown.
    "Yes, I can see two charges of {amount} on March 1st and March 3rd. My email is {email}.",
    "I'd like a refund for the duplicate charge.",
    # Issue 33: a request is not a confirmation of exact arguments; the desk offers the exact
    # charge and amount, and the refund runs on this yes.
    "Yes, please.",
    "The amount is {amount} — can you process that?",
]


EMAILS = {"$29.99": "dana@example.com", "$129.99": "marco@example.com"}


async def run_scenario(db_path, amount: str):
    desk = await open_desk(db_path, load_desk(REPO / "agents.toml"))
    session_id = await desk.runner.new_session()
    turns = []
    for text in MESSAGES:
        items = [e.item async for e in desk.runner.send(session_id, text.format(amount=amount, email=EMAILS[amount])) if isinstance(e, Appended)]
        turns.append(items)
    return desk, session_id, turns


def replies(items):
    return " ".join(i.text for i in items if isinstance(i, Message) and i.role == "agent")


async def test_duplicate_2999_is_refunded_once_by_billing(db_path):
    desk, session_id, turns = await run_scenario(db_path, "$29.99")
    try:
        everything = [i for t in turns for i in t]
        handoffs = [(h.from_agent, h.to_agent, h.handoff_kind) for h in everything if isinstance(h, Handoff)]
        assert handoffs == [("triage", "billing", "route")]
        # One refund ran (the model's own call was held as an offer; the yes ran the offered call).
        ran = {r.call_id for r in everything if isinstance(r, ToolResult) and r.name == "refund_charge" and not r.is_error}
        refunds = [c for c in everything if isinstance(c, ToolCall) and c.call_id in ran]
        assert len(refunds) == 1 and refunds[0].agent == "billing"
        assert refunds[0].arguments["amount"] == pytest.approx(29.99)
        # The store holds exactly one refund, of the March 3rd duplicate.
        stored = await desk.services.customers.refunds("CUS-1001")
        assert [(r["charge_id"], r["amount"], r["agent"]) for r in stored] == [("CH-9004", 29.99, "billing")]
        # The request is answered with an offer naming the charge and the amount; nothing ran yet.
        [offer] = [i for i in turns[2] if isinstance(i, Offer)]
        assert offer.arguments == refunds[0].arguments and "$29.99" in offer.text and "CH-9004" in offer.text
        assert not [r for r in turns[2] if isinstance(r, ToolResult) and r.name == "refund_charge" and not r.is_error]
        # The yes runs it, as offered; it says so, and says so again instead of refunding twice.
        assert [c.offer_id for c in turns[3] if isinstance(c, Confirmation)] == [offer.offer_id]
        assert "refunded $29.99" in replies(turns[3]).lower()
        assert "already" in replies(turns[4]).lower()
        info = await desk.store.get_session(session_id)
        assert info.active_agent == "billing"
        context = {k: e.value for k, e in (await desk.store.context_at(session_id)).items()}
        assert context["category"] == "billing" and context["customer_id"] == "CUS-1001"
        assert context["amounts"] == [29.99] and context["dates"] == ["2026-03-01", "2026-03-03"]  # ISO, the year read off the charges found
    finally:
        await desk.close()


async def test_duplicate_12999_is_escalated_and_refunded_only_by_senior(db_path):
    desk, session_id, turns = await run_scenario(db_path, "$129.99")
    try:
        everything = [i for t in turns for i in t]
        handoffs = [(h.from_agent, h.to_agent, h.handoff_kind) for h in everything if isinstance(h, Handoff)]
        assert handoffs == [("triage", "billing", "route"), ("billing", "senior", "escalate")]
        calls = [c for c in everything if isinstance(c, ToolCall) and c.name == "refund_charge"]
        # Billing, finding the duplicate above its limit, passed it up with the email's turn, and
        # senior asked then (an offer); the request that followed is no yes, so senior asked again
        # (as billing does for $29.99), and the yes ran it. Billing never asked.
        assert [c.agent for c in calls] == ["senior", "senior", "senior"]
        results = [r for r in everything if isinstance(r, ToolResult) and r.name == "refund_charge"]
        assert [r.is_error for r in results] == [True, True, False]  # "not run: needs the customer's yes" twice, then the refund
        assert [h.to_agent for h in turns[1] if isinstance(h, Handoff)] == ["senior"]
        stored = await desk.services.customers.refunds("CUS-1002")
        assert [(r["charge_id"], r["amount"], r["agent"]) for r in stored] == [("CH-9008", 129.99, "senior")]
        # The escalation carries the reason and the amount in the shared context ...
        context = {k: e.value for k, e in (await desk.store.context_at(session_id)).items()}
        assert context["refund_amount"] == 129.99 and context["refund_reason"] == "duplicate charge"
        assert context["customer_id"] == "CUS-1002"
        # ... so senior never asks the customer to repeat anything.
        senior_said = " ".join(i.text for i in everything if isinstance(i, Message) and i.agent == "senior")
        assert "email" not in senior_said.lower() and "refunded $129.99" in senior_said.lower()
        assert (await desk.store.get_session(session_id)).active_agent == "senior"
    finally:
        await desk.close()


async def test_a_replayed_turn_does_not_refund_twice(db_path):
    """A crash after the refund ran but before the turn finished: retrying the turn makes the
    same call under the same turn key, and the store returns the first result instead of
    refunding again."""
    desk, session_id, _ = await run_scenario(db_path, "$29.99")
    try:
        from supportdesk.engine.protocol import StepRequest

        history = await desk.store.latest(session_id, 400)
        # The step that refunded saw the log up to the customer's third message.
        third = [i for i in history if isinstance(i, Message) and i.role == "customer"][2]
        # (The model's question on the second message held a refund call too: an offer the
        # customer answered with a request, which the step after the third message made.)
        first_call = next(c for c in history if isinstance(c, ToolCall) and c.name == "refund_charge" and c.seq > third.seq)
        # What that step saw: the log up to the third message and the gate's reading of it.
        [read] = [i for i in history if isinstance(i, Decline) and i.answer_seq == third.seq]
        before = [i for i in history if i.seq <= read.seq]
        context = {k: e.value for k, e in (await desk.store.context_at(session_id, read.seq)).items()}
        cfg = desk.config
        agent = cfg.agents["billing"]
        request = StepRequest(
            session_id, agent, cfg, desk.runner.tools.specs(agent.tools), [cfg.agents[n] for n in agent.handoffs], before, context
        )
        action = [a async for a in desk.runner.provider.stream(request)][-1]
        assert action.calls[0].call_id == first_call.call_id  # deterministic call ids
        # The act is keyed by the session and the offer the customer confirmed, not the call id:
        # a fresh id (a real model's) replays the first result too.
        [confirmed] = [i for i in history if isinstance(i, Confirmation)]
        [offer] = [i for i in history if isinstance(i, Offer) and i.offer_id == confirmed.offer_id]
        key = f"{session_id}/offer/{offer.offer_id}"
        out = await desk.runner._invoke(
            session_id, agent, "call_fresh_id", "refund_charge", action.calls[0].arguments, context, key=key
        )
        assert out.output["replayed"] is True
        assert len(await desk.services.customers.refunds("CUS-1001")) == 1
    finally:
        await desk.close()
