"""What was said stays said and the new question is the one answered; a charge id named that the
account does not hold is said plainly; money back asked with a verb of returning its amount is
heard, and refused with the policy's reason (issue 38, evals/money-16b-*). Conversations run the
real desk on a fresh demo database; the rules are pure functions."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money import asks
from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method"]


def test_a_failed_payment_told_with_its_month_or_asked_with_its_auxiliary_first():
    assert asks.payment_failed_told("and why did my payment in march bounce?")
    assert asks.payment_failed_told("why didn't the march payment go through on it?")
    # (a payment that went through, and a card refused elsewhere, tell of no failed payment)
    assert not asks.payment_failed_told("my payment in march went fine")
    assert not asks.payment_failed_told("my card was declined at a restaurant and payment wouldn't go through")


def test_money_back_asked_with_a_verb_of_returning_its_amount():
    assert cues.REFUND.search("i never used it in february, pls return the 29.99 you took")
    assert cues.REFUND.search("so i'd like january's 29.99 returned")
    assert not cues.REFUND.search("i returned the laptop, 2 of them")


def test_the_upcoming_payment_is_the_next_one():
    assert cues.NEXT_PAYMENT.search("date of my upcoming payment plus the amount, please")


async def test_a_charge_id_asked_about_that_the_account_does_not_hold_is_said_plainly():
    assert not await converse(
        ("there's a charge CH-4410 i don't understand, please check it. tara.haddad19@example.com",
         {"agent": "billing", "reply": ["CH-4410 is not a charge on this account", "March 8, 2026"],
          "reply_not": ["Shall I refund"], "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


async def test_a_follow_up_question_after_the_card_is_answered_as_asked():
    assert not await converse(
        ("vera.reyes21@example.com what card is on my account right now?", {"agent": "billing", "reply": ["5454"], "not_tools": MONEY}),
        ("ok and when do you charge it next", {"reply": ["April 21, 2026"], "reply_not": ["payment method on your account"], "not_tools": MONEY}),
    )


async def test_the_next_one_after_the_card_is_the_next_payment():
    assert not await converse(
        ("quinn.adams16@example.com which card am i paying with at the moment", {"agent": "billing", "reply": ["1881"], "not_tools": MONEY}),
        ("and the date you'll take the next one?", {"reply": ["April 7, 2026"], "reply_not": ["payment method on your account"], "not_tools": MONEY}),
    )


async def test_it_after_both_days_of_a_duplicated_pair_is_the_repeat():
    assert not await converse(
        ("the starter fee came out of my account twice, on the 5th and on the 6th of march", {"not_tools": MONEY}),
        ("it's grace.tanaka6@example.com", {"offers": ["refund_charge"], "reply": ["$9.99"], "reply_not": ["More than one charge"], "not_tools": MONEY}),
        ("yep, refund that one", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9021", "amount": 9.99}}]}),
    )


async def test_an_unused_month_asked_back_with_a_verb_of_returning_is_refused_with_why():
    assert not await converse(
        ("i never used acme at all in february, pls return the 29.99 you took. CUS-1028",
         {"agent": "billing", "reply": ["can't refund", "duplicate"], "reply_not": ["Shall I refund"],
          "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


async def test_which_plan_asked_of_the_invoice_shown_is_the_plan():
    assert not await converse(
        ("jonas.klein9@example.com can u tell me my last invoice number", {"agent": "billing", "reply": ["INV-5027"], "not_tools": MONEY}),
        ("and which plan is that invoice for?", {"reply": ["Starter plan"], "reply_not": ["INV-5025"], "not_tools": MONEY}),
    )
