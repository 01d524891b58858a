"""A yes after a reply that asked two things confirms the offer only when it names the offer's
action (the desk's gate, engine/confirmation.py: `asked_beside`, `names_the_action`).

Since round 20 a refund or cancellation asked beside a trouble is offered in the same reply as the
trouble's steps ("let me know whether that works"). A customer's "great, all sorted now" then
reports on the steps; read as a yes it ran a refund nobody asked for. The gate now asks again
unless the yes names the action ("yes refund it") or is assent alone ("yes", "sure go ahead": the
offer's question is asked last). The same holds when the offering agent first asked who the
customer is: "what's your email?", "dana@example.com", then the offer, leave the steps' question
unanswered beside it (`offers_exchange`). Each test fails with the guard removed.
"""

from __future__ import annotations

import pytest

from supportdesk.engine.confirmation import asked_beside, gives_only_details, names_the_action, offers_exchange, read_answer
from supportdesk.items import Confirmation, Handoff, Message, Offer, ToolResult
from supportdesk.models.offline import triage
from tests.test_offline_moves import talk_raw

TROUBLE_AND_DUPLICATE = (
    "push notifications stopped on my android phone. also you charged my starter plan twice, "
    "on the 5th and the 6th. grace.tanaka6@example.com"
)


def test_a_yes_names_the_action_by_its_verb():
    offered = "I found it. The one on March 6, 2026 is a duplicate. Would you like me to refund it?"
    assert names_the_action("yes refund it", offered)
    assert names_the_action("yep, please refund", offered)
    assert not names_the_action("great, all sorted now", offered)
    assert not names_the_action("yes", offered)


def test_a_question_of_another_agent_in_the_offers_turn_is_asked_beside():
    offer = Offer(offer_id="o1", tool="refund_charge", action="refund $9.99", text="Would you like me to refund it?", agent="billing")
    steps = Message(role="agent", agent="technical", text="1. Check Settings. Let me know whether that works.")
    own = Message(role="agent", agent="billing", text="Would you like me to refund it?")
    assert asked_beside([steps, own], offer)
    assert not asked_beside([own], offer)  # the offering agent's own question is the offer's


@pytest.mark.parametrize("report", ["great, all sorted now", "lovely, all good with the phone now", "yes they work again!"])
async def test_a_report_on_the_steps_runs_no_refund_offered_beside_them(tmp_path, report):
    first, then = await talk_raw(tmp_path, TROUBLE_AND_DUPLICATE, report)
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in first)
    assert not any(isinstance(i, Confirmation) for i in then)
    assert not any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)


@pytest.mark.parametrize("yes", ["yes refund it", "yes", "sure go ahead"])
async def test_a_yes_that_names_the_refund_or_says_only_yes_runs_it(tmp_path, yes):
    _, then = await talk_raw(tmp_path, TROUBLE_AND_DUPLICATE, yes)
    assert any(isinstance(i, Confirmation) and i.tool == "refund_charge" for i in then)
    assert any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)


# The steps and the duplicate told with no email: billing asks for it, and offers in the next turn.
TROUBLE_AND_DUPLICATE_NO_EMAIL = "my app keeps crashing since the update, and I think I was charged twice for pro this month"


def test_a_message_giving_only_who_the_customer_is_answers_no_other_question():
    for said in ("dana@example.com", "sure, it's dana@example.com", "CUS-1001", "the email on the account is dana@example.com thanks"):
        assert gives_only_details(said), said
    for said in ("dana@example.com, and the app still crashes", "ok it works now", "yes", "great, all sorted now"):
        assert not gives_only_details(said), said


def test_the_offers_exchange_reaches_back_over_details_to_the_message_they_followed():
    told = Message(role="customer", text=TROUBLE_AND_DUPLICATE_NO_EMAIL)
    steps = Message(role="agent", agent="technical", text="1. Update the app. Let me know whether that works.")
    ask = Message(role="agent", agent="billing", text="What's the email address on your account?")
    email = Message(role="customer", text="dana@example.com")
    # (the question the email answered is left out: answered, it is asked beside nothing)
    assert offers_exchange([told, steps, ask, email]) == [told, steps, email]
    still = Message(role="customer", text="it still crashes")
    assert offers_exchange([told, steps, still, ask, email]) == [still, email]
    assert offers_exchange([steps, ask]) is None


