"""The config desk's security agent, family config-24 (issue 38): a request of a skill the agent
lacks, made in that skill's request words, hands back when the router leans to that skill's
agent, however unsurely."""

from __future__ import annotations

import pytest

from supportdesk.models.offline import cues
from tests.test_config_17 import CONFIG, NOT_TOOLS, _entry_router
from tests.money_turns import passes

HACKED = "i think my account got hacked, there are files in there i never uploaded"
CANCEL = "honestly after this i just want to cancel acme. CUS-1009"


def test_the_cancellation_leans_to_billing_only_unsurely():
    """The premise of the protection below: the router alone is not sure enough to switch."""
    route = _entry_router(CONFIG).route("honestly after this i just want to cancel acme")
    assert route.agent == "billing" and route.confidence < 0.8


async def test_a_cancellation_asked_while_security_holds_it_goes_back_to_billing():
    await passes({"name": "t", "turns": [
        {"customer": HACKED, "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": CANCEL, "expect": {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)


async def test_security_keeps_its_own_matter_told_after_its_own():
    """The router's lean decides whose request it is: a reset asked of security stays there."""
    await passes({"name": "t", "turns": [
        {"customer": HACKED, "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": "please just secure it with a new password. CUS-1009",
         "expect": {"agent": "security", "offers": ["send_password_reset"], "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)


@pytest.mark.parametrize("text", ["i just want my subscription closed", "can you get the membership cancelled", "we need our pro plan ended"])
def test_a_cancellation_told_object_first_is_a_cancellation(text):
    assert cues.CANCEL.search(text)


@pytest.mark.parametrize("text", ["my subscription was cancelled but you charged me", "i have had my plan cancelled and still got charged"])
def test_a_cancellation_told_as_done_is_no_request(text):
    assert not cues.CANCEL.search(text)


async def test_a_subscription_wanted_closed_after_a_drop_is_offered_its_cancellation():
    await passes({"name": "t", "turns": [
        {"customer": "someone signed in to my account from brazil last night", "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": "forget it, i just want my subscription closed. CUS-1009",
         "expect": {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": NOT_TOOLS}},
    ]}, config=CONFIG)
