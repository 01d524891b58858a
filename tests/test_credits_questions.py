"""How long credits take (issue 38: held-16, held-20, held-22): a time asked of a top-up or of a
bank transfer's credits is answered from the credits article by the agent holding the knowledge
base; billing's tools read the account's charges, never its credits, and it asked for the email.
A top-up's fee, a refund of one or a charge named stays billing's."""

from __future__ import annotations

import pytest

from supportdesk.models.offline.triage import asks_how_long_credits_take
from tests.money_turns import MONEY, passes

NOT_TOOLS = [*MONEY, "send_password_reset"]


@pytest.mark.parametrize("text", [
    "how long may a card top-up sit pending?",
    "credits payed by bank transfer, how long it take?",
    "i sent money for credits by wire transfer on monday, how many days until it lands?",
])
def test_a_time_asked_of_credits_is_the_articles(text):
    assert asks_how_long_credits_take(text)


@pytest.mark.parametrize("text", [
    "how long until the refund of my top-up shows?",  # a refund: billing's
    "why was i charged a fee for topping up, and how long has that been a thing?",  # a fee
    "how long ago was CH-9003 taken for the top-up?",  # a charge named
    "my top-up is pending",  # no time asked: the readers and the router decide
    "how long does sync take for a big folder?",  # no credits
])
def test_money_taken_or_no_time_asked_is_not(text):
    assert not asks_how_long_credits_take(text)


async def test_how_long_a_top_up_may_stay_pending_gets_the_credits_article():
    await passes({"name": "t", "turns": [
        {"customer": "how long can a card top-up stay pending, and how long does a bank transfer take? dana@example.com", "expect": {
            "agent": "technical", "reply": ["15 minutes", "1-2 business days"], "reply_not": ["usually fixes"],
            "not_tools": NOT_TOOLS}},
    ]})
