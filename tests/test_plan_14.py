"""Issue 38 (plan-14): a plan change read right. A price asked as a request to be told, with no
"?" ("..., and tell me how much the year costs"), is said with the gate's question; the plan
after a verb of wanting said as the one exchanged for another ("we'd like team swapped for pro")
is the one left, and the plan it goes to is the target."""

from __future__ import annotations

import pytest

from supportdesk.models.offline.skills.money import asks, plans
from tests.money_turns import MONEY, conversation_passes


def test_a_price_asked_as_a_request_to_be_told_is_a_price_asked():
    assert asks.told_questions("switch me to pro billed yearly and tell me how much the year costs") == [
        "tell me how much the year costs"
    ]
    assert asks.price_asked("switch me to pro billed yearly and tell me how much the year costs. CUS-1008")
    assert asks.price_asked("move us to starter, i'd like to know what it comes to per month")


def test_a_request_to_be_told_about_something_else_is_no_price_asked():
    assert not asks.price_asked("move me to team and tell me when it starts")
    assert not asks.price_asked("tell me what you charged me in march")
    assert not asks.price_asked("switch me to pro billed yearly please")  # nothing asked at all


def test_the_plan_a_wanted_plan_is_exchanged_for_is_the_one_wanted():
    assert plans.wanted_plan("from our next renewal we'd like team swapped for pro") == "pro"
    assert plans.wanted_plan("we need team changed to starter at renewal") == "starter"
    assert plans.wanted_plan("we want pro, team is too much") == "pro"
    assert plans.wanted_plan("we want pro for the new hires") == "pro"
    assert plans.wanted_plan("team is too much") is None


@pytest.mark.parametrize(("message", "customer", "reply", "arguments"), [
    # A change with its price asked to be told says the price before the yes.
    ("put me on team billed annually and let me know what a year of it costs. CUS-1013", "CUS-1013", "$1,299.99",
     {"plan": "team", "billing_period": "annual"}),
    # A plan wanted swapped for another at renewal offers the other.
    ("at our next renewal we want team swapped for starter. CUS-1020", "CUS-1020", "Starter",
     {"plan": "starter", "when": "renewal"}),
])
async def test_a_plan_change_is_offered_as_asked_and_made_once_on_yes(message, customer, reply, arguments):
    await conversation_passes([
        {"customer": message,
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": [reply], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {
            "customer_id": customer, **arguments}}]}},
    ], {"change_plan": 1})


@pytest.mark.parametrize(("first", "customer", "price"), [
    ("id prefer to have our starter subscription on annual billing", "CUS-1013", "$99.99"),
    ("i want to move my team subscription to yearly billing", "CUS-1010", "$1,299.99"),
])
async def test_a_plan_change_offered_says_what_it_will_cost(first, customer, price):
    """The price is part of the action the customer says yes to: the offer says it, whether or
    not the change was put as a question (an offer without it was a miss on unseen wording)."""
    await conversation_passes([
        {"customer": first, "expect": {"not_tools": MONEY}},
        {"customer": customer, "expect": {"agent": "billing", "offers": ["change_plan"], "reply": [price], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": customer}}]}},
    ], {"change_plan": 1})
