"""The technical agent's understanding, family tech-20 (issue 38): a new matter announced before it
is said, a question about the reset link rather than a request for one (one reading of a request
for the link, the reset tool's and the skill's), a sign-in refused beside someone else's access,
and product questions the articles answer or none does."""

from __future__ import annotations

from supportdesk.engine.confirmation import requests_apart
from supportdesk.models.offline.router import without_announcement
from supportdesk.tools.kb import knowledge_base  # type: ignore[attr-defined]
from supportdesk.tools.technical import _reset_asked_for
from tests.money_turns import MONEY, passes

CONFIG = "evals/config-agent.toml"
NOT_TOOLS = [*MONEY, "send_password_reset"]


def test_the_count_of_matters_to_come_is_no_matter():
    """"two things:" names none of the things ("two" is the two-factor article's word)."""
    assert without_announcement("two things: how long does a reset link last?") == "how long does a reset link last?"
    assert without_announcement("2 questions - is there a dark mode") == "is there a dark mode"
    assert without_announcement("a couple of questions: where are invoices") == "where are invoices"
    # a count that is the matter stays ("two factor", "2 charges")
    assert without_announcement("two factor codes dont arrive") == "two factor codes dont arrive"
    assert without_announcement("2 charges on my card this month") == "2 charges on my card this month"


async def test_a_matter_announced_as_another_is_searched_without_the_announcement():
    """With "separate thing," in the query, the search was unsure of the sync trouble after it and
    found no article."""
    await passes({"name": "t", "turns": [
        {"customer": "someone logged into my account from a country ive never visited", "expect": {"agent": "security", "not_tools": NOT_TOOLS}},
        {"customer": "separate thing, the mac app won't sync a 3gb folder to my laptop", "expect": {
            "agent": "technical", "reply": ["Files are not syncing"], "not_tools": NOT_TOOLS}},
    ]}, CONFIG)


def test_a_request_beside_a_question_asks_for_nothing():
    """One reading (engine/confirmation.requests_apart) for the reset tool's gate and the skill: a
    clause the act reader hears as a request, beside another that asks a question, asks about it."""
    curious = "out of curiosity, when i get a reset email, how long does the link keep working?"
    assert requests_apart(curious) == []
    assert not _reset_asked_for(curious)
    assert not _reset_asked_for("2 questions about the reset mail: is it valid for long, and is the first link still usable?")
    # asked apart from a problem told, it is a request (reset15), and the gate reads it as one
    assert requests_apart("forgot my pw again 🙄 link to dana@example.com")
    assert _reset_asked_for("pls send a reset link to dana@example.com thx")
    # a question about money beside it is a matter of its own (the money reader's): still asked
    assert _reset_asked_for("send me a reset link for dana@example.com, and when do you bill me next?")
    # a problem told beside it, opening like a question ("can't ..."), is no question
    assert requests_apart("can't sign in at all, could you send me a reset link")
    # asked for by its verb beside a question about it: the question is heard, the link waits for a yes
    assert requests_apart("pls send a reset link to dana@example.com, and how long does the link keep working?") == []


async def test_questions_about_the_reset_link_get_the_article_and_no_link():
    """Nothing failing told and nothing asked for: the article answers, no link goes out and none
    is offered (the customer did not ask for it)."""
    await passes({"name": "t", "turns": [{"customer": "does the reset link ever expire? and is the old one dead once i ask for another?", "expect": {
        "reply": ["30 minutes", "newest link"], "reply_not": ["shall i", "what's the email"], "context_absent": ["pending_offer"], "not_tools": NOT_TOOLS}}],
        "expect": {"tool_counts": {"send_password_reset": 0}}})


async def test_a_sign_in_refused_beside_someone_elses_access_is_the_access_matter():
    """Split in two, the refused password went to technical first and the changed recovery email
    waited; the lockout is what the access did: one matter, security's."""
    await passes({"name": "t", "turns": [{"customer": "my password isnt accepted anymore and my backup email got changed by somebody else", "expect": {
        "agent": "security", "not_tools": NOT_TOOLS}}]}, CONFIG)


async def test_a_sign_in_refused_alone_stays_technical():
    await passes({"name": "t", "turns": [{"customer": "my password isnt accepted anymore since this morning", "expect": {
        "agent": "technical", "not_tools": NOT_TOOLS}}]}, CONFIG)


def test_what_no_article_answers_and_the_password_length():
    """Written examples (tools/kb/examples-written.txt) of how folders look, which no article
    covers, and the change-password article's tags for its length rule."""
    kb = knowledge_base()
    assert kb.answer("can i colour code my folders so they look different?") == []
    assert kb.answer("any way to give a folder its own icon") == []
    assert [a.slug for a, _ in kb.answer("what is the shortest password acme accepts")][:1] == ["change-password"]


def test_a_how_to_after_a_turn_to_it_is_offered_the_link():
    """"also how do I reset my password?" is the how-to that gets the link offered, not a question
    about the link answered by the article alone: it passed only while the act reader heard it as
    a problem (0.70), and read as the question it is (acts-17), the "also" hid the how-to."""
    from supportdesk.models.offline.skills.technical import asks_about_the_reset

    assert not asks_about_the_reset("also how do I reset my password?")
    assert asks_about_the_reset("does the reset link ever expire? and is the old one dead once i ask for another?")
