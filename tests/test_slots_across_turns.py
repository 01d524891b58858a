"""What was said stays said across turns (issue 38.3, slots-15): a card's last four in the words
customers use, a day said without its month read in the month spoken of, and a correction that
replaces what it corrects (while a fact added beside another keeps both)."""

from __future__ import annotations

from datetime import date

import pytest

from supportdesk.models.offline import cues
from supportdesk.models.offline.slots import bare_days, extract, repairs
from supportdesk.models.offline.view import Facts
from tests.money_turns import MONEY, conversation_passes, passes

WRITTEN_ON = date(2026, 3, 20)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("my new mastercard ends in 3141, can u put it on", "mastercard ending 3141"),
        ("amex ends with 0005", "amex ending 0005"),
        ("visa, last 4 digits are 9012", "visa ending 9012"),
        ("the visa with last four digits 1881", "visa ending 1881"),
        ("visa ending in 4242", "visa ending 4242"),
        ("visa ending 4242", "visa ending 4242"),
        ("my visa ends 7788", "visa ending 7788"),
        ("visa card, it ends soon. also 1234 seats", None),
    ],
)
def test_a_cards_last_four_in_the_words_customers_use(text, card):
    assert cues.card_description(text) == card


def _facts(*messages: str) -> Facts:
    facts = Facts()
    for text in messages:
        facts.add(facts.dated_days(text, extract(text)), WRITTEN_ON, repair=repairs(text))
    return facts


def test_a_day_without_its_month_is_read_in_the_month_of_the_date_said_before():
    facts = _facts("refund the charge from march 1st", "sorry i meant the one on the 3rd")
    assert facts.iso_dates() == ["2026-03-03"]


def test_a_day_without_its_month_takes_the_month_the_same_message_names():
    facts = _facts("the charge from january 5th", "no wait, the february one on the 16th")
    assert facts.iso_dates() == ["2026-02-16"]


def test_a_day_with_no_month_to_read_it_in_stays_no_date():
    # (The listed charges' to match: dialogue.point_at reads a bare day against them.)
    assert _facts("the one on the 3rd").dates == []
    assert bare_days("the one on the 3rd") == {3}


def test_a_day_counted_from_today_is_not_read_in_an_earlier_month():
    facts = Facts()
    text = "and the 15th this month?"
    facts.add(extract("march 1st"), WRITTEN_ON)
    assert facts.dated_days(text, extract(text)).dates == []


def test_a_correction_replaces_what_it_corrects_and_an_addition_keeps_both():
    corrected = _facts("refund the 29.99 from march 15 please", "sorry, i meant march 16")
    assert corrected.iso_dates() == ["2026-03-16"]
    assert corrected.amounts == [29.99]  # what the correction does not name stays said
    added = _facts("refund the 29.99 from march 15 please", "and the one on march 16 too")
    assert added.iso_dates() == ["2026-03-15", "2026-03-16"]
    emails = _facts("dev.lindqvist3@example.com", "oops wrong one, its dev.lindqvist35@example.com")
    assert emails.emails == ["dev.lindqvist35@example.com"]


@pytest.mark.parametrize(
    ("text", "corrects"),
    [
        ("sorry i meant the 3rd", True),
        ("no wait, the february one", True),
        ("actually it's march 16", True),
        ("wrong email, try this one", True),
        ("typo: dana@example.com", True),
        ("and the one on march 16 too", False),
        ("sorry to bother you, charged twice", False),
    ],
)
def test_what_reads_as_a_correction(text, corrects):
    assert repairs(text) is corrects


async def test_a_correction_names_a_charge_the_offer_did_not_list_and_that_one_is_offered():
    """The first offer listed one charge (March 1); "sorry i meant the one on the 3rd" is offered
    March 3's charge, never March 1's again, and nothing is refunded without a yes."""
    money = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]
    convo = {"name": "corrected charge", "turns": [
        {"customer": "refund the 29.99 charge from march 1st pls, dana@example.com",
         "expect": {"agent": "billing", "offers": ["refund_charge"], "not_tools": money}},
        {"customer": "sorry i meant the one on the 3rd",
         "expect": {"agent": "billing", "offers": ["refund_charge"], "reply": ["March 3"], "reply_not": ["March 1,"],
                    "context": {"dates": ["2026-03-03"]}, "not_tools": money}},
    ], "expect": {"tool_counts": {"refund_charge": 0}}}
    await passes(convo)


async def test_the_card_named_before_the_email_is_not_asked_for_again():
    convo = {"name": "card first", "turns": [
        {"customer": "my new mastercard ends in 3141, please put it on the account", "expect": {"agent": "billing"}},
        {"customer": "its hugo.silva39@example.com",
         "expect": {"agent": "billing", "offers": ["update_payment_method"], "reply": ["3141"], "reply_not": ["which card"],
                    "not_tools": ["update_payment_method"]}},
    ]}
    await passes(convo)


