"""Requests in few or odd words, and a new matter announced while a specialist holds the
conversation (issue 38, reset15): the reset link asked for in a clause after a problem told, a
password's chat abbreviations, the words that only announce a new matter, and the desk intents
reader's reset examples (a link sent at once is asked for; one only offered is not)."""

from __future__ import annotations

import sys

from supportdesk.lexicon import normalise
from supportdesk.models.offline.router import Router, without_announcement
from supportdesk.models.offline.specialist import TOPIC_SWITCH_CONFIDENCE
from supportdesk.wiring import load_config
from tests.conftest import REPO
from tests.money_turns import MONEY, passes

CONFIG = "evals/config-agent.toml"


async def test_a_reset_asked_in_a_clause_after_the_problem_is_sent_at_once():
    """Read whole, "forgot the pw again 🙄 link to <email>" is a goodbye to the act reader; its
    second clause asks, as the desk's gate reads a request, so the link goes out with no question."""
    await passes({"name": "t", "turns": [{"customer": "forgot the pw again 🙄 link to nils.costa13@example.com", "expect": {
        "tools": [{"name": "send_password_reset", "arguments": {"customer": "nils.costa13@example.com"}}],
        "reply_not": ["shall i", "which email"], "not_tools": MONEY}}],
        "expect": {"tool_counts": {"send_password_reset": 1}}})


async def test_a_question_about_the_link_with_a_clause_heard_as_a_request_sends_none():
    """"out of curiosity" reads as a request to the act reader; the message asks a question."""
    await passes({"name": "t", "turns": [{"customer": "out of curiosity, when i get a reset email, how long does the link in it keep working?",
        "expect": {"reply": ["30 minutes"], "reply_not": ["shall i"], "context_absent": ["pending_offer"],
                   "not_tools": [*MONEY, "send_password_reset"]}}], "expect": {"tool_counts": {"send_password_reset": 0}}})


async def test_how_to_change_a_password_still_gets_the_article_not_a_link():
    await passes({"name": "t", "turns": [{"customer": "how do i change my pw once i'm logged in?", "expect": {
        "reply": ["Changing your password"], "reply_not": ["shall i"], "not_tools": [*MONEY, "send_password_reset"]}}]})


def test_a_passwords_chat_abbreviations_are_the_password():
    assert "password_c" in normalise("new pw pls").split()
    assert "password_c" in normalise("forgot my pwd again").split()


def test_words_that_only_announce_a_new_matter_are_not_routed():
    """On the config desk "another question" alone leans 0.9 to security (the agent taught the
    fewest examples); the matter after it is billing's, surely enough to switch to it."""
    desk = load_config(REPO / CONFIG)
    router = Router([desk.agents[name] for name in desk.agents["triage"].handoffs], desk_name=desk.desk.name)
    for text in ("another question: how much is pro per year?", "other thing - pro for 12 months costs what?"):
        route = router.route(text)
        assert route.agent == "billing" and route.confidence >= TOPIC_SWITCH_CONFIDENCE, (text, route)
    # Nothing after it: the words stay (they are all there is), and so does a sentence that uses them.
    assert without_announcement("another question") == "another question"
    assert without_announcement("the other thing i bought") == "the other thing i bought"


async def test_security_holds_it_then_a_price_announced_as_another_question():
    await passes({"name": "t", "turns": [
        {"customer": "got a login alert from a city i've never been to", "expect": {"agent": "security"}},
        {"customer": "another question: how much is pro per year?", "expect": {
            "handoffs": ["security>triage", "triage>billing"], "agent": "billing", "reply": ["$299.99"],
            "context_absent": ["pending_offer"], "not_tools": [*MONEY, "send_password_reset"]}},
    ]}, CONFIG)


def test_a_reset_link_only_offered_teaches_no_reset_asked_for():
    """scripts/build_readers.py: an opening the reset link is sent for at once asked for it
    ("reset"); one it is only offered for told sign-in trouble, and is no reset example."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import build_readers
    finally:
        sys.path.remove(str(REPO / "scripts"))
    labelled = dict(build_readers.desk_intent_examples())
    said = {text: build_readers.EMAIL.sub(" ", text) for text in (
        "please send me a password reset, dana@example.com",  # the link sent at once
        "I can't log in, password keeps getting rejected, marco@example.com",  # the link offered
    )}
    sent, offered = said.values()
    assert labelled[sent] == "reset"
    assert labelled.get(offered) != "reset"
