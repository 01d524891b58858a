"""The money skill answers what a message asks as a whole (issue 38, evals/money-11-*): a charge id
the account does not hold however short, a refund asked in words only the desk's own reader
hears, a price set against what the customer pays now, a change with its price, and two reads in
one message. Conversations run the real desk on a fresh demo database."""

from __future__ import annotations

from supportdesk.models.offline.skills.money.refunds import charge_ids_not_held
from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method"]


def test_a_short_charge_id_is_still_an_id_the_account_may_not_hold():
    charges = [{"id": "CH-9004"}]
    assert charge_ids_not_held("refund CH-12, it was double", charges) == ["CH-12"]
    assert charge_ids_not_held("refund ch 2 please", charges) == []  # spaced and short: words


async def test_a_short_unknown_charge_id_is_named_not_the_policy():
    assert not await converse(
        ("give me back CH-31, you took it twice. quinn.adams16@example.com",
         {"agent": "billing", "reply": ["CH-31 is not a charge on this account"],
          "reply_not": ["Shall I refund", "our policy allows"], "not_tools": MONEY}),
    )


async def test_money_back_in_the_customers_words_for_a_disputed_charge_is_refused_with_the_reason():
    # CH-9046 (March 15, Team) is under a bank dispute: asked back in words no refund cue lists.
    assert not await converse(
        ("CUS-1014, i want the 129.99 from march 15 given back. my card issuer is checking it too",
         {"agent": "billing", "reply": ["disput", "refund"], "reply_not": ["Shall I refund"], "not_tools": MONEY}),
    )


async def test_a_change_asked_with_its_price_is_offered_with_the_price_and_the_yes_stays_with_billing():
    assert not await converse(
        ("can i move pro to yearly billing? it should work out lower, correct? liam.larsen11@example.com",
         {"agent": "billing", "offers": ["change_plan"], "reply": ["$299.99"], "not_tools": MONEY}),
        ("perfect, please do", {"agent": "billing", "reply_not": ["other thing you mentioned"],
                                "tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1011", "plan": "pro", "billing_period": "annual"}}]}),
    )


def test_a_month_named_in_a_request_for_a_document_is_no_refund():
    from supportdesk.models.offline.skills.money.heard import heard_refund

    assert not heard_refund("could you send me the february one")  # the desk's reader alone reads refund
    assert heard_refund("i want the 129.99 from march 15 given back")  # both readers lean to refund


async def test_a_price_asked_with_the_account_is_set_against_what_they_pay_now():
    # CUS-1016 is on Starter, monthly ($9.99).
    assert not await converse(
        ("what's the damage per month for pro compared with my bill today? CUS-1016",
         {"agent": "billing", "reply": ["$29.99", "$9.99", "$20.00"], "reply_not": ["Shall I"], "not_tools": MONEY}),
    )


async def test_another_plan_beside_the_current_one_gets_both_prices():
    assert not await converse(
        ("what would team set me back monthly next to my current plan? CUS-1016",
         {"agent": "billing", "reply": ["$129.99", "$9.99", "Starter"], "reply_not": ["Shall I"], "not_tools": MONEY}),
    )


async def test_two_reads_in_one_message_the_period_and_the_last_payment_are_both_answered():
    # CUS-1016: Starter, monthly; its latest charge March 7, 2026.
    assert not await converse(
        ("do you charge me monthly or yearly? also when did my previous payment go out? CUS-1016",
         {"agent": "billing", "reply": ["monthly", "March 7, 2026"], "reply_not": ["Shall I"], "not_tools": MONEY}),
    )


def test_the_last_payment_is_asked_in_the_past_and_the_next_is_not():
    from supportdesk.models.offline.skills.money.intents import asks_last_payment

    assert asks_last_payment("and what day did my latest payment go through?")
    assert not asks_last_payment("when is my next payment due?")
