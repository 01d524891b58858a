"""The config desk's security agent, family config-18 (issue 38): a denial clause placed on what it
denies, and a negated subject narrowed to the customer's side that disowns."""

from __future__ import annotations

import pytest

from supportdesk.models.offline.classifier import denials
from supportdesk.models.offline.router import with_bare_amount
from tests.test_config_17 import CONFIG, NOT_TOOLS, _entry_router
from tests.money_turns import passes


def test_a_denial_clause_is_placed_on_the_words_it_denies():
    """Placed on its denial reading ("not_phishing": a word no example holds), "it's not a phishing
    thing" leaned to technical on "thing" and stayed in, and its "phishing" pulled the whole
    message to security (0.90)."""
    router = _entry_router(CONFIG)
    text = "it's not a phishing thing, the login codes never come by text"
    assert router.without_denials(text) == "the login codes never come by text"
    assert router.without_denials("this isn't a security scare, i'd like the login codes switched on") == "i'd like the login codes switched on"
    # a clause denying something that is not security's matter keeps its words
    kept = "no transactions are being accepted, what's wrong with my card?"
    assert router.without_denials(kept) == kept


@pytest.mark.parametrize("text", [
    "nobody on our team started an export of the whole workspace",
    "a webhook pointing somewhere none of us ever set up",
    "no one here ran that import",
    "nobody in the office has changed the billing email",
])
def test_a_negated_subject_narrowed_to_the_customers_side_disowns(text):
    words, disowns = denials(text)
    assert disowns and not any(w.startswith("not_") for w in words)


@pytest.mark.parametrize("text", [
    "nobody hacked me",  # a bare negated subject denies that the thing happened
    "no one on my team can log in",  # a lack, not a deed
    "nobody in the office has access to the invoices",
    "nobody here is using the old plan",
])
def test_a_negated_subject_without_a_deed_by_our_side_disowns_nothing(text):
    assert not denials(text)[1]


async def test_a_workspace_export_nobody_on_the_team_started_reaches_security():
    await passes({"name": "t", "turns": [
        {"customer": "we got the 'export ready' mail but nobody on our team asked for a copy of all our projects",
         "expect": {"agent": "security", "reply_not": ["Exporting your data"], "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)


def test_a_person_named_in_a_condition_is_anyone_and_votes_for_no_one():
    """"when someone mentions me": whoever does what the customer's setting is about, no one else
    at work in the account; its "someone" (and the lexicon's someone_c) leaned the notification
    emails to billing and security."""
    words = denials("i never get your notification emails when someone mentions me")[0]
    assert "someone" not in words and "someone_c" not in words
    assert "someone_c" in denials("someone logged in from brazil")[0]
    assert "someone_c" in denials("when i woke up someone had changed my password")[0]
    router = _entry_router(CONFIG)
    assert router.route("it's not a phishing thing, i simply never get your notification emails when someone mentions me").agent == "technical"


def test_a_bare_price_in_words_of_money_is_an_amount():
    """"9.99" voted as a number, and the card's words placed the unplaced charge with technical."""
    text = "my amex shows a 9.99 dated the 25th that i can't place"
    assert with_bare_amount(text).endswith("(amount)")
    # a version or a size beside no money stays a number; a price with its currency is the lexicon's
    assert with_bare_amount("the app version 4.12 keeps crashing") == "the app version 4.12 keeps crashing"
    assert with_bare_amount("a $9.99 charge i don't know") == "a $9.99 charge i don't know"
    assert _entry_router("agents.toml").route(text).agent == "billing"
    assert _entry_router(CONFIG).route(text).agent == "billing"


def test_the_customers_own_doing_going_on_negated_disowns():
    """"i wasn't trying to sign in" is the customer's own doing negated, as "i did not" is: read as
    a passive denied ("i wasn't hacked"), its clause was placed with security on its own login words
    and left out, and the codes nobody asked for went to technical."""
    assert denials("i wasn't trying to sign in when the codes came")[1]
    words, disowns = denials("i wasn't hacked, i want a longer password")
    assert "not_hacked" in words and not disowns
    router = _entry_router(CONFIG)
    assert router.route("two login code texts came at midnight and i wasn't trying to log in. worried?").agent == "security"
