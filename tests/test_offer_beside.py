"""A yes after a reply that asked two things confirms the offer only when it names the offer's
action (the desk's gate, engine/confirmation.py: `asked_beside`, `names_the_action`).

Since round 20 a refund or cancellation asked beside a trouble is offered in the same reply as the
trouble's steps ("let me know whether that works"). A customer's "great, all sorted now" then
reports on the steps; read as a yes it ran a refund nobody asked for. The gate now asks again
unless the yes names the action ("yes refund it") or is assent alone ("yes", "sure go ahead": the
offer's question is asked last). Each test fails with the guard removed.
"""

from __future__ import annotations

import pytest

from supportdesk.engine.confirmation import asked_beside, names_the_action
from supportdesk.items import Confirmation, Message, Offer, ToolResult
from tests.test_offline_moves import talk_raw

TROUBLE_AND_DUPLICATE = (
    "push notifications stopped on my android phone. also you charged my starter plan twice, "
    "on the 5th and the 6th. grace.tanaka6@example.com"
)


def test_a_yes_names_the_action_by_its_verb():
    offered = "I found it. The one on March 6, 2026 is a duplicate. Would you like me to refund it?"
    assert names_the_action("yes refund it", offered)
    assert names_the_action("yep, please refund", offered)
    assert not names_the_action("great, all sorted now", offered)
    assert not names_the_action("yes", offered)


def test_a_question_of_another_agent_in_the_offers_turn_is_asked_beside():
    offer = Offer(offer_id="o1", tool="refund_charge", action="refund $9.99", text="Would you like me to refund it?", agent="billing")
    steps = Message(role="agent", agent="technical", text="1. Check Settings. Let me know whether that works.")
    own = Message(role="agent", agent="billing", text="Would you like me to refund it?")
    assert asked_beside([steps, own], offer)
    assert not asked_beside([own], offer)  # the offering agent's own question is the offer's


@pytest.mark.parametrize("report", ["great, all sorted now", "lovely, all good with the phone now", "yes they work again!"])
async def test_a_report_on_the_steps_runs_no_refund_offered_beside_them(tmp_path, report):
    first, then = await talk_raw(tmp_path, TROUBLE_AND_DUPLICATE, report)
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in first)
    assert not any(isinstance(i, Confirmation) for i in then)
    assert not any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)


@pytest.mark.parametrize("yes", ["yes refund it", "yes", "sure go ahead"])
async def test_a_yes_that_names_the_refund_or_says_only_yes_runs_it(tmp_path, yes):
    _, then = await talk_raw(tmp_path, TROUBLE_AND_DUPLICATE, yes)
    assert any(isinstance(i, Confirmation) and i.tool == "refund_charge" for i in then)
    assert any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)
