"""Routing, hand-back and chit-chat understanding, family route-16b (issue 38): greetings and
closings in words the act reader had not seen, and a circumstance told before what is asked
("our project wrapped up so please end my subscription") that drowned the money in the request."""

from __future__ import annotations

from supportdesk.config import load_desk
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.specialist import skills_of
from supportdesk.models.offline.triage import _names_money_somewhere, _only_social, issues
from supportdesk.readers.acts import read_act
from tests.money_turns import MONEY, passes

NOT_TOOLS = [*MONEY, "send_password_reset"]


def test_a_circumstance_told_first_does_not_drown_the_money_asked_for():
    """The learned money gate reads the whole message: the circumstance's words outweighed "end my
    subscription" and billing was passed over for a message "naming no money"."""
    assert _names_money_somewhere("our project wrapped up so please end my acme subscription")
    assert _names_money_somewhere("changed jobs in feb and never logged in after that, so pls give back february's payment")
    # a circumstance alone, or a product problem, still names none
    assert not _names_money_somewhere("our project wrapped up so we archived the old folders")
    assert not _names_money_somewhere("the app is so slow since the update")


async def test_a_cancel_after_a_circumstance_is_billings_offer():
    await passes({"name": "t", "turns": [
        {"customer": "our client project is finished and the whole team moved to other work so please end my acme subscription. dana@example.com", "expect": {
            "agent": "billing", "offers": ["cancel_subscription"], "not_tools": NOT_TOOLS}},
    ]})


def test_greetings_and_closings_in_unseen_words_are_read_as_such():
    """The act reader's training lines (evals/act-lines-16b-tune.jsonl) and triage's clause by
    clause reading of them: a hello with "just saying hi" in it was read as the desk's matter."""
    assert read_act("ta very much").act == "thanks"
    assert read_act("ok ttyl, cya").act == "goodbye"
    assert _only_social("hey everyone, greetings from oslo, just saying hello")
    assert _only_social("evening all, hope you're keeping well")
    # a greeting beside a matter is no greeting only (read whole, the act reader hears a greeting)
    assert not _only_social("hi there! my sync broke")
    assert not _only_social("good morning, the app crashes")
    assert not _only_social("hello! quick question about pricing")
    assert not _only_social("hi there, CUS-1001 here")
    assert not _only_social("talk me through modifying my details")  # (a dev-set matter the reader hears as goodbye)
    assert not _only_social("weird login alert from lagos just now")  # (no place names in the greeting lines: "lagos" once leaned it to one)


async def test_a_hello_in_unseen_words_gets_no_article():
    await passes({"name": "t", "turns": [{"customer": "hey everyone, warm greetings from oslo, just saying hello before work", "expect": {
        "reply_not": ["usually fixes", "covers this", "none of our help articles"], "not_tools": NOT_TOOLS}}]})


def _entry_router() -> Router:
    desk = load_desk("agents.toml")
    entry = desk.agents[desk.desk.entry]
    return Router([desk.agents[n] for n in entry.handoffs if skills_of(desk.agents[n])], use_disk_cache=False, desk_name=desk.desk.name)


def test_a_problem_told_before_an_added_question_is_a_matter_of_its_own():
    """The part before the question was heard as its preamble (carries_its_question) though the
    customer added the question to it ("plus", "also") or counted the matters first."""
    router = _entry_router()
    added = issues("the person i invited says the invite email never showed up. plus what's pro per year?", router)
    assert [route.agent for route, _ in added] == ["technical", "billing"]
    # counted first, a problem the router places less surely is one of the matters too
    counted = issues("two things: the windows app won't even start since yesterday's update, and how much is team a month?", router)
    assert [route.agent for route, _ in counted] == ["technical", "billing"]
    # a circumstance that leads to the question stays its preamble
    assert issues("I've been a customer for years and money is tight: if we downgraded, would we lose anything?", router) == []
