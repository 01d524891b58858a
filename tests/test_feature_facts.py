"""A feature's fact asked in customers' words (kbfacts15): a question about a feature that names a
plan gets the feature's article, not the plan's price or a plan change; a measure asked is answered
as a question, not as a trouble's fix; a denied loss or theft is not what is searched or answered;
ground read from a plan question's shape alone is searched in the articles first."""

from __future__ import annotations

from supportdesk.models.offline import triage
from supportdesk.models.offline.skills import technical
from tests.money_turns import MONEY, failures, passes

NOT_TOOLS = [*MONEY, "send_password_reset"]


def test_a_feature_asked_on_a_plan_named_is_no_plan_question():
    assert triage.asks_feature_of_a_plan("on the starter plan how many days of file versions do i get?")
    assert triage.asks_feature_of_a_plan("is sso something we get on the team plan?")
    # a plan's price, contents or change stays the plan's
    assert not triage.asks_feature_of_a_plan("how much is the team plan per month")
    assert not triage.asks_feature_of_a_plan("what does the team plan include?")
    assert not triage.asks_feature_of_a_plan("can i switch to team, we need sso")
    assert not triage.asks_feature_of_a_plan("what would pro run me per month next to my current plan?")
    assert not triage.asks_feature_of_a_plan("when my current month runs out, move us up to the team plan")


async def test_a_feature_on_a_plan_gets_the_article_not_the_price():
    await passes({"name": "t", "turns": [{"customer": "on the starter plan how long are old file versions kept?", "expect": {
        "agent": "technical", "reply": ["Restoring deleted files"], "reply_not": ["$9.99", "change your plan"],
        "context_absent": ["pending_offer"], "not_tools": NOT_TOOLS}}]})
    # and the price asked is still the plan's
    await passes({"name": "t", "turns": [{"customer": "how much is the starter plan a month?", "expect": {
        "agent": "billing", "reply": ["$9.99"], "not_tools": NOT_TOOLS}}]})


def test_a_measure_asked_is_a_question_unless_a_trouble_is_told_first():
    assert technical.asks_a_measure("how many days before an invitation stops working?")
    assert technical.asks_a_measure("if i delete a file by mistake how long until it's gone for good")
    assert not technical.asks_a_measure("my app crashes every time, how long until you fix it?")
    assert not technical.asks_a_measure("the invitation link stopped working")


async def test_a_measure_asked_gets_the_article_as_an_answer_not_a_fix():
    # (the act reader hears "by mistake ... gone" as a problem told)
    await passes({"name": "t", "turns": [{"customer": "if i throw a file in the bin how long until its gone for good", "expect": {
        "reply": ["Restoring deleted files", "30 days"], "reply_not": ["usually fixes"], "not_tools": NOT_TOOLS}}]})


def test_a_trouble_inside_a_condition_before_the_measure_is_supposed_not_told():
    assert technical.asks_a_measure("if i type the wrong passcode five times, how long am i locked out?")
    assert technical.asks_a_measure("quick one: in case my sync fails overnight how long do you keep the old version")
    # a trouble told outright before the measure is still told
    assert not technical.asks_a_measure("i typed the wrong passcode and now how long do i wait")


async def test_a_measure_about_a_supposed_lockout_is_answered_not_fixed():
    await passes({"name": "t", "turns": [{"customer": "if my kid keeps typing wrong passwords on my laptop, how long am i locked out of acme", "expect": {
        "reply": ["30 minutes"], "reply_not": ["usually fixes", "shall i"], "context_absent": ["pending_offer"], "not_tools": NOT_TOOLS}}]})


async def test_a_measure_asked_about_the_reset_link_is_no_request_for_one():
    await passes({"name": "t", "turns": [{"customer": "how long does the password reset link stay valid once it's emailed?", "expect": {
        "reply": ["30 minutes", "Resetting your password"], "reply_not": ["what's the email address", "shall i"],
        "context_absent": ["pending_offer"], "not_tools": NOT_TOOLS}}]})
    # asked for, the link is still offered
    await passes({"name": "t", "turns": [{"customer": "please send me a password reset link", "expect": {
        "reply": ["email address"], "not_tools": NOT_TOOLS}}]})


def test_only_a_denied_loss_or_theft_is_taken_out_of_the_search():
    assert "stole" not in technical.without_denied_matter("nobody stole anything, my phone is in my car. how do i get in?")
    assert "stolen" not in technical.without_denied_matter("my phone isnt stolen, its at home. can i still log in")
    # "no" before what the customer lacks names the matter itself
    assert "push" in technical.without_denied_matter("no push notifs on my iphone since the update")
    assert "signal" in technical.without_denied_matter("will my notes open when there is no signal?")


def test_an_article_about_the_matter_denied_is_set_aside():
    denied = technical.denied_matters("nobody stole anything, my phone with the code app is at home")
    assert denied == {"lost"}
    assert technical.about_denied_matter({"title": "Lost or stolen phone"}, denied)
    assert not technical.about_denied_matter({"title": "Two-factor authentication codes"}, denied)
    assert not technical.about_denied_matter({"title": "Lost or stolen phone"}, technical.denied_matters("i lost my phone yesterday"))


async def test_a_denied_theft_is_not_answered_with_the_lost_phone_article():
    said = await failures({"name": "t", "turns": [{"customer": "my phone isnt stolen, it's at home charging with my authenticator on it. can i sign in with a backup code?", "expect": {
        "reply": ["Two-factor authentication codes"], "reply_not": ["Lost or stolen phone"], "not_tools": NOT_TOOLS}}]})
    assert not said, said
    # a phone really lost still is
    await passes({"name": "t", "turns": [{"customer": "i lost my phone on the train and my authenticator was on it, what do i do", "expect": {
        "reply": ["Lost or stolen phone"], "not_tools": NOT_TOOLS}}]})


async def test_a_plan_question_read_as_ground_is_searched_first_and_a_named_ground_is_not():
    await passes({"name": "t", "turns": [{"customer": "which of your plans do we need for single sign-on with our company login?", "expect": {
        "reply": ["Single sign-on", "Team plan"], "reply_not": ["privacy request"], "not_tools": NOT_TOOLS}}]})
    await passes({"name": "t", "turns": [{"customer": "which plan gives me a copy of all the personal data you hold about me under gdpr?", "expect": {
        "tools": [{"name": "request_human"}], "not_tools": [*NOT_TOOLS, "search_kb"]}}]})
    # searched first, no article answers: it goes up as the ground it is, not "I don't know"
    await passes({"name": "t", "turns": [{"customer": "on starter who inside your company can read my files?", "expect": {
        "tools": [{"name": "search_kb"}, {"name": "request_human"}], "reply": ["privacy request"], "reply_not": ["I don't know"],
        "not_tools": NOT_TOOLS}}]})
