"""Issue 38 (money-9, held-9's money misses): a change at the end of the current period asked
for ("once this cycle is over, ...") is offered for the renewal; the billing period asked about is
answered from the account; the last plan of a list is a place in it; a list pointer is no second
charge; a month's possessive typed without its apostrophe names the month; a refund the policy
refuses is said so by billing, never passed to a senior colleague because of its amount."""

from __future__ import annotations

import pytest

from supportdesk.models.offline import cues, slots
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.intents import MoneyIntents
from tests.money_turns import MONEY, conversation_passes


def test_the_end_of_the_current_period_is_a_time_in_any_words():
    for said in ("once this billing cycle is over", "after our current term expires", "when the paid period has ended",
                 "at the end of this month", "as soon as my subscription runs out"):
        assert cues.AT_RENEWAL.search(said), said
    assert not cues.AT_RENEWAL.search("when my plan stopped syncing")


def test_a_request_opening_with_the_time_it_should_start_is_no_question():
    assert not asks.is_question("when our current year is over, put us on starter")
    assert not asks.asks_about("when our current year is over, put us on starter")


def test_the_billing_period_asked_about_is_the_accounts_plan():
    assert MoneyIntents._intents_of("are we billed yearly or each month?") == {"my_plan"}
    assert MoneyIntents._intents_of("how often are we charged, every year?") == {"my_plan"}
    # an amount asked, or a change asked for, is not
    assert "my_plan" not in MoneyIntents._intents_of("what do we pay each month?")
    assert "my_plan" not in MoneyIntents._intents_of("switch me to yearly billing")


def test_the_last_of_a_list_is_a_place_and_last_month_is_not():
    assert slots.place_named("the last option, billed yearly") == slots.Place(1, "high", by_order=True)
    assert slots.place_named("second to last plan") == slots.Place(2, "high", by_order=True)
    assert slots.place_named("the charge from last month") is None
    assert slots.place_named("my last invoice") is None


def test_a_list_pointer_is_no_duplicate_charge():
    assert "duplicate" not in MoneyIntents._intents_of("second one for me, annual billing please")


def test_a_months_possessive_without_its_apostrophe_names_the_month():
    assert slots.months_named("send me octobers bill") == [10]
    assert slots.months_named("june’s invoice") == [6]
    assert slots.months_named("jans and mars") == []  # abbreviations carry no possessive


async def test_a_change_for_when_the_period_ends_is_offered_for_the_renewal():
    await conversation_passes([
        {"customer": "once our current year is over please put us on starter. marco@example.com",
         "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "yes thats it", "expect": {"tools": [
            {"name": "change_plan", "arguments": {"customer_id": "CUS-1002", "plan": "starter", "when": "renewal"}}]}},
    ], {"change_plan": 1})


async def test_the_billing_period_asked_is_answered_from_the_account():
    await conversation_passes([{"customer": "are we billed yearly or each month? priya@example.com",
                    "expect": {"agent": "billing", "reply": ["annual"], "reply_not": ["shall i"],
                               "context_absent": ["pending_offer"], "not_tools": MONEY}}], {"change_plan": 0})


async def test_the_last_plan_of_the_list_with_its_period():
    await conversation_passes([
        {"customer": "what are the plans and what do they cost?", "expect": {"reply": ["$129.99"]}},
        {"customer": "i'll take the last option, billed yearly. dana@example.com", "expect": {"offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [
            {"name": "change_plan", "arguments": {"customer_id": "CUS-1001", "plan": "team", "billing_period": "annual"}}]}},
    ], {"change_plan": 1})


async def test_an_invoice_asked_by_its_month_without_the_apostrophe():
    await conversation_passes([
        {"customer": "dana@example.com, invoice question", "expect": {"agent": "billing"}},
        {"customer": "can you send februarys invoice", "expect": {"reply": ["INV-5002"], "reply_not": ["INV-5001", "INV-5003"]}},
    ])


async def test_a_refund_above_the_limit_the_policy_refuses_is_said_so_by_billing():
    # CH-9066 is a single $129.99 charge, no duplicate: above billing's limit, yet no senior is
    # asked to approve what the policy refuses.
    await conversation_passes([{"customer": "money back for CH-9066 please, you took it twice. vera.reyes21@example.com",
                    "expect": {"agent": "billing", "reply": ["duplicate"], "reply_not": ["shall i refund"],
                               "context_absent": ["pending_offer"], "not_tools": MONEY}}], {"refund_charge": 0})


