"""A fact an article states, asked as a question (issue 38, the facts19 family:
evals/facts19-tune.jsonl).

Each test guards one mechanism and fails with it removed:
- an address asked (a status page, a sender to allow) is answered by the one article whose step
  states one, as a size or a time is (`lexicon.ASKS_ADDRESS` in `MEASURES`, `KnowledgeBase.measured`);
- a time, a size or an address asked that no step of the article found states is not that
  article's to answer (`KnowledgeBase.unstated`, `decide`);
- a fact asked beside a trouble told, unmarked or before a failure told after it, is answered as
  a question, not as "what usually fixes this" (`technical.asks_a_fact` in `asks_beside_trouble`);
- an address asked in a sentence of its own is money or not by that sentence read whole
  (`triage._address_asked` in `_money_without_money`).
"""

from __future__ import annotations

from supportdesk.models.offline import triage
from supportdesk.models.offline.skills import technical
from supportdesk.tools.kb import knowledge_base
from tests.test_offline_moves import one_turn, talk

def _steps(slug: str) -> str:
    article = knowledge_base().get(slug)
    assert article is not None
    return " ".join([article.title, *article.steps])


def test_a_status_page_asked_finds_the_article_whose_step_names_it():
    kb = knowledge_base()
    # (Without the address asked, BM25 and the example model find none: "broken" leans elsewhere.)
    hits = kb.answer("is there a status page for acme? stuff seems broken for the whole office")
    assert hits and hits[0][0].slug == "performance"


def test_a_sender_asked_finds_the_notifications_article():
    hits = knowledge_base().answer("which email address are the notification mails sent from? we whitelist senders")
    assert hits and hits[0][0].slug == "notifications"


def test_a_time_no_step_of_the_article_states_is_not_answered_by_it():
    kb = knowledge_base()
    query = "the union asks: does acme keep the IP addresses our employees log in from, and for how long?"
    assert "single-sign-on" in kb.unstated(query)
    assert kb.answer(query) == []


def test_a_fact_asked_beside_a_trouble_without_a_question_mark_is_a_question():
    article = _steps("account-locked")
    assert technical.asks_beside_trouble("typed the wrong password too often and now im locked. how long do i have to wait", article)
    # A remedy asked is still the fix's: "how long until you fix it" asks for no fact.
    assert not technical.asks_beside_trouble("typed the wrong password too often and now im locked. how do i fix it", article)


def test_a_which_question_before_a_failure_told_is_still_a_question():
    article = _steps("sync-issues")
    assert technical.asks_beside_trouble("which file names does sync refuse? some files never upload", article)


def test_an_address_asked_is_read_for_money_by_its_own_sentence():
    text = "our spam filter swallows everything new. what address do the notification emails come from so i can put it on our list"
    asked = triage._address_asked(text)
    assert asked is not None and asked.startswith("what address")
    assert triage._address_asked("what address do the notification emails come from?") is None


async def test_a_lock_time_asked_after_the_lock_is_told_is_answered_not_fixed(tmp_path):
    turn = await one_turn(tmp_path, "my account got locked, wrong password too many times. how long until i can sign in again")
    said = turn.said()
    assert "30 minutes" in said and "usually fixes" not in said
    assert not turn.ran_unasked()


async def test_a_sender_asked_around_a_mail_filter_reaches_the_articles_not_billing(tmp_path):
    # Read apart, "so i can put it on the allowed list" is a charge to the learned money gate.
    turns, _ = await talk(
        tmp_path,
        "our firewall eats every unknown mail. which address do the acme notification emails come from so i can put it on the allowed list",
    )
    (turn,) = turns
    assert turn.agent == "technical" and "notifications@acmecloud.example" in turn.said()
    assert not turn.ran_unasked()
