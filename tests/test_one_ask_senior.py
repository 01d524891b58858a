"""One ask, not two, where level 1 cannot act alone (issues 33 and 38): a refund above the billing
agent's limit, a credit only senior may add, and a password reset offered beside a help article.

Billing used to ask "Would you like me to refund it?" about marco@example.com's duplicate $129.99,
escalate on the yes, and senior's refund was then held by the desk's gate and asked again. Now the
question is asked once, by the agent that may act, with the call: the first yes runs it (and, at
or above the approval threshold, the staff approval follows that yes)."""

from __future__ import annotations

from supportdesk.engine.events import Appended
from supportdesk.engine.runner import drain
from supportdesk.items import Confirmation, Handoff, Item, Message, Notice, Offer, ToolResult
from supportdesk.wiring import open_desk
from tests.conftest import REPO


async def _say(desk, session_id: str | None, text: str) -> list[Item]:
    return [e.item for e in await drain(desk.runner.send(session_id, text)) if isinstance(e, Appended)]


def _questions(items: list[Item]) -> list[Message]:
    return [i for i in items if isinstance(i, Message) and i.role == "agent" and "?" in i.text]


def _ran(items: list[Item], tool: str) -> list[ToolResult]:
    return [i for i in items if isinstance(i, ToolResult) and i.name == tool and not i.is_error and not i.awaits_approval]


async def test_a_refund_above_billings_limit_is_asked_once_by_senior_and_runs_on_the_first_yes(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "I think you took my money twice this month. marco@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes")
    # Before the yes: one question, naming the amount, and it is the offer of the refund itself.
    [asked] = _questions(first)
    assert "$129.99" in asked.text and "refund" in asked.text.lower() and asked.agent == "senior"
    [offer] = [i for i in first if isinstance(i, Offer)]
    assert offer.tool == "refund_charge" and offer.arguments["amount"] == 129.99 and offer.agent == "senior"
    assert asked.meta.get("offer_id") == offer.offer_id
    # Billing said why it passed the refund on, in words the customer reads (not a question).
    [escalation] = [i for i in first if isinstance(i, Handoff)][-1:]
    assert (escalation.from_agent, escalation.to_agent, escalation.handoff_kind) == ("billing", "senior", "escalate")
    said = [i.text for i in first if isinstance(i, Message) and i.role == "agent" and i.agent == "billing"]
    assert said and "senior" in said[-1] and "$50.00" in said[-1]
    assert not _ran(first, "refund_charge")
    # The first yes runs exactly the offered refund; nothing is asked again.
    assert [c.offer_id for c in second if isinstance(c, Confirmation)] == [offer.offer_id]
    [refund] = _ran(second, "refund_charge")
    assert refund.call_id == f"{offer.offer_id}-yes"
    assert _questions(second) == [] and [i for i in second if isinstance(i, Offer)] == []
    assert "refunded $129.99" in [i.text for i in second if isinstance(i, Message) and i.role == "agent"][-1]


async def test_above_the_approval_threshold_the_customers_one_yes_then_staff_approval(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "I was charged twice, priya@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes")
        info = await desk.store.get_session(sid)
    # The session row says what the inbox says (issue 39 §4, one state): the browser's Status
    # column and `sessions` read it.
    assert info is not None and info.status == "awaiting_approval"
    [asked] = _questions(first)
    assert "$1,299.99" in asked.text and asked.agent == "senior"
    [offer] = [i for i in first if isinstance(i, Offer)]
    assert offer.arguments["amount"] == 1299.99
    # The yes is on record, then the refund waits for staff: not run, not asked again.
    assert [c.offer_id for c in second if isinstance(c, Confirmation)] == [offer.offer_id]
    assert [n.notice_kind for n in second if isinstance(n, Notice)] == ["approval_requested"]
    [held] = [i for i in second if isinstance(i, ToolResult) and i.name == "refund_charge"]
    assert held.awaits_approval and held.call_id == f"{offer.offer_id}-yes" and _questions(second) == []


