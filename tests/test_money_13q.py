"""Issue 38 (money-13q): a money question is answered with what it asks. The next payment asked
beside a plan's name or a period is the payment's day and amount (not the price list, not a
change offered); a day of this month is counted on the business data's calendar; a change asked
for with its price asked says the price before the gate's question; a change asked about with
its price asked says the price with what the change does; a doubled letter written once
("acount") is read as the word meant; a question about a month's charges stays with billing."""

from __future__ import annotations

from datetime import date

from supportdesk.models.offline import slots
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.intents import _intents_in
from supportdesk.readers.spelling import correction
from tests.money_turns import MONEY, conversation_passes


def test_a_day_of_a_month_named_from_today_is_counted_on_the_calendar_given():
    today = date(2026, 3, 20)
    assert slots.relative_days("what came out on the 15th this month?", today) == [slots.Date(3, 15, 2026)]
    assert slots.relative_days("the 7th of last month", today) == [slots.Date(2, 7, 2026)]
    assert slots.relative_days("due the 2nd of next month", date(2026, 12, 9)) == [slots.Date(1, 2, 2027)]
    assert slots.relative_days("the 31st of last month", today) == []  # February has no 31st
    assert slots.names_relative_day("anything on the 7th this month")
    assert slots.names_a_day_or_month("what did u take on the 7th of this month")
    assert not slots.names_a_day_or_month("what did u take this month")


def test_the_next_payment_asked_beside_a_plan_or_a_period_is_the_payment():
    # The plan or period named is the payment's: no price list, no change.
    for text in ("when's my next team payment and how much?",
                 "our yearly subscription, when does that come out next and what's the amount?"):
        assert asks.read(text).payment, text
        assert set(_intents_in(text)) == {"next_payment"}, text
    # A plan's price asked is still the price; a day of the month named is that day's charge.
    assert not asks.read("how much is team if we paid yearly?").payment
    assert not asks.read("what will i be charged on the 15th?").payment
    # With no time asked and no next one named, the learned reader's payment is not enough
    # ("explain my bill" and "what will that cost me" read next_payment too).
    assert not asks.read("Can you explain my bill? I'm CUS-1007").payment
    assert not asks.read("what will that cost me?").payment
    # The billing period by its noun and the next one: both read.
    assert set(_intents_in("whats my billing cycle and when does the next one start?")) == {"my_plan", "next_payment"}


def test_a_price_asked_in_any_question_of_the_message_is_read():
    assert asks.price_asked("switch us to team but billed annually - whats the total per year?")
    assert asks.price_asked("If I moved from team down to pro, what would I pay and would I lose any of what I already paid?")
    assert not asks.price_asked("upgrade me to team, and when's my next payment?")
    assert not asks.price_asked("switch us to team, billed annually.")  # no question


def test_a_doubled_letter_written_once_is_the_word_meant():
    # "acount" is one edit from "amount" too, and customers write it (so it counts as a word).
    assert correction("acount") == "account"
    assert correction("adress") == "address"
    assert correction("tablet") == "tablet"  # a word of English stays itself


async def test_the_next_team_payment_is_its_day_and_amount_nothing_offered():
    await conversation_passes([{"customer": "when's my next team payment and how much? CUS-1010",
                    "expect": {"agent": "billing", "reply": ["April 22, 2026", "$129.99"],
                               "reply_not": ["Would you like to change your plan", "2027"], "not_tools": MONEY,
                               "context_absent": ["pending_offer"]}}], {"change_plan": 0})


async def test_a_day_of_this_month_is_answered_from_that_days_charge():
    await conversation_passes([{"customer": "what did u take on the 7th of this month CUS-1033",
                    "expect": {"agent": "billing", "reply": ["March 7, 2026", "$129.99"],
                               "reply_not": ["I can help with charges"], "not_tools": MONEY}}])


async def test_a_change_asked_with_its_price_says_the_price_then_runs_on_the_yes():
    await conversation_passes([
        {"customer": "switch us to team but billed annually - whats the total per year? CUS-1005",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["$1,299.99"], "not_tools": MONEY}},
        {"customer": "yes go ahead",
         "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1005", "plan": "team", "billing_period": "annual"}}]}},
    ], {"change_plan": 1})


async def test_a_change_asked_about_with_its_price_says_both_and_offers_nothing():
    await conversation_passes([{"customer": "If I moved from team down to pro, what would I pay and would I lose any of what I already paid? CUS-1021",
                    "expect": {"agent": "billing", "reply": ["$29.99", "refunded"], "reply_not": ["shall i"],
                               "not_tools": MONEY, "context_absent": ["pending_offer"]}}], {"change_plan": 0})


async def test_a_months_charges_asked_with_a_customer_id_stay_with_billing():
    await conversation_passes([{"customer": "whats on my acount for march? CUS-1018",
                    "expect": {"agent": "billing", "reply": ["March 10, 2026", "March 11, 2026"], "not_tools": MONEY}}])
