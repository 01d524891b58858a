"""Issue 38 (plan19): a plan change told as a need, a proposal asked then "do that", a yes that
waits for someone else's word, a duplicate told by its two days."""

from __future__ import annotations

from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes


def test_a_plan_told_as_a_need_is_a_plan_change_and_a_card_named_stays_the_cards():
    assert asks.plan_needed("our staff doubled this spring, so team is what we need")
    assert "plan" in _intents_in("our staff doubled this spring, so team is what we need")
    # "from now on" with a card named is the card's change (the desk intents reader's training:
    # evals/desk-intents-tune.jsonl), though its first clause alone reads plan_change.
    assert asks.a_part_reads("team is what we need now, the amex ending 3007 from now on", "plan_change")
    assert not asks.plan_needed("team is what we need now, the amex ending 3007 from now on")
    assert not asks.plan_needed("we hired 6 people so we need team now, amex ending 3007 from now on")
    # A part alone reading plan_change beside a price asked is no need told.
    assert not asks.plan_needed("pro vs starter monthly, how much each")
    # Asked about, not told.
    assert not asks.plan_needed("would changing to the starter plan make me lose my storage?")
    # No plan of the price list named: nothing to offer.
    assert not asks.plan_needed("we hired two people this month")


def test_a_proposal_asked_then_a_go_ahead_asks_for_it_and_a_question_alone_does_not():
    # (The act reader alone reads this one as asking about the move.)
    assert asks.goes_ahead_after("what if we went down to starter instead of cancelling? do that")
    assert not asks.asks_about("what if we went down to starter instead of cancelling? do that")
    # A question alone, or one followed by a question, stays asked about.
    assert not asks.goes_ahead_after("what if we moved down to starter?")
    assert not asks.goes_ahead_after("what if we moved down to starter? would we lose files?")


def test_an_answer_waiting_for_someone_else_is_told_by_its_grammar():
    assert asks.waits_for_someone("hang on, i want to check with my wife first")
    assert asks.waits_for_someone("need to ask the office manager before you refund it")
    assert not asks.waits_for_someone("no thanks, leave it")
    assert not asks.waits_for_someone("refund the first one")


async def test_a_plan_told_as_a_need_is_offered_and_runs_on_the_yes_only():
    await conversation_passes([
        {"customer": "our staff doubled this spring, so team is what we need. CUS-1011",
         "expect": {"agent": "billing", "offers": ["change_plan"], "reply": ["Team"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1011", "plan": "team"}}]}},
    ], {"change_plan": 1})


async def test_a_refund_waiting_for_a_partner_runs_nothing_keeps_its_charge_and_runs_once_on_the_yes():
    # "first" in "check with my partner first" is a time: the offer stays on the duplicate
    # (CH-9059), never moved to the first charge listed (CH-9058); a later yes runs it once.
    await conversation_passes([
        {"customer": "sami.meyer18@example.com pro was taken on march 10 and march 11, twice",
         "expect": {"offers": ["refund_charge"], "reply": ["$29.99"], "not_tools": MONEY}},
        {"customer": "let me check with my partner first",
         "expect": {"offers": ["refund_charge"], "reply": ["nothing has changed", "March 11, 2026"],
                    "context": {"pending_offer": {"action": "refund_charge", "arguments": {"charge_id": "CH-9059", "amount": 29.99, "reason": "duplicate charge"}}},
                    "not_tools": MONEY}},
        {"customer": "ok he says yes, refund the second one",
         "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9059", "amount": 29.99}}]}},
    ], {"refund_charge": 1})


async def test_after_a_wait_the_first_charge_pointed_at_is_no_yes_to_the_duplicate():
    await conversation_passes([
        {"customer": "sami.meyer18@example.com pro was taken on march 10 and march 11, twice",
         "expect": {"offers": ["refund_charge"], "not_tools": MONEY}},
        {"customer": "let me check with my partner first", "expect": {"not_tools": MONEY}},
        {"customer": "yes the first one", "expect": {"not_tools": MONEY}},
    ], {"refund_charge": 0})


async def test_a_duplicate_told_by_its_two_days_before_the_account_is_offered_when_the_id_comes():
    await conversation_passes([
        {"customer": "our starter subscription hit the account on the 5th and a second time on the 6th", "expect": {"not_tools": MONEY}},
        {"customer": "CUS-1006", "expect": {"offers": ["refund_charge"], "reply": ["$9.99"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9021", "amount": 9.99}}]}},
    ], {"refund_charge": 1})


async def test_a_refund_passed_up_and_put_again_after_a_wait_still_points_at_the_second_charge():
    # The senior colleague's offer names one charge; put again after the wait it lists both days,
    # the duplicate's last, so "the second one" with a yes is the yes to it (CH-9097, March 11).
    await conversation_passes([
        {"customer": "esther.kowalski30@example.com team was billed on march 10, and march 11 too",
         "expect": {"offers": ["refund_charge"], "reply": ["$129.99"], "not_tools": MONEY}},
        {"customer": "hold on, i need to ask our finance lead before you do anything", "expect": {"not_tools": MONEY}},
        {"customer": "ok she agrees, yes refund the second one",
         "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9097", "amount": 129.99}}]}},
    ], {"refund_charge": 1})
