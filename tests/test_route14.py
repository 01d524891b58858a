"""Route-14 (issue 38.4): a plan asked beside another agent's matter is answered by billing, not
handed back for the other matter's words; which plan the account is on, asked in words no rule
lists, is read by the desk intents reader; a denial of someone else's access is not the access
agent's on a desk that has one."""

from __future__ import annotations

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.conftest import REPO

_NO_ACTIONS = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method", "send_password_reset"]


def test_which_plan_asked_in_words_no_rule_lists_is_the_plan_read():
    assert "my_plan" in _intents_in("which of your plans are we paying for?")
    # a price list asked about is no question about the account's own plan
    assert "my_plan" not in _intents_in("which of your plans is the cheapest?")


async def test_the_plan_asked_beside_another_agents_matter_is_answered_not_handed_back():
    convo = {"name": "plan, then authenticator codes", "turns": [{
        "customer": "CUS-1006 - which of your plans are we paying for, and how do i get the authenticator login codes going?",
        "expect": {"reply": ["Starter"], "reply_not": ["passing you back"], "not_tools": _NO_ACTIONS},
    }]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "agents.toml"))
    assert result.failures == []
