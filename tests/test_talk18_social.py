"""Talk-18 (issue 38): a message that is only social, read clause by clause (triage.social_kind),
is answered by triage, never searched; a social opening with a matter after it is the matter's."""

from __future__ import annotations

from supportdesk.models.offline import triage
from tests.conftest import REPO, shipped_specialists

GREETED, CHATTED = triage.GREETED, triage.CHATTED


def test_a_trouble_denied_beside_a_hello_is_no_matter():
    """"nothing wrong" reads as a problem (0.92, then 0.99 with the background estimate) until the
    words its denial governs are set aside (triage._trouble_denied)."""
    agents = shipped_specialists()
    assert triage.social_kind("hiya team, greetings from cape town 🌍 nothing wrong, just waving", agents) == GREETED
    # a denied word that carries no trouble leaves a matter
    assert triage.social_kind("hi, no sync since monday", agents) is None


def test_a_plan_name_in_a_hello_is_who_is_greeted():
    agents = shipped_specialists()
    assert triage.social_kind("hi team, just saying hello", agents) == GREETED
    assert triage.social_kind("thanks for the team plan", agents) is None


def test_a_short_afterthought_is_read_with_the_small_talk_before_it():
    """"never tired?" alone reads as the desk's (scope in_scope 0.93); with the clause it follows up,
    as small talk. Only the scope reader reads the pair: the act reader hears a hello in "hey, app
    crashing" read whole."""
    agents = shipped_specialists()
    assert triage.social_kind("you working all the night, never tired?", agents) == CHATTED
    assert triage.social_kind("whats ur favourite season, summer or winter?", agents) == CHATTED
    assert triage.social_kind("hey, app crashing", agents) is None
    assert triage.social_kind("hi, data lost", agents) is None
    # a matter told after small talk is no afterthought: only a question is
    assert triage.social_kind("do u ever sleep? app keeps crashing", agents) is None
    # nor a short clause said in one agent's job words, however unsure its act
    assert triage.social_kind("do you like your job? upload failing", agents) is None
    assert triage.social_kind("do u sleep? billing?", agents) is None
    assert triage.social_kind("u a bot? pricing?", agents) is None
    # a question asked in a job's words asks of the desk's matter ("sync ok?" is a greeting to the
    # act reader)
    assert triage.social_kind("hello, sync ok?", agents) is None
    # nor one the act reader places surely as no social act
    assert triage.social_kind("u a robot? help pls?", agents) is None
    # nor a matter told without a question mark, in words no job uses
    assert triage.social_kind("haha ur funny, app froze", agents) is None


def test_an_interjection_says_nothing_more_unless_it_names_a_fact():
    agents = shipped_specialists()
    assert triage.social_kind("sweet, all sorted now 👍 cheers", agents) is not None
    assert triage.social_kind("wow you answer fast for a program, impressive", agents) == CHATTED
    # a few common words, one of which a job happens to use, name no job (triage.JOB_WEIGHT)
    assert triage.social_kind("how are you today?", agents) == GREETED
    assert triage.social_kind("all set now?", agents) == triage.THANKED
    assert triage.social_kind("hey, 2fa?", agents) is None
    assert triage.social_kind("hi there, CUS-1001 here", agents) is None
    # nor what the scope reader reads as the desk's ("acct hacked" leans to thanks)
    assert triage.social_kind("acct hacked. help", agents) is None


def test_a_fact_named_is_for_a_matter():
    """The scope reader hears small talk in "what did you charge me in february" (asked of "you");
    the address given says it is asked for a matter."""
    agents = shipped_specialists()
    assert triage.social_kind("hi its tara.haddad19@example.com, what did you charge me in february", agents) is None


def test_the_day_told_beside_small_talk_is_no_matter():
    agents = shipped_specialists()
    # a question is the desk's whatever its words
    assert triage.social_kind("Hello, there is option for to put watermark on the photos before I share them?", agents) is None
    assert triage.social_kind("ignore the last msg, my toddler grabbed my phone haha", agents) == CHATTED
    # told alone it is no social message (nothing social is said)
    assert triage.social_kind("my toddler grabbed my phone haha", agents) is None


async def test_social_messages_are_answered_by_triage_and_a_matter_after_a_hello_is_handled():
    from supportdesk.commands.evals import evaluate_conversations

    searched = ["usually fixes", "covers this", "none of our help articles", "Our article"]
    convos = [
        {"name": "afterthought", "turns": [{"customer": "you working all the night, never tired?", "expect": {
            "agent": "triage", "reply": [triage.CHIT_CHAT_REPLY.split("!")[0]], "reply_not": searched}}]},
        {"name": "denied", "turns": [{"customer": "hiya team, greetings from cape town 🌍 nothing wrong, just waving", "expect": {
            "agent": "triage", "reply": ["welcome to"], "reply_not": searched}}]},
        {"name": "matter", "turns": [{"customer": "hiya from toronto 🙂 the app keeps crashing when i open a pdf", "expect": {
            "agent": "technical", "reply": ["The app crashes or freezes"]}}]},
        # small talk read clause by clause answers after the refusal of another domain's request
        {"name": "joke", "turns": [{"customer": "can you tell me a joke about cats?", "expect": {"agent": "triage", "reply": ["outside"]}}]},
    ]
    results = await evaluate_conversations(convos, config=str(REPO / "agents.toml"))
    assert [r.failures for r in results if not r.passed] == []