def test_the_last_four_told_are_the_ones_not_taken_back():
    assert cues.last_four_told("sorry, my mistake, it ends 7007 not 7070") == "7007"
    assert cues.last_four_told("not ending 7070, ending 7007") == "7007"
    assert cues.last_four_told("the last 4 digits are 1212") == "1212"
    assert cues.last_four_told("it's the one from 2026") is None


async def test_a_cards_digits_corrected_change_the_card_offered_and_the_yes_runs_the_corrected_one():
    # The gate asks again with the digits told now, and the yes runs exactly that card, once.
    await conversation_passes([
        {"customer": "switch my billing to mastercard ending 7070, dana@example.com",
         "expect": {"offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": "oops, typo: ending 7007 not 7070",
         "expect": {"offers": ["update_payment_method"], "reply": ["7007"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "update_payment_method", "arguments": {
            "customer_id": "CUS-1001", "method": "mastercard ending 7007"}}]}},
    ], {"update_payment_method": 1})


@pytest.mark.parametrize(
    ("first", "then", "plan", "period"),
    [
        ("can you change me to annual billing?", "the pro one. my email, its rosa.chen17@example.com", "pro", "annual"),
        ("want to go down to starter", "yearly pls, acct felix.walsh31@example.com", "starter", "annual"),
    ],
)
async def test_a_plan_change_told_over_two_messages_keeps_both_parts(first, then, plan, period):
    """The period asked for in one message and the plan in the next (or the other way round):
    the offer carries both, never "you're already on that plan" for a change half read; the yes
    runs the change with both, whichever way the offer was put (the skill's own offer, or the
    desk's gate catching the call)."""
    convo = {"name": "plan in parts", "turns": [
        {"customer": first, "expect": {"agent": "billing"}},
        {"customer": then, "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": ["change_plan"],
                                      "reply_not": ["already on"]}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"plan": plan, "billing_period": period}}]}},
    ], "expect": {"tool_counts": {"change_plan": 1}}}
    await passes(convo)


async def test_the_month_asked_about_stays_asked_when_the_account_is_given_after():
    """"what did you take in march", then only the email: March's charges, not every charge."""
    convo = {"name": "month then email", "turns": [
        {"customer": "what did you take from my account in march", "expect": {"agent": "billing"}},
        {"customer": "its maya.farouk12@example.com",
         "expect": {"agent": "billing", "reply": ["March 24", "March 25"], "reply_not": ["February 24", "January 24"]}},
    ]}
    await passes(convo)


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        # two emails, neither taken back: the one the account has is the account's
        ("dana@example.com is the account, but send stuff to dana.w@gmail.com", "April 1"),
        # a correction: the one taken back is never looked up in its place
        ("marco@example.com no wait, i meant dana@example.cm", "couldn't find"),
    ],
)
async def test_of_two_emails_in_one_message_the_one_taken_back_is_never_the_account(said, reply):
    convo = {"name": "two emails", "turns": [
        {"customer": "whens my next payment", "expect": {"agent": "billing"}},
        {"customer": said, "expect": {"agent": "billing", "reply": [reply]}},
    ]}
    await passes(convo)


async def test_a_reset_for_another_account_named_later_is_that_accounts_not_the_first():
    """After a reset for dana@, "also one for my other account, marco@...": marco's reset is put
    to the customer (the gate's question), never "already sent" about dana's; a later word about
    the first reset still reads the first account."""
    convo = {"name": "second reset", "turns": [
        {"customer": "send me a password reset, dana@example.com",
         "expect": {"tools": [{"name": "send_password_reset", "arguments": {"customer": "dana@example.com"}}]}},
        {"customer": "thanks. can you also send one for my other account, marco@example.com",
         "expect": {"agent": "technical", "offers": ["send_password_reset"], "reply_not": ["already sent"],
                    "context": {"pending_offer": {"arguments": {"customer": "marco@example.com"}}},
                    "not_tools": ["send_password_reset"]}},
    ]}
    await passes(convo)


def test_the_payment_method_being_left_is_not_the_one_used():
    # held-16: "no more paypal for me, charge my visa ending 2290" was offered as a change to
    # paypal, and the customer's "that's right" ran it.
    assert cues.card_description("not paypal anymore pls, put it on the mastercard ending 5454") == "mastercard ending 5454"
    assert cues.card_description("move me off my amex ending 0005 and onto a visa ending 7001") == "visa ending 7001"
    assert cues.card_description("stop charging paypal") is None
    assert cues.card_description("use paypal instead of my card") == "paypal"


async def test_a_change_away_from_paypal_is_offered_and_made_with_the_new_card():
    await passes({"name": "leaving paypal", "turns": [
        {"customer": "switch me from paypal over to my amex ending 0005 please, hugo.silva39@example.com",
         "expect": {"agent": "billing", "offers": ["update_payment_method"], "reply": ["amex ending 0005"],
                    "reply_not": ["with paypal"], "not_tools": MONEY}},
        {"customer": "yep", "expect": {"tools": [
            {"name": "update_payment_method", "arguments": {"customer_id": "CUS-1039", "method": "amex ending 0005"}}]}},
    ], "expect": {"tool_counts": {"update_payment_method": 1}}})
