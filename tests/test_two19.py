"""Two matters in one message, both answered (issue 38, round 19: the two19 family,
evals/two19-tune.jsonl).

Each test guards one protection and fails (never hangs) with it removed:
- a question waiting beside a trouble's steps is answered in the same reply
  (`Specialist._question_waits`, read by `asks_information`); an action waiting is offered after them (round 20);
- the customer's next message, reporting on the steps, goes back to the steps' agent
  (`Specialist._steps_report_elsewhere`, `reports_on_steps`), with the trouble kept as the issue
  (`triage.decide`'s hand-back branch, `dialogue.STEPS_OUT`);
- a price and a read of the account asked together are both answered
  (`MoneySkill._joined_reads` and the price said first in `MoneySkill._money`), and a price asked
  again after a price is no plan change (`MoneyPlans._plan_question_taken`).
"""

from __future__ import annotations

from supportdesk.models.offline.cues import reports_on_steps
from supportdesk.models.offline.specialist import asks_information
from tests.test_offline_moves import one_turn, talk

def test_a_question_is_information_and_an_action_is_not():
    assert asks_information("also how much is starter a month?")
    assert asks_information("whats my march invoice number? CUS-1003")  # the id leans the reader to a request
    assert not asks_information("can you refund the march charge?")
    # the act reader hears a question here; the credit asked is an action all the same
    assert not asks_information("can i get a credit for the outage?")
    assert not asks_information("pls change my plan to pro. CUS-1004")


def test_a_report_on_the_steps_is_read_failed_or_worked():
    assert reports_on_steps("nope, still crashes")
    assert reports_on_steps("ok now it works, thanks")
    assert not reports_on_steps("when is my next payment?")
    assert not reports_on_steps("and my march invoice?")


async def test_the_price_beside_a_crash_is_answered_after_the_steps(tmp_path):
    turn = await one_turn(tmp_path, "the android app crashes when i open a photo. also whats pro per month?")
    said = turn.said()
    assert "The app crashes or freezes" in said and "$29.99" in said
    assert turn.handoffs() == ["triage>technical", "technical>triage", "triage>billing"]
    assert not turn.ran_unasked()


async def test_the_report_on_the_steps_goes_back_to_the_technical_agent(tmp_path):
    first, failed = (await talk(tmp_path, "files wont sync on my laptop, also how much is starter a month", "did that, still not syncing"))[0]
    assert "$9.99" in first.said() and first.agent == "billing"
    assert failed.handoffs()[:2] == ["billing>triage", "triage>technical"]
    assert "$9.99" not in failed.said()
    # The ticket the failed steps lead to names the trouble, not only "still not syncing".
    [ticket] = failed.calls("create_ticket")
    assert "sync" in ticket.arguments["summary"].split(".")[0]
    assert not failed.context.get("steps_out")


async def test_the_steps_reported_to_work_close_at_the_technical_agent(tmp_path):
    turns, _ = await talk(tmp_path, "the iphone app freezes on startup. btw how much is team a month?", "ok it works now, thanks")
    worked = turns[1]
    assert worked.handoffs() == ["billing>triage", "triage>technical"] and "welcome" in worked.said().lower()
    assert not worked.ran_unasked()


async def test_a_refund_beside_a_trouble_is_taken_up_and_nothing_runs_unasked(tmp_path):
    # (since round 20, `Specialist._action_waits`: the refund asked is billing's in the steps'
    # reply; no charge of CUS-1003's is refundable, so nothing is offered and nothing runs)
    turn = await one_turn(tmp_path, "my app crashes whenever i upload a pdf, and please refund my last charge CUS-1003")
    assert turn.agent == "billing" and not turn.context.get("pending_offer")
    assert not turn.context.get("pending_issues") and not turn.ran_unasked()


async def test_a_price_and_an_invoice_asked_together_are_both_answered(tmp_path):
    turn = await one_turn(tmp_path, "how much is the team plan and what's my february invoice number? CUS-1003")
    said = turn.said()
    assert "$129.99" in said and "INV-5008" in said
    assert not turn.ran_unasked()


async def test_a_price_and_the_next_payment_asked_together_are_both_answered(tmp_path):
    turn = await one_turn(tmp_path, "how much is starter per year and when do you bill me next? CUS-1003")
    said = turn.said()
    assert "$99.99" in said and "April 26, 2026" in said


async def test_the_price_asked_again_after_the_price_is_no_plan_change(tmp_path):
    # `MoneyPlans._plan_question_taken`: "and the pro price?" after "Would you like to change your
    # plan?" asks the price again; it takes no change (the account is not asked for).
    turns, _ = await talk(tmp_path, "what does pro cost per month?", "and the pro price?")
    again = turns[1]
    assert "$29.99" in again.said() and "email" not in again.said().lower()
    assert not again.context.get("pending_offer")