@pytest.mark.parametrize("report", ["great, all sorted now", "ok the app works now after the update, thanks"])
async def test_a_report_after_the_email_turn_runs_nothing_and_the_refund_is_offered_again(tmp_path, report):
    first, email, then, yes = await talk_raw(tmp_path, TROUBLE_AND_DUPLICATE_NO_EMAIL, "dana@example.com", report, "yes")
    assert not any(isinstance(i, Offer) for i in first)  # (billing asked for the email first)
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in email)
    assert not any(isinstance(i, Confirmation) for i in then)
    assert not any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)
    # The report goes back to the technical agent, whose steps they were; the refund asked for comes
    # after it, offered again, and the yes to that runs it once.
    assert [h.to_agent for h in then if isinstance(h, Handoff)][:2] == ["triage", "technical"]
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in then)
    assert [i.name for i in yes if isinstance(i, ToolResult) and not i.is_error] == ["refund_charge"]


# The duplicate first, the crash beside it: billing offers the refund once it has the email, and
# the crash waits its turn, with no steps given yet.
DUPLICATE_AND_TROUBLE = "I was charged twice for pro this month, and my app keeps crashing since the update"
REFUND_ASKED = "I found it. The one on March 3, 2026 is a duplicate. Would you like me to refund it?"


def test_a_thing_told_running_is_no_yes_and_assent_in_other_words_still_is():
    for said in ("ok great it works", "awesome, the app opens now", "cool, it's fine now", "great thanks, all working",
                 "great, all sorted now", "yes!! it's working"):
        assert read_answer(said, REFUND_ASKED) != "yes", said
    for said in ("that works for me", "all good, go ahead", "yes please", "yes that would be great thanks"):
        assert read_answer(said, REFUND_ASKED) == "yes", said


@pytest.mark.parametrize("report", ["awesome, the app opens now", "ok great it works", "cool, it's fine now"])
async def test_a_report_on_the_matter_waiting_runs_nothing_and_the_refund_is_put_again(tmp_path, report):
    _, email, then, yes = await talk_raw(tmp_path, DUPLICATE_AND_TROUBLE, "dana@example.com", report, "yes")
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in email)
    assert not any(isinstance(i, Confirmation) for i in then)
    [again] = [i for i in then if isinstance(i, Offer)]
    assert again.tool == "refund_charge" and again.text.startswith("Glad to hear")
    assert [i.name for i in yes if isinstance(i, ToolResult) and not i.is_error] == ["refund_charge"]
    # (working now: the crash that waited is settled by their word, not answered with steps)
    assert not any(isinstance(i, Handoff) for i in yes)


async def test_a_report_that_it_still_fails_puts_the_refund_again_and_the_trouble_comes_after(tmp_path):
    _, _, then, yes = await talk_raw(tmp_path, DUPLICATE_AND_TROUBLE, "dana@example.com", "still crashing though", "yes")
    assert not any(isinstance(i, Confirmation) for i in then)
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in then)
    assert [i.name for i in yes if isinstance(i, ToolResult) and not i.is_error][:1] == ["refund_charge"]
    assert [h.to_agent for h in yes if isinstance(h, Handoff)] == ["triage", "technical"]


async def test_a_cancellation_after_a_stance_word_is_a_matter_of_its_own_and_no_report_runs_it(tmp_path):
    # ("and honestly i want to cancel": the stance word kept the two matters one, and the
    # cancellation was never offered; now the crash's steps come first and the cancellation next)
    told = "the app keeps crashing and honestly I want to cancel my subscription"
    assert len(triage._pieces(told)) == 2
    assert len(triage._pieces("the app crashes and really annoys me")) == 1
    first, email, report = await talk_raw(tmp_path, told, "dana@example.com", "ok great it works")
    assert [h.to_agent for h in first if isinstance(h, Handoff)] == ["technical", "triage", "billing"]
    assert any(isinstance(i, Offer) and i.tool == "cancel_subscription" for i in email)
    assert not any(isinstance(i, Confirmation) for i in report)


SEED = "Hi, I was charged twice for my subscription this month. My email is dana@example.com."


@pytest.mark.parametrize("ack", ["perfect, thanks for finding that", "great, thanks for checking", "ok good to know"])
async def test_a_finding_acknowledged_runs_nothing_and_the_refund_is_asked_again(tmp_path, ack):
    first, then, yes = await talk_raw(tmp_path, SEED, ack, "yes please")
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in first)
    assert not any(isinstance(i, Confirmation) for i in then)
    assert not any(isinstance(i, ToolResult) and i.name == "refund_charge" and not i.is_error for i in then)
    assert any(isinstance(i, Offer) and i.tool == "refund_charge" for i in then) or ack == "ok good to know"
    if ack != "ok good to know":  # (no thanks in it: the offer is closed, and asked anew on the yes)
        assert [i.name for i in yes if isinstance(i, ToolResult) and not i.is_error] == ["refund_charge"]
