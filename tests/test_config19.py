"""Family config19 (issue 38): the config desk's security matters told in new ways (a device the
customer does not own seen on the account, a phishing message asking to confirm a card, a break-in
denied beside a two-factor how-to), and on the shipped desk chit-chat about the assistant and a
terse matter after a hello. Each test fails with its guard removed."""

from __future__ import annotations

import pytest

from supportdesk.config import load_desk
from supportdesk.models.offline import cues, triage
from supportdesk.models.offline.router import device_not_owned
from supportdesk.models.offline.skills.technical import without_denied_matter
from tests.test_config_17 import CONFIG, NOT_TOOLS, _entry_router
from tests.money_turns import passes

ANDROID = "my acme says 'last active an hour ago on Android phone', but i have only iPhone, no Android in my house"


@pytest.mark.parametrize("text", [
    ANDROID,
    "acme shows a pixel phone logged in to my account, i have never had a pixel",
    "we dont have any tablet at home and the devices list shows a samsung tablet",
])
def test_a_device_not_owned_on_the_account_is_read_by_rule(text):
    assert device_not_owned(text)


@pytest.mark.parametrize("text", [
    "i only have an iphone, can i sign in to acme on it?",
    "signing in works on my phone but not my laptop",
    "which devices can i use acme on",
    "i never had an android, does acme have an app for it?",
])
def test_a_device_question_or_trouble_is_no_device_not_owned(text):
    assert not device_not_owned(text)


def test_a_device_not_owned_goes_to_security_though_the_words_are_technicals():
    """Guarded twice: the rule itself, and no denial ("no android in my house") taking the
    security agent out of the candidates (router._without_denied_owner)."""
    assert _entry_router(CONFIG).route(ANDROID).agent == "security"


async def test_a_phishing_email_asking_to_confirm_the_card_is_securitys_not_a_card_change():
    await passes({"name": "t", "turns": [
        {"customer": "mail says my acme subscription gets cancelled unless i confirm my card at acme-pay-verify.net",
         "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)


@pytest.mark.parametrize("query, kept", [
    ("not a hack or anything!! how do i turn on two-factor", "how do i turn on two-factor"),
    ("my account wasnt compromised or nothing, how do i turn on 2fa", "how do i turn on 2fa"),
    ("no one hacked me, all good. how do i turn on two-factor", "how do i turn on two-factor"),
])
def test_a_clause_that_only_denied_a_break_in_is_not_searched(query, kept):
    assert without_denied_matter(query) == kept


async def test_a_break_in_denied_beside_a_code_at_login_finds_the_two_factor_article():
    await passes({"name": "t", "turns": [
        {"customer": "no hack, everything is fine. how do i make acme ask me for a one-time code whenever i sign in?",
         "expect": {"agent": "technical", "reply": ["Two-factor authentication codes"], "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)


@pytest.mark.parametrize("text", ["r u a human or a bot lol", "are you a real person or a script?", "is this a bot or a human"])
def test_asking_what_the_assistant_is_calls_no_person(text):
    assert not cues.asks_for_person(text)


@pytest.mark.parametrize("text", ["are you human? i need a real person now", "talk to a human please"])
def test_a_person_asked_for_is_still_called(text):
    assert cues.asks_for_person(text)


def _agents():
    desk = load_desk("agents.toml")
    return [desk.agents[n] for n in desk.agents["triage"].handoffs]


@pytest.mark.parametrize("text", ["hey, sync down?", "morning, 2fa broken", "hiya, app crashing?"])
def test_a_terse_matter_after_a_hello_is_no_greeting(text):
    assert triage.social_kind(text, _agents()) is None


@pytest.mark.parametrize("text", ["hi there, happy friday!", "hello, hope you're well", "hey, good morning"])
def test_a_hello_twice_is_still_a_greeting(text):
    assert triage.social_kind(text, _agents()) == triage.GREETED


async def test_chit_chat_about_the_assistant_gets_the_social_reply():
    """The scope reader learnt the assistant's own life (evals/scope-labels-19-tune.jsonl)."""
    await passes({"name": "t", "turns": [
        {"customer": "do bots like you ever dream when nobody is chatting?",
         "expect": {"agent": "triage", "reply": ["a program rather than a person"],
                    "reply_not": ["none of our help articles", "covers this"], "not_tools": NOT_TOOLS}},
    ]})
