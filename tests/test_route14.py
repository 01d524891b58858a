"""Route-14 (issue 38.4): a plan asked beside another agent's matter is answered by billing, not
handed back for the other matter's words; which plan the account is on, asked in words no rule
lists, is read by the desk intents reader; a denial of someone else's access is not the access
agent's on a desk that has one."""

from __future__ import annotations

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.config import load_desk
from supportdesk.models.offline import classifier
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.conftest import REPO

_NO_ACTIONS = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method", "send_password_reset"]


def _config_router() -> Router:
    desk = load_desk(REPO / "evals" / "config-agent.toml")
    return Router([a for n, a in desk.agents.items() if n != desk.desk.entry], desk_name=desk.desk.name)


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


def test_a_state_said_not_to_hold_is_denied_with_its_concept():
    words, disowns = classifier.denials("my account is not compromised")
    assert {"not_compromised", "not_hacked_c"} <= set(words) and not disowns
    # a concept that is itself a negation ("not working") is what the message says, never denied
    assert "not_broken_c" not in classifier.denials("the app is not working")[0]


def test_a_denial_of_someone_elses_access_is_not_the_access_agents():
    router = _config_router()
    assert router.route("nobody is messing with my account, but chrome forgets my login after an hour, every day").agent == "technical"
    assert router.best("nothing suspicious here, i just want a longer password. which menu?").agent == "technical"
    # someone else's access told beside a denial is still the access agent's
    assert router.route("i did not change my password, somebody else logged in and did it").agent == "security"


def test_a_charge_asked_about_is_not_the_plan_read():
    # the desk intents reader hears "which one ..." as the plan asked: a plan's noun must be said,
    # and a charge's day or amount named makes it about that charge
    assert "my_plan" not in _intents_in("which one is the real one?")
    assert "my_plan" not in _intents_in("two plan charges of 129.99 on the 10th and 11th of march, which one is the real one?")


def test_two_questions_joined_are_each_read_for_the_card_on_file():
    from supportdesk.models.offline import cues

    assert cues.asks_card_on_file("which card is on my account and what plan am i on? marco@example.com")
