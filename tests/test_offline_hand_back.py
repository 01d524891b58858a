"""A specialist handed a matter outside its scope mid-conversation hands it back to triage with
the reason (issue 38: "my account's been compromised" said to billing), instead of carrying its
last answer into it or listing what it can do; a follow-up pointing back at its answer stays.

Real desk (runner, tools, demo data, a real SQLite file) through the offline model.
"""

from __future__ import annotations

from supportdesk.engine.events import Appended
from supportdesk.items import Handoff
from supportdesk.wiring import open_desk
from tests.conftest import REPO
from tests.test_offline_moves import Turn, open_offers, talk

MONEY_ACTIONS = ("refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method")


async def talk_on(tmp_path, config: str, *messages: str) -> list[Turn]:
    turns = []
    desk = await open_desk(tmp_path / "desk.db", str(REPO / config))
    async with desk:
        session = await desk.runner.new_session()
        for text in messages:
            items = [e.item async for e in desk.runner.send(session, text) if isinstance(e, Appended)]
            while open_offers(items):
                items += [e.item async for e in desk.runner.send(session, "yes") if isinstance(e, Appended)]
            info = await desk.store.get_session(session)
            context = {k: e.value for k, e in (await desk.store.context_at(session)).items()}
            turns.append(Turn(items, info.active_agent, context))
    return turns


async def test_a_compromised_account_said_to_billing_goes_back_to_triage_with_the_reason(tmp_path):
    paid, hacked = (await talk(tmp_path, "when is my next payment? dana@example.com", "my account's been compromised"))[0]
    assert paid.agent == "billing"
    back = [i for i in hacked.items if isinstance(i, Handoff)]
    assert back and (back[0].from_agent, back[0].to_agent, back[0].handoff_kind) == ("billing", "triage", "return")
    assert "compromised" in back[0].reason
    assert hacked.agent != "billing"
    assert "Your next payment" not in hacked.said() and "I can help with charges" not in hacked.said()
    assert not any(hacked.calls(name) for name in MONEY_ACTIONS)


async def test_a_breach_in_capitals_after_an_invoice_is_not_answered_with_invoices(tmp_path):
    _, breached = (await talk(tmp_path, "can you list my invoices? dana@example.com", "I BELIEVE MY ACCOUNT HAS BEEN BREACHED"))[0]
    assert breached.handoffs()[:1] == ["billing>triage"]
    assert "invoice" not in breached.said().lower()


async def test_a_follow_up_pointing_back_at_the_answer_stays_with_billing(tmp_path):
    for follow_up in ("is that the cheapest?", "hmm that seems wrong", "why is it so expensive?", "So, any news?", "any update?"):
        _, then = (await talk(tmp_path / follow_up.split()[0], "which plan am i on? dana@example.com", follow_up))[0]
        assert then.handoffs() == [] and then.agent == "billing", follow_up


async def test_the_config_only_security_agent_reached_by_a_hand_back_uses_its_reset_tool(tmp_path):
    _, hacked = await talk_on(tmp_path, "evals/config-agent.toml", "what do i pay next month? dana@example.com", "my account was hacked last night")
    assert hacked.handoffs() == ["billing>triage", "triage>security"]
    assert hacked.calls("send_password_reset") and "what you see on screen" not in hacked.said()
    assert not any(hacked.calls(name) for name in MONEY_ACTIONS)


def test_a_sign_in_not_recognised_is_no_charge_and_a_no_answers_only_a_question():
    # Issue 38: "a login ... i dont recognise, not me" after billing stated the next payment
    # stayed with billing (read as a charge not recognised, and as a "no" to a statement).
    from supportdesk.models.offline.specialist import about_charges

    assert not about_charges("hold on, there's a login from russia on my account i dont recognise")
    assert about_charges("there's a charge i dont recognise") and about_charges("i don't recognise this")


async def test_a_sign_in_from_abroad_after_the_next_payment_goes_back_to_triage():
    from supportdesk.commands.evals import evaluate_conversations
    from tests.conftest import REPO

    convo = {"name": "t", "turns": [
        {"customer": "whats my next payment amount? dana@example.com", "expect": {"agent": "billing"}},
        {"customer": "wait, i just got an email that someone signed into my account from brazil. that was not me!!",
         "expect": {"agent": "technical", "reply_not": ["next payment"]}},
    ]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "agents.toml"))
    assert not result.failures, result.failures


async def test_technical_hands_a_login_alert_back_for_the_config_only_security_agent(tmp_path):
    """Issue 38 (route-5): technical and the config-only security agent share the tech skill, so a
    switch by skill never left technical; whose matter a message is follows the router, trained
    on each agent's own description and examples."""
    synced, alert = await talk_on(
        tmp_path, "evals/config-agent.toml", "the app crashes when i open it on my phone", "and now i got an alert about a login i dont know"
    )
    assert synced.agent == "technical"
    assert alert.handoffs() == ["technical>triage", "triage>security"]
    back = next(i for i in alert.items if isinstance(i, Handoff))
    assert back.handoff_kind == "return" and "login" in back.reason
    assert not any(alert.calls(name) for name in MONEY_ACTIONS)