async def test_a_credit_only_senior_may_add_is_asked_once(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "the app was down all day yesterday, can you give me some credit? dana@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "$20")
        third = await _say(desk, sid, "yes")
        fourth = await _say(desk, sid, "yes")
    # Passed up at once (billing holds no credit tool), then senior asks for the amount, then
    # asks once about exactly that credit, with the call.
    assert not [i for i in first if isinstance(i, Offer)]
    [offer] = [i for i in second if isinstance(i, Offer)]
    assert offer.tool == "issue_credit" and offer.arguments["amount"] == 20.0
    [asked] = _questions(second)
    assert "$20.00" in asked.text and asked.meta.get("offer_id") == offer.offer_id
    [credit] = _ran(third, "issue_credit")
    assert credit.call_id == f"{offer.offer_id}-yes" and _questions(third) == []
    # A later "yes" confirms nothing: no second credit is offered or made.
    assert not [i for i in fourth if isinstance(i, Offer)] and not _ran(fourth, "issue_credit")


async def test_the_reset_offered_beside_an_article_runs_on_the_first_yes(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "I can't log in to my account, dana@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes please")
    [asked] = _questions(first)
    assert "password reset link" in asked.text and "Can't log in" in asked.text  # the article, and the offer
    [offer] = [i for i in first if isinstance(i, Offer)]
    assert offer.tool == "send_password_reset" and asked.meta.get("offer_id") == offer.offer_id
    assert not _ran(first, "send_password_reset")
    [sent] = _ran(second, "send_password_reset")
    assert sent.call_id == f"{offer.offer_id}-yes" and _questions(second) == []


async def test_a_reset_asked_for_after_the_email_is_one_question_in_the_agents_words(db_path):
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "I can't log in to my account")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes please, dana@example.com")
        third = await _say(desk, sid, "yes")
    assert not [i for i in first if isinstance(i, Offer)]
    [asked] = _questions(second)
    assert "Before I do anything" not in asked.text and "reset" in asked.text
    assert len(_ran(third, "send_password_reset")) == 1 and _questions(third) == []


async def test_a_duplicate_seen_while_answering_about_charges_is_asked_once_by_billing_for_senior(db_path):
    """The customer asked what a charge was, not for a refund: billing stays and asks the one
    question, the exact refund, on the senior's behalf (money-13); the yes hands over and the
    senior makes exactly that refund, asking nothing more."""
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "what did you charge me on May 5th? marco@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes")
        info = await desk.store.get_session(sid)
    assert not [i for i in first if isinstance(i, Handoff) and i.to_agent == "senior"]
    [asked] = _questions(first)
    assert "$129.99" in asked.text and asked.agent == "billing"
    [offer] = [i for i in first if isinstance(i, Offer)]
    assert (offer.agent, offer.for_agent) == ("billing", "senior")
    [refund] = _ran(second, "refund_charge")
    assert refund.call_id == f"{offer.offer_id}-yes" and refund.agent == "senior" and info.active_agent == "senior"
    assert _questions(second) == []


async def test_thanks_after_the_reset_offered_beside_the_steps_is_thanks(db_path):
    """The gate closed the reset offer on "thanks, that sorted it": no link, and the agent takes
    it as the steps having worked (here: on to the price question the customer also asked)."""
    desk = await open_desk(db_path, REPO / "agents.toml")
    async with desk:
        first = await _say(desk, None, "I can't log in, and how much is the Pro plan by the way? dana@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "thanks, that sorted it")
    assert [i.tool for i in first if isinstance(i, Offer)] == ["send_password_reset"]
    assert not _ran(second, "send_password_reset")
    assert "$29.99" in " ".join(i.text for i in second if isinstance(i, Message) and i.role == "agent")


async def test_on_a_desk_without_the_gate_for_refunds_senior_still_asks_once_and_the_yes_runs_it(db_path):
    """`[confirm] refund_charge = "none"`: no call goes with senior's question (it would run at
    once); the model reads the yes with the desk's reader and makes the refund it offered."""
    from supportdesk.config import parse_desk

    config = parse_desk((REPO / "agents.toml").read_text() + '\n[confirm]\nrefund_charge = "none"\n', "agents.toml")
    desk = await open_desk(db_path, config)
    async with desk:
        first = await _say(desk, None, "I think you took my money twice this month. marco@example.com")
        sid = first[0].session_id
        second = await _say(desk, sid, "yes")
    [asked] = _questions(first)
    assert "$129.99" in asked.text and asked.agent == "senior" and not _ran(first, "refund_charge")
    [refund] = _ran(second, "refund_charge")
    assert refund.agent == "senior" and _questions(second) == []


def test_figures_alone_tell_no_duplicate():
    """"$20", the amount a question asked for, is no duplicate charge told, though the desk
    intents reader reads one in it (0.99, at its bar): the senior asking a credit's amount got
    "$20" and offered a duplicate's refund instead (after route-13's lines)."""
    from supportdesk.models.offline.skills.money.intents import _intents_in

    assert "duplicate" not in _intents_in("$20")
    assert "duplicate" in _intents_in("you took 9.99 two times in march")
