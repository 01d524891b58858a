"""Issue 38 (dates15): days counted in the customer's words, two charges told by their days in a
long message, a detail corrected after the offer, money back asked for a month the policy does
not refund."""

from __future__ import annotations

from datetime import date

import pytest

from supportdesk.models.offline import slots
from supportdesk.models.offline.skills.money.heard import heard_refund
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes

# The demo calendar's today: a Saturday.
TODAY = date(2026, 3, 28)


@pytest.mark.parametrize(("text", "days"), [
    ("was i charged anything a fortnight ago?", ["2026-03-14"]),
    ("two weeks back did you bill me", ["2026-03-14"]),
    ("3 days back", ["2026-03-25"]),
    ("monday gone something came off my visa", ["2026-03-23"]),
    ("the weekend before last", ["2026-03-14", "2026-03-15"]),
    ("last weekend", ["2026-03-21", "2026-03-22"]),
    ("it came out on the 10th and the 11th", ["2026-03-10", "2026-03-11"]),
    ("this past wednesday", ["2026-03-25"]),
])
def test_days_counted_in_the_customers_words(text, days):
    assert [d.iso() for d in slots.relative_days(text, TODAY)] == days
    assert slots.names_a_day_or_month(text)


def test_a_weekday_in_a_habit_names_no_day():
    assert slots.relative_days("i work mondays gone midnight", TODAY) == []


@pytest.mark.parametrize(("text", "meant"), [
    ("sorry typo, its 7712 not 7721", "7712"),
    ("hang on, i misread it. it ends 3380, not 3308", "3380"),
    ("not 1004 but 1040", "1040"),
    ("it's 1040 instead of 1004", "1040"),
    ("1234 or 5678, not sure", None),  # two told, none taken back: no guess
    ("not 1004", None),
])
def test_the_four_digits_meant_are_those_not_taken_back(text, meant):
    assert slots.four_digits_meant(text) == meant


def test_a_place_after_the_days_a_message_told_points_at_a_day_not_a_plan():
    told = ("sorry for the long note, i keep the books for a small clinic. the team subscription, 129.99, "
            "came out on the 10th and a second time on the 11th. i'd just like the second one reversed")
    assert _intents_in(told) == {"duplicate"}
    # With no days told, the place still names a plan.
    assert "plan" in _intents_in("the team subscription is too big, i'd like the second one")


def test_money_back_asked_of_a_month_named_in_another_clause_is_heard():
    assert heard_refund("january i barely used it, can i get that month back? CUS-1029")
    # A question about a month's charge asks for nothing back.
    assert not heard_refund("how much was my january charge?")
    assert not heard_refund("can i get a copy of my january invoice?")


async def test_a_day_counted_from_today_to_billing_shows_its_charge():
    await conversation_passes([
        {"customer": "monday gone somthing came off my visa, what was it for CUS-1039",
         "expect": {"agent": "billing", "reply": ["March 23, 2026", "$29.99"], "not_tools": MONEY}},
    ], {"refund_charge": 0})


async def test_a_card_corrected_after_its_offer_is_offered_again_and_only_it_runs_on_the_yes():
    await conversation_passes([
        {"customer": "please put my visa ending 7721 on file. priya.berg15@example.com",
         "expect": {"offers": ["update_payment_method"], "reply": ["7721"], "not_tools": MONEY}},
        {"customer": "sorry typo, its 7712 not 7721",
         "expect": {"offers": ["update_payment_method"], "reply": ["7712"], "reply_not": ["nothing has changed"], "not_tools": MONEY}},
        {"customer": "yes",
         "expect": {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1015", "method": "visa ending 7712"}}]}},
    ], {"update_payment_method": 1})


async def test_a_period_corrected_after_a_plan_offer_says_its_price():
    await conversation_passes([
        {"customer": "switch me to pro please CUS-1004", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "wait, i meant the annual one",
         "expect": {"offers": ["change_plan"], "reply": ["$299.99", "billed annually"], "not_tools": MONEY}},
        {"customer": "yes do it",
         "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1004", "plan": "pro", "billing_period": "annual"}}]}},
    ], {"change_plan": 1})


async def test_a_month_barely_used_is_refused_with_why_and_nothing_offered():
    await conversation_passes([
        {"customer": "january i barely used it, can i get that month back? CUS-1029",
         "expect": {"agent": "billing", "reply": ["duplicate", "staff"], "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"refund_charge": 0})
