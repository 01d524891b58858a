"""Held-26's money kinds (issue 38, the money26 family: evals/money26-tune.jsonl).

Each test guards one reading and fails with it removed:
- matters numbered off with "1)" / "2)" are split like "first, ... second" (triage._ISSUE_SPLIT):
  the money matter is offered, the trouble follows;
- a plan one step from the customer's own routes to billing however the router leans
  (cues.PLAN_ONE_STEP in triage's `names_a_plan`), and the plan moved "up a notch" is a step
  (cues._PLAN_MOVED);
- a no to the offer just closed, with its reason ("not worth the hassle"), stays the offer's answer
  (Specialist._only_turns_down);
- a sentence asking when the next payment is makes the rest its context
  (heard.next_payment_asked): no learned duplicate, the next payment answered.
Every money action is still offered first and made only on the yes.
"""

from __future__ import annotations

from supportdesk.models.offline import cues, triage
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import conversation_passes, not_run

def test_matters_numbered_off_are_pieces_of_their_own():
    pieces = [p for p in triage._pieces("1) you charged me twice in march 2) the app freezes on my phone") if p.strip()]
    assert len(pieces) == 2
    # a price is no list marker
    assert len([p for p in triage._pieces("i paid 29.99) for pro") if p.strip()]) == 1


async def test_a_numbered_double_charge_beside_a_crash_is_offered_first():
    await conversation_passes([
        {"customer": "two problems: 1) acme took 29.99 twice this march 2) the windows app freezes when i sync. dana@example.com",
         "expect": {"agent": "billing", "offers": ["refund_charge"], "not_tools": not_run()}},
        {"customer": "yes", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9004"}}],
                                       "not_tools": not_run("refund_charge")}},
    ])


def test_the_plan_moved_a_notch_is_one_step():
    assert cues.plan_step("please take our subscription up one notch") == "up1"
    assert cues.plan_step("move my plan down a level") == "down1"
    assert cues.plan_step("turn the volume up a notch") is None


async def test_a_plan_one_step_up_in_slang_is_billing_and_offered():
    await conversation_passes([
        {"customer": "can u push me up a tier? jonas.klein9@example.com",
         "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": not_run()}},
        {"customer": "yes", "expect": {"agent": "billing", "tools": [{"name": "change_plan", "arguments": {"plan": "pro"}}],
                                       "not_tools": not_run("change_plan")}},
    ])


async def test_a_no_with_its_reason_stays_with_the_offer():
    await conversation_passes([
        {"customer": "you charged me 29.99 twice for march, yara.novak24@example.com",
         "expect": {"agent": "billing", "offers": ["refund_charge"], "not_tools": not_run()}},
        {"customer": "nah forget it, not worth my time", "expect": {"agent": "billing", "not_tools": not_run()}},
    ])


def test_the_next_one_asked_makes_the_day_told_its_context():
    assert _intents_in("it normally comes out mid month. what date is the next one?") == {"next_payment"}
    assert _intents_in("i was billed on the 21st last month. when is the next one?") == {"next_payment"}
    # a duplicate told in the rules' words is still one
    assert "duplicate" in _intents_in("you charged me twice this month. when is the next one?")
