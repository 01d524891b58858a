"""Issue 38 (controls-h18): ordinary requests done right: a card named away from another method,
the plan asked with the card that pays it."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money.intents import _intents_in


def test_the_card_to_put_on_file_is_the_one_not_being_left():
    # The gap between a brand and its digits never crosses another payment method: "the amex"
    # being replaced does not take the visa's digits.
    assert cues.card_description("pls replace the amex with my visa ending 1881") == "visa ending 1881"
    # A method told as taken off after it is the one left, not the one to use.
    assert cues.card_description("take paypal off the account and charge visa ending 9921 instead") == "visa ending 9921"
    assert cues.card_description("paypal out, mastercard ending 5454 in") == "mastercard ending 5454"
    # (what still reads as the card to use)
    assert cues.card_description("switch me to paypal") == "paypal"
    assert cues.card_description("update my card to visa ending 4444") == "visa ending 4444"


def test_the_plan_is_read_beside_the_card_that_pays_it():
    # The plan's answer says the card too (account._my_plan). Asked as a request to be told, no
    # "?" (asks.told_questions: the charges were listed):
    assert "my_plan" in _intents_in("remind me my plan + the card it's billed to. elena.ortiz4@example.com")
    # the card alone stays the card alone
    assert _intents_in("which card do you have on file for me?") == frozenset({"card_on_file"})