def test_a_card_told_after_a_request_to_change_how_one_pays_is_that_change():
    # the request alone names no payment method in the cues' words; read with the card, it is one
    assert cues.card_change_told("i'd like to update the payment info on my account", "mastercard ending 8080")
    assert not cues.card_change_told("i'd like to update the payment info on my account", "no card yet")
    assert not cues.card_change_told("", "mastercard ending 8080")


async def test_a_card_told_after_the_request_is_offered_then_put_on_file():
    await conversation_passes([
        {"customer": "i'd like to update the payment info on my account. dana@example.com", "expect": {"agent": "billing", "not_tools": MONEY}},
        {"customer": "mastercard ending 8080", "expect": {"offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1001", "method": "mastercard ending 8080"}}]}},
    ], {"update_payment_method": 1})


async def test_a_card_told_to_the_technical_agent_goes_to_billing_with_its_request():
    # "the way i pay" leans to the app's payment articles; the card told next is billing's change
    await conversation_passes([
        {"customer": "dana@example.com here, want to change the way i pay", "expect": {"not_tools": MONEY}},
        {"customer": "mastercard ending 8080", "expect": {"agent": "billing", "offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1001", "method": "mastercard ending 8080"}}]}},
    ], {"update_payment_method": 1})


def test_another_card_asked_for_in_words_no_cue_lists_is_read_by_the_desk_intents_reader():
    assert cues.asks_card_change("i would like to pay with my other card")
    assert not cues.asks_card_change("how do i add a card in the app")  # a how-to question: the app's
    assert not cues.asks_card_change("my card is not working in the app")  # trouble told


async def test_another_card_asked_for_goes_to_billing_and_is_offered_with_the_card():
    await conversation_passes([
        {"customer": "i would like to pay with my other card. dana@example.com",
         "expect": {"agent": "billing", "not_tools": MONEY}},
        {"customer": "amex ending 1005", "expect": {"offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1001", "method": "amex ending 1005"}}]}},
    ], {"update_payment_method": 1})


def test_two_payment_methods_offered_as_alternatives_ask_which_one_pays():
    assert MoneyIntents._intents_of("how am i charged, visa or paypal?") == {"card_on_file"}
    assert "card_on_file" not in MoneyIntents._intents_of("can i pay by card or paypal?")  # what is possible


async def test_which_of_two_payment_methods_pays_is_read_from_the_account():
    await conversation_passes([{"customer": "how am i charged, visa or paypal? marco@example.com",
                    "expect": {"agent": "billing", "reply": ["5454"], "reply_not": ["shall i"], "not_tools": MONEY}}],
                  {"update_payment_method": 0})


async def test_a_request_to_stop_paying_in_the_apps_words_goes_to_billing_and_is_offered():
    # "shut it down" leans to the app's crash article; the money skill's learned reading of a
    # request to stop paying decides (intents-8)
    await conversation_passes([
        {"customer": "dont want to pay for this anymore, shut it down. marco@example.com",
         "expect": {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1002"}}]}},
    ], {"cancel_subscription": 1})


async def test_a_change_of_account_details_is_no_request_to_stop_paying():
    await conversation_passes([{"customer": "I want to change my account details. dana@example.com",
                    "expect": {"agent": "technical", "context_absent": ["pending_offer"], "not_tools": MONEY}}])


@pytest.mark.parametrize(("text", "amount"), [
    ("two 9.99s went out in march, 24th and 25th", 9.99), ("both 29.99's on my statement", 29.99),
    ("the 1.50s timeout", None), ("version 2.13s broke it", None),
])
def test_an_amount_made_plural_is_counted_charges_of_it(text, amount):
    """held-8: "two 9.99s went out" names charges of $9.99 (a count before it); seconds and
    versions are not money."""
    from supportdesk.models.offline import slots

    found = [a.value for a in slots.extract_amounts(text)]
    assert found == ([amount] if amount is not None else [])


def test_a_duplicate_told_in_the_desks_own_words_is_heard():
    """The desk intents reader hears "two 9.99s went out in march, 24th and 25th" as a duplicate
    where Banking77's intent reader does not: the money skill finds and offers it (held-8's
    'the same duplicate again after its refund', first turn), and a plain question is no
    duplicate."""
    from supportdesk.models.offline.skills.money.heard import heard_duplicate

    assert heard_duplicate("two 9.99s went out in march, 24th and 25th")
    assert not heard_duplicate("what did you charge me in march?")
    assert not heard_duplicate("did acme bill me anything on 4 march? nils.costa13@example.com")
