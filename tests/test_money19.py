"""Charges told by their days or in a story, the next payment asked in new words, a plan named by
its role (issue 38, the money19 family: evals/money19-tune.jsonl).

Each test guards one reading and fails with it removed:
- a duplicate told by its days after a money word ("a pro payment on the 10th and another one on
  the 11th"), or as a run of days ("taken two days running", "back to back days"): cues.DUPLICATE;
- "the coming debit", "when does my card get hit next": cues.NEXT_PAYMENT;
- "the basic one/tier" is the cheapest plan, "the Basic plan" still a name the desk lacks: cues._LOWEST;
- "i only need the entry level plan" wants a plan, no disclaimer (cues.DISCLAIMS_ACTION);
- an end of the price list with a plan's noun routes to billing however the story leans
  (cues.PLAN_END_NAMED in triage).
Every money action is still offered first and made only on the yes.
"""

from __future__ import annotations

import pytest

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import conversation_passes, not_run

@pytest.mark.parametrize("text", [
    "there's a starter charge on the 5th and again on the 6th",
    "my pro payment on the 10th and then another one on the 11th",
    "the subscription was taken two days running",
    "billed back to back days for starter",
    "the fee came out on consecutive days",
])
def test_a_duplicate_told_by_its_days_is_a_duplicate(text):
    assert "duplicate" in _intents_in(text)


@pytest.mark.parametrize("text", [
    "I logged in on the 3rd and again on the 4th",
    "the app crashed two days running",
    "what was charged on the 1st and the 3rd?",
])
def test_days_without_a_money_word_or_a_repeat_are_no_duplicate(text):
    assert not cues.DUPLICATE.search(text)


@pytest.mark.parametrize("text", ["CUS-1013 coming debit: date and amount please", "what date does my card get hit next, and how much"])
def test_the_next_payment_in_new_words(text):
    assert cues.NEXT_PAYMENT.search(text)


def test_a_plan_next_to_something_is_no_next_payment():
    assert not cues.NEXT_PAYMENT.search("the team plan is billed next to the pro one on my statement")


def test_the_basic_one_is_the_cheapest_plan_but_the_basic_plan_is_a_name():
    assert cues.plan_step("move me to the basic one please") == "lowest"
    assert cues.plan_step("the basic tier is plenty for us") == "lowest"
    assert cues.plan_step("downgrade from Pro to the Basic plan") != "lowest"


def test_only_needing_a_plan_by_its_place_is_no_disclaimer():
    assert not cues.DISCLAIMS_ACTION.search("i really only need the entry level plan you offer")
    assert cues.DISCLAIMS_ACTION.search("i only need the price of team")


async def test_a_duplicate_told_by_two_days_is_offered_then_refunded_on_yes():
    await conversation_passes([
        {"customer": "there is a pro payment on the 15th and another one on the 16th on my card", "expect": {"not_tools": not_run()}},
        {"customer": "yara.novak24@example.com", "expect": {"offers": ["refund_charge"], "reply": ["$29.99"], "not_tools": not_run()}},
        {"customer": "yes", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9078", "amount": 29.99}}],
                                        "not_tools": not_run("refund_charge")}},
    ], counts={"refund_charge": 1})


async def test_a_plan_named_by_its_role_in_a_story_goes_to_billing_and_waits_for_yes():
    await conversation_passes([
        {"customer": "hello! i am a designer and i used to share big files with clients but now i mostly work on my own. "
                     "i think the entry-level tier would be enough for me. can you switch me over? CUS-1035",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["Starter"], "not_tools": not_run()}},
        {"customer": "ok", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1035", "plan": "starter"}}],
                                       "not_tools": not_run("change_plan")}},
    ], counts={"change_plan": 1})
