"""Issue 38 (money-17): money answers said from the data. A plan's price beside the plan and two
plans compared with no "?", the price of a change said before the gate's question, an amount
wanted back refused with why, a supposition ("say i cancel, ...") asked about, nothing offered."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes


def test_an_amount_wanted_back_is_money_back():
    assert cues.REFUND.search("give me the 9.99 back, this is a ripoff")
    assert cues.REFUND.search("can i have those $29.99 back?")
    # (A figure with no cents, or cents not wanted back, is no refund.)
    assert not cues.REFUND.search("i'll be back in 2 days")
    assert not cues.REFUND.search("the 29.99 charge on march 3")


def test_two_plans_priced_with_no_question_mark_ask_their_prices():
    assert "pricing" in _intents_in("pro vs starter monthly, how much each")


def test_the_accounts_own_plan_with_its_price_asks_both():
    assert _intents_in("what are we paying per month on our plan, and which plan is it? CUS-1005") >= {"my_plan", "pricing"}


def test_a_supposition_opening_a_clause_asks_what_the_action_would_do():
    assert asks.asks_what_an_account_action_does("say i cancel, can i still use acme for the rest of the period i already paid?")
    assert not asks.asks_what_an_account_action_does("please cancel my subscription today")


async def test_a_period_change_asked_outright_is_priced_before_the_yes():
    await conversation_passes([
        {"customer": "put me on team billed once a year from now. CUS-1017",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["$1,299.99"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {
            "customer_id": "CUS-1017", "plan": "team", "billing_period": "annual"}}]}},
    ], {"change_plan": 1})


async def test_a_month_never_used_is_refused_with_the_policys_why():
    await conversation_passes([{"customer": "never used it in february, give me the 29.99 back. CUS-1028",
                                "expect": {"agent": "billing", "reply": ["duplicate"], "reply_not": ["shall i refund"],
                                           "context_absent": ["pending_offer"], "not_tools": MONEY}}], {"refund_charge": 0})


def test_a_price_read_between_pricing_and_the_next_payment_is_the_plans_price():
    # (The desk intents reader reads "what do i pay for it" half pricing, half next payment:
    # together they ask what the plan costs.)
    assert _intents_in("what plan do i have and what do i pay for it") >= {"my_plan", "pricing"}
