"""Issue 38 (money-17, round 17): what was said stays said and a change of mind is read as one. A
change the customer tells of (made, denied or forgotten) asks for no change; the plan named as
where to go is the plan asked for; a duplicate's refund names both days of its pair, so "yes the
second one" is the yes to it; the payment method already on file named after a no keeps it; a
clause's opening "so" hides no request; why an invoice is unpaid is its failed payment."""

from __future__ import annotations

import pytest

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money import asks, heard
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes, passes


def test_a_change_the_customer_tells_of_asks_for_none():
    # Denied beside a double charge: the duplicate is what is asked about, not an upgrade.
    assert "plan" not in _intents_in(
        "i saw 29.99 for pro on the 10th and again on the 11th. i didn't upgrade or buy anything, please return the extra one"
    )
    # Forgotten: the renewal's money is asked back, the cancellation is not asked for.
    assert "cancel" not in _intents_in("i forgot to cancel our team plan before it renewed, can i have that month refunded?")
    # Done before: the days left are asked back, no plan change.
    assert _intents_in("i went down from pro to starter in the middle of march, pls refund me the pro days i didnt use") == {"refund"}
    # Asked for, the same words still ask ("changed my mind" is no change told, "what if we went"
    # supposes one, and what is left of a message is read as it was said: "instead of monthly").
    assert "plan" in _intents_in("i changed my mind put me on pro")
    assert "plan" in _intents_in("what if we just went down to pro instead of leaving? do that")
    assert "plan" in _intents_in("i didn't know, so keep whatever plan i'm on but make it one annual bill instead of monthly")
    assert "cancel" in _intents_in("please cancel our team plan")


def test_the_plan_named_as_where_to_go_is_the_plan_asked_for():
    assert cues.plan_request("want to go down to starter, pro is too pricey for what i actually use")[0] == "starter"
    assert cues.plan_request("could we drop down to the starter plan? team is more than we need now")[0] == "starter"
    # Taken back between them: the plan named last is the one meant.
    assert cues.plan_request("switch me to team, no wait, pro")[0] == "pro"
    assert cues.plan_request("from team to pro")[0] == "pro"


def test_a_request_opened_by_so_is_heard():
    assert heard.heard_refund("changed jobs in feb and never logged into acme after that, so pls give back february's payment")


def test_why_an_invoice_is_unpaid_asks_about_its_failed_payment():
    assert asks.payment_failed_told("why does the march one say unpaid?")
    assert not asks.payment_failed_told("can i see our unpaid invoices")


async def test_yes_the_second_one_refunds_the_duplicate_a_senior_offered():
    await conversation_passes([
        {"customer": "you charged our team subscription on 24 march and again on 25 march", "expect": {"not_tools": MONEY}},
        {"customer": "maya.farouk12@example.com",
         "expect": {"offers": ["refund_charge"], "reply": ["March 24, 2026 and March 25, 2026"], "not_tools": MONEY}},
        {"customer": "yes the second one please",
         "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9040", "amount": 129.99}}],
                    "reply_not": ["just to be sure"]}},
    ], {"refund_charge": 1})


@pytest.mark.parametrize("reply", ["nah forget it, leave it on paypal", "leave it on paypal", "actually stay on paypal"])
async def test_the_method_on_file_named_after_an_offer_keeps_it(reply):
    # ("nah forget it" is the no itself, no matter for another team: specialist._only_turns_down.)
    await conversation_passes([
        {"customer": "CUS-1040 switch my payment to mastercard ending 3030",
         "expect": {"agent": "billing", "offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": reply,
         "expect": {"agent": "billing", "reply": ["nothing"], "reply_not": ["shall i"],
                    "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"update_payment_method": 0})


async def test_a_month_forgotten_to_cancel_offers_no_cancellation():
    await conversation_passes([
        {"customer": "i forgot to cancel our team plan before it renewed on the 21st, can i have that month refunded? CUS-1021",
         "expect": {"agent": "billing", "reply_not": ["shall i"], "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"refund_charge": 0, "cancel_subscription": 0})


def test_a_plan_named_from_when_is_a_plan_change_and_a_card_so_named_the_cards():
    # The desk intents reader heard "from now on" as a card change only (evals/money-lines-17b-tune.jsonl).
    assert asks.plan_needed("starter for the two of us from now on please, CUS-1016")
    assert asks.plan_needed("team for our office from now on")
    assert "payment" in _intents_in("the visa ending 1881 from now on please, CUS-1016")
    assert not asks.plan_needed("team is what we need now, the amex ending 3007 from now on")


async def test_the_method_on_file_named_beside_another_is_the_one_left():
    """held-23: "paypal didn't work for march, bill my amex ending 1009 from now on" with paypal on
    file was answered "already paypal, nothing to change": the method on file named beside another
    is the one being left, however its failing is told; the other is offered, and runs on the yes."""
    await passes({"name": "t", "turns": [
        {"customer": "maya.farouk12@example.com our paypal keeps bouncing, charge the visa ending 7788 instead", "expect": {
            "agent": "billing", "offers": ["update_payment_method"], "reply": ["7788"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1012", "method": "visa ending 7788"}}]}},
    ], "expect": {"tool_counts": {"update_payment_method": 1}}})
