"""Issue 38 (money-15): plan changes, cancellations, hedges and changes of mind.

A customer still deciding ("hmm not sure tbh", "let me think") is neither a yes nor a no: nothing
runs, the same action is put to the desk's gate again, and a clear yes after it runs exactly that
action once (a no turns it down). A plan's price asked while its change waits for a yes is said,
and the change put again. A plan named by its place ("the cheapest", "the smaller plan") keeps the
billing period said beside it, and a price asked with the move to it asked for in one message is
the change, priced."""

from __future__ import annotations

import pytest

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.engine.confirmation import hedged, read_answer, undecided
from supportdesk.models.offline import cues
from tests.conftest import REPO

MONEY = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]


@pytest.mark.parametrize("text", [
    "hmm not sure tbh", "hmm let me think", "idk, maybe", "not sure honestly, my boss may still want it, let me think",
    "i don't know yet", "hmm", "maybe", "umm not sure, maybe", "i need to think about it",
])
def test_still_deciding_is_a_hedge_and_never_a_yes(text):
    assert undecided(text) and hedged(text)
    assert read_answer(text) == "question"


@pytest.mark.parametrize("text", [
    "no, keep it actually", "maybe later", "let me think about it and come back tomorrow", "not sure why i was charged twice",
    "i dont know what that means", "hmm not sure, can i get a refund instead", "hmm i dont know, no",
])
def test_a_refusal_another_time_option_or_question_beside_the_doubt_is_no_hedge(text):
    assert not undecided(text)
    assert read_answer(text) != "yes"


def test_the_smaller_or_bigger_plan_is_one_step_and_a_cheaper_plan_any_below():
    assert cues.plan_step("take us to the smaller plan pls") == "down1"
    assert cues.plan_step("move me to the bigger one") == "up1"
    assert cues.plan_step("is there a cheaper plan") == "down"


async def _passes(turns: list[dict], counts: dict) -> None:
    [result] = await evaluate_conversations(
        [{"name": "money 15", "turns": turns, "expect": {"tool_counts": counts}}], config=str(REPO / "agents.toml")
    )
    assert result.passed, "\n".join(result.failures)


async def test_a_hedge_runs_nothing_and_puts_the_same_cancellation_again_which_a_clear_yes_runs_once():
    await _passes([
        {"customer": "cancel my subscription please CUS-1020", "expect": {"offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "hmm not sure tbh", "expect": {
            "not_tools": MONEY, "offers": ["cancel_subscription"], "reply": ["nothing has changed yet"]}},
        {"customer": "ok yes cancel it", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1020"}}]}},
        {"customer": "yes", "expect": {"not_tools": MONEY}},
    ], {"cancel_subscription": 1})


async def test_a_hedge_then_a_no_runs_nothing():
    await _passes([
        {"customer": "end my acme subscription pls CUS-1016", "expect": {"offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "let me think", "expect": {"not_tools": MONEY, "offers": ["cancel_subscription"]}},
        {"customer": "no, keep it", "expect": {"not_tools": MONEY, "reply": ["stays as it is"]}},
    ], {"cancel_subscription": 0})


async def test_a_hedge_to_a_plan_change_then_a_clear_yes_moves_to_the_plan_offered_once():
    await _passes([
        {"customer": "put me on team, CUS-1008", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "hmm idk, maybe", "expect": {"not_tools": MONEY, "offers": ["change_plan"]}},
        {"customer": "ok yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1008", "plan": "team"}}]}},
    ], {"change_plan": 1})


async def test_a_hedge_to_a_credit_the_senior_offered_stays_with_the_senior_and_a_yes_adds_it_once():
    await _passes([
        {"customer": "could i get a 15 dollar credit for the downtime? carmen.rossi28@example.com",
         "expect": {"agent": "senior", "offers": ["issue_credit"], "not_tools": MONEY}},
        {"customer": "umm not sure, maybe", "expect": {"agent": "senior", "not_tools": MONEY, "offers": ["issue_credit"]}},
        {"customer": "yes go ahead", "expect": {"tools": [{"name": "issue_credit", "arguments": {"amount": 15}}]}},
    ], {"issue_credit": 1})


async def test_the_price_asked_while_a_change_waits_is_said_and_the_change_put_again():
    await _passes([
        {"customer": "switch me to pro please CUS-1013", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "wait how much is pro a month again?", "expect": {"reply": ["$29.99"], "not_tools": MONEY, "offers": ["change_plan"]}},
        {"customer": "ok do it", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1013", "plan": "pro"}}]}},
    ], {"change_plan": 1})


async def test_the_cheapest_plan_with_a_period_keeps_the_period_and_says_it():
    await _passes([
        {"customer": "i want the cheapest plan but paid once a year. diego.murphy29@example.com",
         "expect": {"offers": ["change_plan"], "reply": ["Starter", "billed annually"], "not_tools": MONEY}},
        {"customer": "yes please", "expect": {"tools": [{"name": "change_plan", "arguments": {
            "customer_id": "CUS-1029", "plan": "starter", "billing_period": "annual"}}]}},
    ], {"change_plan": 1})


async def test_a_price_asked_and_the_move_to_it_asked_for_is_the_change_priced():
    await _passes([
        {"customer": "whats ur cheapest plan? put me on that one. rosa.chen17@example.com",
         "expect": {"offers": ["change_plan"], "reply": ["Starter", "$9.99"], "not_tools": MONEY}},
        {"customer": "ok", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1017", "plan": "starter"}}]}},
    ], {"change_plan": 1})


async def test_a_price_asked_with_the_change_refused_outright_offers_nothing():
    await _passes([
        {"customer": "how much is team a month? only curious, don't change my plan. CUS-1013",
         "expect": {"reply": ["$129.99"], "reply_not": ["shall i"], "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"change_plan": 0})
