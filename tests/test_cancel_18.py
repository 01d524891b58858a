"""Issue 38 (cancel-18): a cancel told after its reason or beside another matter, and kept facts.
Each test guards one reading; each fails with its rule removed."""

from __future__ import annotations

from supportdesk.models.offline import triage
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.intents import _intents_in
from supportdesk.readers import spelling
from supportdesk.wiring import load_config
from tests.conftest import REPO
from tests.money_turns import MONEY, conversation_passes


def test_a_progressive_told_before_a_cancel_is_its_reason_not_a_question():
    # "our studio is closing down": "is" after its subject tells; the request stands.
    told = "carmen.rossi28@example.com our studio is closing down, please end the acme subscription"
    assert not asks.asks_what_an_account_action_does(told)
    assert not asks.asks_what_it_would_do(told)
    # In the question's order, opening its clause or after its wh-word, it still asks.
    assert asks.asks_what_an_account_action_does("is cancelling going to delete my files?")
    assert asks.asks_what_an_account_action_does("ok, what is cancelling going to do to my files?")
    assert asks.asks_what_an_account_action_does("what would cancelling do to my documents?")


def test_a_letter_written_twice_where_it_is_single_is_the_word_meant():
    assert spelling.correction("cancell") == "cancel"
    assert spelling.correction("refundd") == "refund"
    assert "cancel" in _intents_in(spelling.corrected("budget got cut so we cant keep paying, plz cancell the subscription"))
    # Words of their own are kept: English, or written so by customers.
    assert spelling.correction("install") == "install"
    assert spelling.correction("dinner") == "dinner"


def test_a_cancel_asked_in_a_clause_of_its_own_after_a_trouble_is_a_matter_of_its_own():
    desk = load_config(str(REPO / "agents.toml"))
    router = Router([desk.agents[n] for n in desk.agents[desk.desk.entry].handoffs], desk_name=desk.desk.name)
    told = "the windows app keeps crashing whenever i open a file and tbh im over it, cancel my plan. rosa.chen17@example.com"
    assert [route.agent for route, _ in triage.issues(told, router)] == ["technical", "billing"]
    # A cancel inside the trouble's own clause is the trouble's: one matter.
    assert triage.issues("the app crashes when i try to cancel my plan", router) == []


async def test_a_cancel_beside_a_trouble_is_offered_after_the_steps_and_runs_once_on_the_yes():
    await conversation_passes([
        {"customer": "the windows app keeps crashing whenever i open a file and tbh im over it, cancel my plan. rosa.chen17@example.com",
         "expect": {"reply": ["The app crashes or freezes"], "offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1017"}}]}},
    ], {"cancel_subscription": 1})


def test_an_invoice_number_asked_about_is_the_invoice_asked():
    assert _intents_in("what is INV-7777 on my statement? farid.patel5@example.com") == {"invoice"}
    # Told beside a request, the request stands.
    assert "refund" in _intents_in("please refund INV-5060, it was charged twice")


async def test_an_invoice_number_nobody_holds_is_said_not_found_not_answered_with_the_account_s():
    await conversation_passes([
        {"customer": "what is INV-7777 on my statement? farid.patel5@example.com",
         "expect": {"agent": "billing", "reply": ["I don't see INV-7777"], "reply_not": ["Here are your invoices", "shall i refund"],
                    "not_tools": MONEY}},
    ])
    # The account's own invoice is still shown.
    await conversation_passes([
        {"customer": "what is INV-5060 on my statement? umar.cohen20@example.com", "expect": {"agent": "billing", "reply": ["INV-5060"], "reply_not": ["I don't see"], "not_tools": MONEY}},
    ])


async def test_a_price_asked_after_the_plan_in_words_no_rule_hears_is_the_plan_s_price():
    await conversation_passes([
        {"customer": "good morning, chloe.ivanova34@example.com here", "expect": {"not_tools": MONEY}},
        {"customer": "which plan are we on at the moment", "expect": {"reply": ["Team"], "not_tools": MONEY}},
        {"customer": "and if we paid for it by the year, how much?",
         "expect": {"reply": ["$1,299.99"], "reply_not": ["your recent charges", "email address"], "context_absent": ["pending_offer"],
                    "not_tools": MONEY}},
    ])


async def test_a_past_month_s_payment_asked_after_the_plan_is_the_charge_not_a_price():
    # The desk intents reader hears "what did the february payment come to" as a price too.
    await conversation_passes([
        {"customer": "what plan am i on right now? diego.murphy29@example.com", "expect": {"reply": ["Pro"], "not_tools": MONEY}},
        {"customer": "and how much did the february payment come to",
         "expect": {"reply": ["February 13, 2026"], "reply_not": ["a year"], "not_tools": MONEY}},
    ])
