"""Two matters in one message after an answered question, two reads of the account, and a
person asked for (issue 38, round 19b: the two26 family, evals/two26-tune.jsonl).

Each test guards one protection and fails (never hangs) with it removed:
- an information question waiting behind a question answered here (a price) is taken up in the
  same reply, the price's invitation to change plans dropped (`Specialist._question_after_answer`),
  and kept when nothing waits;
- two reads of the account joined in one message are both answered (`MoneySkill._money`'s joined
  reads), "+" joining as "and" does (`cues.QUESTIONS_JOINED`);
- a person asked for at once is told "a person" will join (`triage.decide`'s person reply).
"""

from __future__ import annotations

from supportdesk.models.offline import cues
from tests.test_offline_moves import one_turn

def test_a_plus_joins_two_questions():
    assert len(cues.QUESTIONS_JOINED.split("which card is on file + when is next payment")) == 2
    assert len(cues.QUESTIONS_JOINED.split("a+b")) == 1


async def test_a_price_and_a_setting_asked_together_are_both_answered(tmp_path):
    turn = await one_turn(tmp_path, "whats the team plan a month? and how do i change my password")
    said = turn.said()
    assert "$129.99" in said and "Changing your password" in said
    assert "change your plan?" not in said  # the invitation gave way to the next question
    assert not turn.context.get("pending_offer")
    assert not turn.ran_unasked()


async def test_a_price_alone_keeps_its_invitation(tmp_path):
    turn = await one_turn(tmp_path, "how much is the pro plan per month?")
    assert "$29.99" in turn.said() and turn.said().rstrip().endswith("Would you like to change your plan?")
    assert not turn.ran_unasked()


async def test_two_reads_of_the_account_are_both_answered(tmp_path):
    turn = await one_turn(tmp_path, "dana@example.com here. when will you charge me next and whats the invoice number for february?")
    said = turn.said()
    assert "April 1, 2026" in said and "INV-5002" in said
    assert not turn.ran_unasked()


async def test_a_person_asked_for_is_called_a_person(tmp_path):
    turn = await one_turn(tmp_path, "i want to talk to a human now. someone got into my acme account")
    assert turn.calls("request_human") and "a person" in turn.said()
    assert not turn.ran_unasked()
