"""Issue 38 (money-7): the money skill answers what a money question asks, from the business
data: a day named from today counted on the demo calendar, the renewal's date and price, a
plan's price with no change wanted; plans named by what they are, resolved against the price
list; a change at renewal told without the word "change" offered, and made on the yes."""

from __future__ import annotations

from datetime import date

from supportdesk.models.offline import slots
from tests.money_turns import MONEY, conversation_passes


def test_a_day_named_from_today_is_counted_from_the_calendar_given():
    today = date(2026, 3, 20)
    assert slots.relative_days("did you charge me anything yesterday?", today) == [slots.Date(3, 19, 2026)]
    assert slots.relative_days("the day before yesterday, or 3 days ago", today) == [slots.Date(3, 18, 2026), slots.Date(3, 17, 2026)]
    assert slots.relative_days("today's charge", date(2026, 1, 1)) == [slots.Date(1, 1, 2026)]
    assert slots.relative_days("what did i pay in march", today) == []


async def test_yesterday_is_the_demo_calendars_and_its_missing_charge_said():
    # The demo company's today is March 28, 2026 (business/demo.py): dana's yesterday has no charge.
    await conversation_passes([{"customer": "did you charge me anything yesterday? dana@example.com",
                    "expect": {"agent": "billing", "reply": ["I don't see a charge on March 27, 2026"],
                               "reply_not": ["Here is that charge"], "not_tools": MONEY}}])


async def test_the_renewal_asked_about_is_answered_with_its_day_and_price():
    # priya is billed yearly (created in January 2025): the next renewal is January 15, 2027.
    await conversation_passes([{"customer": "is our annual subscription renewing in 2026 or 2027, and what amount? priya@example.com",
                    "expect": {"agent": "billing", "reply": ["January 15, 2027", "$1,299.99"], "not_tools": MONEY}}])


async def test_a_plans_price_asked_with_no_change_wanted_is_the_price_and_nothing_changes():
    await conversation_passes([{"customer": "whats pro if we paid yearly? no switch, just comparing. marco@example.com",
                    "expect": {"agent": "billing", "reply": ["$299.99"], "reply_not": ["I'll move you"], "not_tools": MONEY,
                               "context_absent": ["pending_offer"]}}], {"change_plan": 0})


def test_a_plan_is_found_in_the_price_list_by_its_own_name_or_price():
    from supportdesk.models.offline.skills.money.plans import plan_in_catalogue

    plans = [{"code": "basic", "name": "Basic", "monthly_price": 5.0, "annual_price": 50.0},
             {"code": "crew", "name": "Crew", "monthly_price": 49.0, "annual_price": 490.0}]
    # Names and prices come from the catalogue given, not from the rules' own plan names.
    assert plan_in_catalogue("the big plan for crews please", plans) == "crew"
    assert plan_in_catalogue("put me on the 5.00 one", plans) == "basic"
    assert plan_in_catalogue("the one at 490.00 a year", plans) == "crew"
    assert plan_in_catalogue("my crew's plan, a cheaper one", plans) is None  # their own crew, no plan
    assert plan_in_catalogue("something else", plans) is None


async def test_a_plan_named_by_what_it_is_is_offered_then_made_on_the_yes():
    await conversation_passes([
        {"customer": "could you move me to the plan for teams? dana@example.com",
         "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "ok", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1001", "plan": "team"}}]}},
    ], {"change_plan": 1})


async def test_a_change_at_renewal_told_without_the_word_change_is_offered_then_made():
    # marco is on Team: the plan wanted is the one after "want", not the one complained of.
    await conversation_passes([
        {"customer": "starting next billing cycle we want starter, team is way too much. marco@example.com",
         "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan",
                                                  "arguments": {"customer_id": "CUS-1002", "plan": "starter", "when": "renewal"}}]}},
    ], {"change_plan": 1})


async def test_a_plan_told_before_the_email_is_offered_once_the_email_comes():
    await conversation_passes([
        {"customer": "from my next renewal i want pro, not team anymore.", "expect": {"agent": "billing", "reply": ["email"], "not_tools": MONEY}},
        {"customer": "vera.reyes21@example.com", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "correct", "expect": {"tools": [{"name": "change_plan",
                                                      "arguments": {"customer_id": "CUS-1021", "plan": "pro", "when": "renewal"}}]}},
    ], {"change_plan": 1})
