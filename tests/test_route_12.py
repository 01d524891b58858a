"""Routing of wording that leans to another agent's words (issue 38, evals/route-12-*.jsonl): the
money gate taught the product's own questions and the desk's labelled intents, a plan named by
its place as a plan's name, and the technical agent taking failed steps further when no password
of ours is in the sign-in, or when a yes opens the report."""

from __future__ import annotations

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.models.offline import cues
from supportdesk.readers import gates
from tests.conftest import REPO

MONEY_TOOLS = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]


def test_taking_the_data_along_or_sharing_a_folder_is_no_money():
    # (kb-10 and kb-11's held halves: never trained on.) Before the gate learnt the product's own
    # questions as no money, each read as money (0.98 and more) and went to billing.
    assert not gates.reads_money("Our auditor need a copy of everything we keep in acme, can I download it all in one time?")
    assert not gates.reads_money("we are switching providers, how do I download everything we have stored with you")


def test_a_plan_or_a_way_to_pay_asked_in_plain_words_is_money():
    # (intents-8 and money-10's held halves.) The desk's labelled intents keep a plan asked about
    # money beside the product's questions ("at the moment" is their words too).
    assert gates.reads_money("what tier are we on at the moment?")
    assert gates.reads_money("how i pay for acme needs to change.")


def test_a_plan_named_by_its_place_names_money():
    assert cues.names_money_literally("i want the biggest plan you have pls")
    assert cues.names_money_literally("which is your priciest option? i want that one")
    assert cues.names_money_literally("move me one tier down")
    # the bare verb names no plan: the app upgraded is no money by rule
    assert not cues.names_money_literally("how do i upgrade the ios app")


async def _run(*conversations: dict) -> None:
    for result in await evaluate_conversations(list(conversations), config=str(REPO / "agents.toml")):
        assert result.passed, result.name + ": " + "\n".join(result.failures)


async def test_failed_steps_of_a_single_sign_on_go_further_not_to_a_reset():
    """Sign-in through the company's identity provider holds no password of ours: when its steps
    failed, a reset link is no next step; a refused password still gets the reset first."""
    sso = {"name": "sso", "turns": [
        {"customer": "our okta sign in gives an error for everyone since this morning", "expect": {"agent": "technical"}},
        {"customer": "tried all of that, still the same error",
         "expect": {"handoffs": ["technical>senior"], "agent": "senior", "not_tools": ["send_password_reset", *MONEY_TOOLS],
                    "reply_not": ["reset link"]}}]}
    password = {"name": "password", "turns": [
        {"customer": "i cant log in, it says my password is wrong", "expect": {"agent": "technical"}},
        {"customer": "tried all of that, still the same error", "expect": {"agent": "technical", "reply": ["reset link"]}}]}
    await _run(sso, password)


async def test_a_yes_before_the_failed_steps_takes_them_further():
    """Asked how the steps went, "yes did all of those, nothing" says they were done and did not
    help: the act reader, hearing the yes, read it as thanks, and the article was searched again."""
    await _run({"name": "yes first", "turns": [
        {"customer": "notifications don't come on my phone", "expect": {"agent": "technical"}},
        {"customer": "yes did all of those, nothing", "expect": {"handoffs": ["technical>senior"], "agent": "senior", "not_tools": MONEY_TOOLS}}]})


def test_an_off_topic_word_in_the_desks_own_matter_is_no_refusal():
    """cues.OUT_OF_SCOPE's words ("recipe") refuse a message only where the scope reader does not
    read it as the desk's own (scope.listed_outside)."""
    from supportdesk.models.offline import scope

    assert not scope.listed_outside("the recipe i fixed on my laptop still has the old ingredients on my phone")
    assert scope.listed_outside("can you give me a recipe for lasagna")
    assert scope.listed_outside("tell me a joke")


async def test_triage_takes_a_sync_problem_that_names_a_recipe():
    await _run({"name": "recipe", "turns": [
        {"customer": "the recipe i fixed on my laptop still has the old ingredients on my phone",
         "expect": {"agent": "technical", "tools": [{"name": "search_kb"}], "not_tools": MONEY_TOOLS}}]})


async def test_a_terse_reply_of_nine_words_points_back_at_the_steps():
    """technical.REPLY_MAX_WORDS: "done every one of them, it's the same as before" answers how the
    steps went; read clause by clause, "it's the same as before" went to billing's "same" charges."""
    await _run({"name": "nine words", "turns": [
        {"customer": "my tablet doesnt show the files i saved on my pc", "expect": {"agent": "technical"}},
        {"customer": "done every one of them, it's the same as before",
         "expect": {"handoffs": ["technical>senior"], "agent": "senior", "not_tools": MONEY_TOOLS}}]})
