"""Issue 38 (money-10): a change of how the customer pays, told without a payment method's noun
("need to change how i pay you"), is billing's change of card, read by the desk intents reader
(update_card) and the act reader (asked for, not a problem told nor a how-to question); a request
said without its verb ("reset link please", "a new invoice for march thx") is read as a request by
the act reader itself, trained on short requests of the public corpora and the desk's examples, with
no grammar rule for "please" beside it (engine/confirmation.asks_for_something)."""

from __future__ import annotations

import pytest

from supportdesk.engine import confirmation
from supportdesk.models.offline import cues
from supportdesk.readers import acts
from tests.money_turns import MONEY, passes


def test_a_change_of_how_one_pays_is_a_change_of_card_without_a_cards_noun():
    for text in ("we'd like to start paying you some other way", "could we pay for acme a different way now"):
        assert cues.asks_card_change(text), text
    for text in (
        "how do i pay with apple pay",  # a how-to question about paying: the app's wallet article
        "I got a fee when paying with my card",  # a problem told
        "what do i pay for it",  # an amount asked
        "is paypal still the way i pay you?",  # which method pays, asked
        # a charge named by its id is that charge's matter, though the reader hears paypal's
        # update_card in it (held-22: "already paypal, nothing to change" instead of the charge)
        "paypal lists something called CH-9931 from you guys??",
    ):
        assert not cues.asks_card_change(text), text


async def test_a_change_of_how_one_pays_goes_to_billing_and_the_card_told_next_is_offered():
    convo = {"name": "money 10", "turns": [
        {"customer": "i need to change the way i pay you - olga.nguyen14@example.com",
         "expect": {"agent": "billing", "not_tools": MONEY}},
        {"customer": "visa ending 5151", "expect": {"agent": "billing", "offers": ["update_payment_method"], "reply": ["5151"],
                                                   "not_tools": MONEY}},
        {"customer": "ok go ahead", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1014", "method": "visa ending 5151"}}]}},
    ], "expect": {"tool_counts": {"update_payment_method": 1}}}
    await passes(convo)


@pytest.mark.parametrize("text", ["my password reset link please", "password link pls", "the june invoice thx", "a receipt for february thx"])
def test_a_request_without_its_verb_is_read_as_a_request_by_the_act_reader(text):
    # The act reader's own reading, not a rule beside it: before money-10 these read as problems
    # told (their topic words) and only confirmation._PLEASE made them requests.
    assert acts.read_act(text).act == "request"
    assert confirmation.asks_for_something(text)


@pytest.mark.parametrize("text", ["my card got declined again pls", "why does the export keep failing please?"])
def test_please_beside_a_problem_or_a_question_asks_for_nothing(text):
    # "please" is politeness, not an act: a problem told or a question with it asks nothing done
    # (the grammar rule it replaces read every clause with "please" as a request).
    assert not confirmation.asks_for_something(text)


def test_no_rule_for_please_sits_beside_the_act_reader():
    assert not hasattr(confirmation, "_PLEASE")