async def test_senior_is_no_peer_of_billing_a_refund_stays_with_senior(tmp_path):
    """The peer switch is between agents of one level: senior (level 2) holding a large refund
    does not pass the customer's money words back to billing (level 1), whose skill it shares."""
    from supportdesk.commands.evals import evaluate_conversations

    convo = {"name": "t", "turns": [
        {"customer": "Hi, I was charged twice for my subscription this month.", "expect": {"handoffs": ["triage>billing"]}},
        {"customer": "Yes, I can see two charges of $129.99 on March 1st and March 3rd. My email is marco@example.com.", "expect": {"agent": "senior"}},
        {"customer": "I'd like a refund for the duplicate charge.", "expect": {"handoffs": [], "agent": "senior"}},
    ]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "agents.toml"))
    assert not result.failures, result.failures


def test_two_problems_told_with_a_bare_dont_are_two_problems():
    """ "my files dont sync ..., and also i need my last invoice": the negation typed without its
    apostrophe ("dont", "do not") is a problem told like "doesn't" is, so the second matter waits
    its turn instead of being lost."""
    from supportdesk.config import load_desk
    from supportdesk.models.offline.router import Router
    from supportdesk.models.offline.triage import issues

    desk = load_desk(REPO / "agents.toml")
    router = Router([desk.agents["billing"], desk.agents["technical"]], use_disk_cache=False)
    found = issues("my files dont sync between laptop and phone, and also i need my last invoice. dana@example.com", router)
    assert [route.agent for route, _ in found] == ["technical", "billing"]


def test_a_problem_and_a_question_in_one_message_are_two_matters():
    """A question is a matter as much as a problem: "sync stopped ..., and also what did you
    charge me in ...?" keeps the question for billing instead of searching the articles with
    both (issue 38: two questions in one message); a greeting beside a problem is no matter."""
    from supportdesk.config import load_desk
    from supportdesk.models.offline.router import Router
    from supportdesk.models.offline.triage import issues

    desk = load_desk(REPO / "agents.toml")
    router = Router([desk.agents["billing"], desk.agents["technical"]], use_disk_cache=False)
    found = issues("hey, sync stopped on my macbook, and also what did you charge me in february?", router)
    assert [route.agent for route, _ in found] == ["technical", "billing"]
    assert issues("my files stopped syncing on the laptop, and also thanks for the quick help last time", router) == []


async def test_a_clarifying_question_names_only_the_agents_the_message_could_be_for():
    """With a config-only agent the desk has three; "my password thing" is technical's or
    security's, never billing's, so the customer is asked between those two. (Since the config
    desk's securing examples sit with its security agent, a bare "my password" leans to the
    technical agent surely enough for a two-word message, 0.62, and is placed there.)"""
    from supportdesk.commands.evals import evaluate_conversations

    convo = {"name": "t", "turns": [{"customer": "my password thing", "expect": {
        "agent": "triage", "reply": ["technical (", "security ("], "reply_not": ["billing ("]}}]}
    [result] = await evaluate_conversations([convo], config=str(REPO / "evals" / "config-agent.toml"))
    assert not result.failures, result.failures
    # the shipped desk's two agents are both named, however the message leans
    two = {"name": "t", "turns": [{"customer": "my account", "expect": {"reply": ["billing (", "technical ("]}}]}
    [result] = await evaluate_conversations([two], config=str(REPO / "agents.toml"))
    assert not result.failures, result.failures


async def test_a_follow_up_on_the_security_agents_own_reset_stays_with_it(tmp_path):
    """The peer switch leaves alone a message about what this agent itself did: "the reset link
    never arrived" after security sent one is security's, though the router leans technical."""
    # (talk_on says yes to the reset offered, so the first turn sends it)
    reported, missing = await talk_on(
        tmp_path, "evals/config-agent.toml", "someone logged into my account, not me. dana@example.com", "the reset link never arrived"
    )
    assert reported.agent == "security" and reported.calls("send_password_reset")
    assert missing.handoffs() == [] and missing.agent == "security"


async def test_a_plan_asked_for_in_the_technical_agents_words_stays_with_billing(tmp_path):
    """route-13: "the plan with the most features" is a plan change (the desk intents reader and
    the money gate), though "features" are the technical agent's job words: billing keeps it
    rather than handing it back to triage, who would send it to the technical agent."""
    turns, _ = await talk(tmp_path, "give me the plan with the most features. CUS-1004")
    (turn,) = turns
    assert turn.agent == "billing"
    assert not [i for i in turn.items if isinstance(i, Handoff) and i.handoff_kind == "return"]
