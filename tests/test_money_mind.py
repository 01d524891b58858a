"""A change of mind keeps what the offer named, and a charge id the account does not hold is
said to be none of its charges (issue 38, evals/mind-6-*). Conversations run the real desk on a
fresh demo database; the two readers are pure functions."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money.plans import corrected_request
from supportdesk.models.offline.skills.money.refunds import charge_ids_not_held
from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method"]


def test_a_correction_naming_the_period_keeps_the_offered_plan():
    said = corrected_request({"customer_id": "CUS-1007", "plan": "pro", "billing_period": "monthly"}, "no, yearly")
    assert cues.plan_request(said) == ("pro", "annual")


def test_a_correction_naming_the_plan_keeps_the_offered_period_and_timing():
    said = corrected_request({"plan": "pro", "billing_period": "annual", "when": "renewal"}, "make it team")
    assert cues.plan_request(said) == ("team", "annual")
    assert cues.AT_RENEWAL.search(said)
    assert not cues.AT_RENEWAL.search(corrected_request({"plan": "pro", "when": "renewal"}, "team, right away"))


def test_charge_ids_the_account_does_not_hold_are_named_in_order():
    charges = [{"id": "CH-9004"}, {"id": "CH-9005"}]
    assert charge_ids_not_held("refund ch 9004 and CH-9999, also ch-9040", charges) == ["CH-9999", "CH-9040"]
    assert charge_ids_not_held("refund CH-9004", charges) == []
    assert charge_ids_not_held("refund the march one", charges) == []


async def test_the_yearly_one_after_a_monthly_offer_keeps_its_plan():
    assert not await converse(
        ("pro costs what, monthly and yearly? grace.tanaka6@example.com", {"agent": "billing", "not_tools": MONEY}),
        ("ok move me to pro monthly", {"offers": ["change_plan"], "not_tools": MONEY}),
        ("no sorry, yearly", {"offers": ["change_plan"], "reply": ["Pro plan", "annually"],
                              "reply_not": ["Starter plan, billed"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1006", "plan": "pro", "billing_period": "annual"}}]}),
    )


async def test_another_plan_after_a_yearly_offer_keeps_the_year():
    assert not await converse(
        ("team and pro, how much per year? nils.costa13@example.com", {"agent": "billing", "not_tools": MONEY}),
        ("go with team, annually", {"offers": ["change_plan"], "not_tools": MONEY}),
        ("hmm, pro instead", {"offers": ["change_plan"], "reply": ["Pro plan", "annually"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1013", "plan": "pro", "billing_period": "annual"}}]}),
    )


async def test_an_unknown_charge_id_is_said_to_be_none_of_the_accounts_and_nothing_else_is_offered():
    assert not await converse(
        ("ch-9500 is a duplicate, refund please. dana@example.com",
         {"agent": "billing", "reply": ["CH-9500 is not a charge on this account"],
          "reply_not": ["Shall I refund", "CH-9004"], "not_tools": MONEY}),
    )


async def test_another_customers_charge_id_reveals_nothing_of_theirs():
    # CH-9040 is another customer's charge: neither offered nor described to Dana.
    assert not await converse(
        ("money back for CH-9040 please, double charged. dana@example.com",
         {"agent": "billing", "reply": ["CH-9040 is not a charge on this account"],
          "reply_not": ["Shall I refund", "$129.99", "March 25, 2026"], "not_tools": MONEY}),
    )
