"""Issue 38 (money-24): held-24's money misses by kind. A plan only mentioned in a story ("the team
features") yields to an end of the price list asked for ("the cheapest plan"): that plan is
offered and made only on the customer's yes; a plan named as where to go still decides."""

from __future__ import annotations

from tests.money_turns import MONEY, conversation_passes


async def test_the_cheapest_plan_asked_after_a_plan_mentioned_is_offered_and_made_on_yes():
    await conversation_passes([
        {"customer": "we used all the team features when we were ten people, now it's two of us. "
                     "please move us to the cheapest plan you have. CUS-1020",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["Starter"], "reply_not": ["which plan"],
                    "not_tools": MONEY}},
        {"customer": "yes please", "expect": {"tools": [{"name": "change_plan", "arguments": {
            "customer_id": "CUS-1020", "plan": "starter"}}], "reply_not": ["which plan"]}},
    ], {"change_plan": 1})


async def test_a_plan_named_as_where_to_go_is_not_overruled_by_an_end_of_the_list():
    # "pro" is the target; "cheapest" only describes the old wish, so pro is offered, not starter.
    await conversation_passes([
        {"customer": "we wanted the cheapest plan at first but please move us to pro now. CUS-1013",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["Pro"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {
            "customer_id": "CUS-1013", "plan": "pro"}}]}},
    ], {"change_plan": 1})
