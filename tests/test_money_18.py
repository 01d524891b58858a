"""Issue 38 (money-18): money over several turns. A new card told before the account, a question
between an offer and its yes, a plan's period priced before the gate, days counted back from the
demo's today, a long story with a duplicate in it."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import MONEY, conversation_passes


def test_a_new_card_told_by_its_last_four_in_any_words_is_the_card_to_put_on_file():
    # The payment cue reads the last four the way `card_description` does ("ends in", "last 4 digits").
    assert cues.PAYMENT_METHOD.search("switching banks, my new amex ends in 4471, bill that from now on")
    assert cues.PAYMENT_METHOD.search("got a new visa, last 4 digits 2208, use that one")
    assert cues.card_description("got a new visa, last 4 digits 2208") == "visa ending 2208"
    # (A card named with no change word is no request to change it.)
    assert "payment" not in _intents_in("the visa ending 4242 was charged twice")


async def test_a_card_told_before_the_account_is_remembered_for_the_offer():
    await conversation_passes([
        {"customer": "got a new mastercard, last 4 digits 8830, use it from now on", "expect": {"agent": "billing", "not_tools": MONEY}},
        {"customer": "CUS-1009", "expect": {"offers": ["update_payment_method"], "reply": ["8830"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "update_payment_method", "arguments": {
            "customer_id": "CUS-1009", "method": "mastercard ending 8830"}}]}},
    ], {"update_payment_method": 1})
