"""Issue 38 (money-18): money over several turns. A new card told before the account, a question
between an offer and its yes, a plan's period priced before the gate, days counted back from the
demo's today, a long story with a duplicate in it."""

from __future__ import annotations

from datetime import date

from supportdesk.models.offline import cues
from supportdesk.models.offline import slots as slot_extraction
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes


def test_a_new_card_told_by_its_last_four_in_any_words_is_the_card_to_put_on_file():
    # The payment cue reads the last four the way `card_description` does ("ends in", "last 4 digits").
    assert cues.PAYMENT_METHOD.search("switching banks, my new amex ends in 4471, bill that from now on")
    assert cues.PAYMENT_METHOD.search("got a new visa, last 4 digits 2208, use that one")
    assert cues.card_description("got a new visa, last 4 digits 2208") == "visa ending 2208"
    # (A card named with no change word is no request to change it.)
    assert "payment" not in _intents_in("the visa ending 4242 was charged twice")


async def test_a_card_told_before_the_account_is_remembered_for_the_offer():
    await conversation_passes([
        {"customer": "got a new mastercard, last 4 digits 8830, use it from now on", "expect": {"agent": "billing", "not_tools": MONEY}},
        {"customer": "CUS-1009", "expect": {"offers": ["update_payment_method"], "reply": ["8830"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "update_payment_method", "arguments": {
            "customer_id": "CUS-1009", "method": "mastercard ending 8830"}}]}},
    ], {"update_payment_method": 1})


async def test_a_question_about_a_cancellation_offered_is_answered_and_the_offer_stands():
    await conversation_passes([
        {"customer": "please cancel my subscription. iris.haddad40@example.com",
         "expect": {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": MONEY}},
        # (The end of the period paid for is the account's next billing day, April 21.)
        {"customer": "when would i lose access then?",
         "expect": {"offers": ["cancel_subscription"], "reply": ["April 21, 2026"], "not_tools": MONEY}},
        {"customer": "alright go on", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1040"}}]}},
    ], {"cancel_subscription": 1})


async def test_a_question_opened_with_wait_keeps_a_plan_change_offered_and_a_no_still_refuses_it():
    await conversation_passes([
        {"customer": "move me up to pro please, CUS-1009", "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "wait, does anything i paid for get lost if i switch?",
         "expect": {"offers": ["change_plan"], "reply": ["isn't refunded or prorated"], "not_tools": MONEY}},
        {"customer": "no, leave it", "expect": {"not_tools": MONEY, "reply": ["your plan stays as it is"]}},
    ], {"change_plan": 0})


def test_a_year_paid_at_once_is_the_annual_period():
    assert cues.plan_request("team for a full year paid in one go, how much?") == ("team", "annual")
    assert cues.plan_request("what is pro for a whole year") == ("pro", "annual")
    assert cues.plan_request("starter, a year up front") == ("starter", "annual")
    # (A year said of the past is no period asked for.)
    assert cues.plan_request("we've had pro for a year now") == ("pro", None)


def test_days_counted_back_from_today_and_the_days_said_together():
    today = date(2026, 3, 28)  # a Saturday
    assert [d.iso() for d in slot_extraction.relative_days("a week ago", today)] == ["2026-03-21"]
    assert [d.iso() for d in slot_extraction.relative_days("two weeks ago", today)] == ["2026-03-14"]
    assert [d.iso() for d in slot_extraction.relative_days("last weekend", today)] == ["2026-03-21", "2026-03-22"]
    # On a Sunday, "last weekend" is the one before the weekend it is.
    assert [d.iso() for d in slot_extraction.relative_days("last weekend", date(2026, 3, 29))] == ["2026-03-21", "2026-03-22"]
    assert [d.iso() for d in slot_extraction.relative_days("earlier this week", today)] == [f"2026-03-{n}" for n in range(23, 28)]
    assert [d.iso() for d in slot_extraction.relative_days("at the start of the month", today)] == [f"2026-03-0{n}" for n in range(1, 8)]
    assert [d.iso() for d in slot_extraction.relative_days("at the start of last month", today)] == [f"2026-02-0{n}" for n in range(1, 8)]
    # A day counted back names a charge's day, as a date does ("what came off my card a week ago?").
    assert slot_extraction.names_a_day_or_month("a week ago something came off my card, what was it?")


async def test_a_day_counted_back_with_no_charge_on_it_says_so_and_lists_the_charges():
    await conversation_passes([
        {"customer": "what did acme bill me earlier this week? CUS-1010",
         "expect": {"agent": "billing", "reply": ["between March 23, 2026 and March 27, 2026", "March 22, 2026", "$129.99"], "not_tools": MONEY}},
    ])


async def test_a_week_ago_finds_that_days_charge():
    await conversation_passes([
        {"customer": "a week ago something from acme came off my card, what was it? dev.lindqvist35@example.com",
         "expect": {"agent": "billing", "reply": ["March 21, 2026", "$29.99"], "not_tools": MONEY}},
    ])
