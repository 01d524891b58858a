"""The specialist's skills as modules (models/offline/skills/): each skill module owns its methods,
and each does its own job on the real desk (runner, tools, demo data, a real SQLite file).

The structural tests guard the split against merges: `Specialist` combines the skills as
mixins, so a method left (or merged back) in specialist.py would silently shadow the skill's
own and the skill module would no longer be what runs.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from supportdesk.models.offline import specialist
from supportdesk.models.offline.skills import account, common, money, senior, technical
from supportdesk.commands.evals import evaluate_conversations
from tests.conftest import REPO
from tests.money_turns import converse, passes
from tests.test_offline_moves import talk

SKILLS = {
    "money": money.MoneySkill,
    "account": account.AccountSkill,
    "technical": technical.TechSkill,
    "senior": senior.SeniorSkill,
}


def _own_methods(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if inspect.isfunction(v) or isinstance(v, staticmethod)}


def _package_methods(cls: type) -> set[str]:
    """The methods of a skill split into a package of mixins (skills/money/): its own and its
    parts', each part a module of the same package."""
    package = cls.__module__
    parts = [part for part in cls.__mro__ if part.__module__ == package or part.__module__.startswith(package + ".")]
    return {n for part in parts for n in _own_methods(part)}


def test_every_method_of_the_specialist_is_defined_in_exactly_one_place():
    places: dict[str, list[str]] = {}
    for cls in specialist.Specialist.__mro__:
        if cls in (object, common.SkillBase):
            continue
        for name in _own_methods(cls):
            places.setdefault(name, []).append(cls.__name__)
    twice = {n: where for n, where in places.items() if len(where) > 1}
    assert not twice, f"defined in more than one skill (the first shadows the others): {twice}"


def test_each_skill_module_holds_its_own_methods():
    # The shared part keeps the dispatch; each skill keeps what its module's docstring says.
    assert {"_money", "_refund_flow", "_answer_offer", "_credit"} <= _package_methods(money.MoneySkill)
    assert {"_identify", "_plan_change", "_cancel", "_pricing", "_payment_method"} <= _own_methods(account.AccountSkill)
    assert {"_tech", "_tech_results", "_ticket"} <= _own_methods(technical.TechSkill)
    assert {"_beyond_me", "escalation_target", "_escalate_refund"} <= _own_methods(senior.SeniorSkill)
    assert {"decide", "_focus", "_hand_back"} <= _own_methods(specialist.Specialist)


def test_the_money_skill_is_split_by_what_it_does():
    # skills/money/: the entry and dispatch in __init__.py, each part a module that reads in one
    # sitting (issue 38 item 5); a part merged back, or grown past that, fails here.
    from supportdesk.models.offline.skills.money import asks, credit, declines, heard, intents, offers, plans, reads, refunds, results

    assert {"_money", "_money_for", "_read_only", "_and_the_rest"} <= _own_methods(money.MoneySkill)
    assert {"_intents_of", "_asked", "_carried_intents", "_asks_how_refunds_work"} <= _own_methods(intents.MoneyIntents)
    assert {"_plan_question_taken", "_another_plan_named"} <= _own_methods(plans.MoneyPlans)
    assert {"_answer_offer", "_carry_out", "_offer_batch"} <= _own_methods(offers.MoneyOffers)
    assert {"_after_decline", "_held_again", "_offer_put_again_on_report"} <= _own_methods(declines.MoneyDeclines)
    assert {"_charges", "_charge_named", "_charges_answer"} <= _own_methods(reads.MoneyReads)
    assert {"_refund_flow", "_refund_call", "_refund_refused", "_offer_refund"} <= _own_methods(refunds.MoneyRefunds)
    assert {"_money_results", "_done_text"} <= _own_methods(results.MoneyResults)
    assert {"_credit"} <= _own_methods(credit.MoneyCredit)
    assert callable(asks.read) and callable(asks.is_question)
    assert callable(heard.heard_refund) and callable(heard.heard_duplicate) and callable(heard.heard_cancel_request)
    folder = Path(inspect.getfile(money)).parent
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in folder.glob("*.py")}
    assert len(sizes) == 12 and max(sizes.values()) < 400, sizes


def test_what_a_skill_uses_of_another_exists_where_it_is_declared():
    # common.SkillBase declares (for the type checker) what skills call of each other; each
    # name must be a real method of the combined specialist, not of the base.
    source = inspect.getsource(common)
    declared = [line.split("def ", 1)[1].split("(", 1)[0] for line in source.splitlines() if line.strip().startswith("def _") or line.strip().startswith("def escalation") or line.strip().startswith("def topic")]
    assert declared
    for name in declared:
        assert name not in vars(common.SkillBase), name
        assert callable(getattr(specialist.Specialist, name)), name


async def test_money_finds_the_duplicate_and_refunds_it_when_asked(tmp_path):
    found, asked = (await talk(tmp_path, "I was charged twice in March, dana@example.com", "refund the duplicate please"))[0]
    assert not found.calls("refund_charge") and "duplicate" in found.said()
    [refund] = asked.calls("refund_charge")
    assert (refund.arguments["charge_id"], refund.arguments["amount"]) == ("CH-9004", 29.99) and asked.agent == "billing"


async def test_account_quotes_a_plan_price_from_the_price_list(tmp_path):
    [turn], _ = await talk(tmp_path, "how much is the team plan?")
    assert turn.calls("list_plans") and "$129.99 a month" in turn.said()
    assert not turn.calls("change_plan")


async def test_technical_walks_through_the_article_steps(tmp_path):
    [turn], _ = await talk(tmp_path, "my files are not syncing on windows")
    assert turn.calls("search_kb") and turn.agent == "technical"
    assert "1. " in turn.said()


async def test_a_reset_link_asked_for_is_sent_not_searched():
    """technical.RESET_ARTICLE (issue 38, held-7): a request the password-reset article answers
    ("pls email me a link to set a new password") is the reset tool's to do: sent for the
    account (given now, or earlier in the conversation) at once, the request being the consent
    (the lead's policy, confirm = "request"), not the article's steps shown; a question how to
    reset still gets the steps."""
    money = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]
    asked = {"name": "a link asked for", "turns": [
        {"customer": "pls email me a link to set a new password - hugo.silva39@example.com",
         "expect": {"tools": [{"name": "send_password_reset", "arguments": {"customer": "hugo.silva39@example.com"}}],
                    "reply_not": ["covers this", "shall i"], "not_tools": money}}],
        "expect": {"tool_counts": {"send_password_reset": 1}}}
    later = {"name": "the email given earlier", "turns": [
        {"customer": "olga.nguyen14@example.com - push notifications stopped on my android", "expect": {"reply": ["Notifications"]}},
        {"customer": "also could u email me a link to set a new pw",
         "expect": {"reply": ["sent a password reset link"], "reply_not": ["email address", "shall i"]}},
        {"customer": "ok", "expect": {"not_tools": ["send_password_reset"]}}],
        "expect": {"tool_counts": {"send_password_reset": 1}}}
    how = {"name": "how, a question", "turns": [
        {"customer": "how long is the link to set a new password valid?", "expect": {"reply": ["Forgot password"], "not_tools": ["send_password_reset"]}}]}
    for result in await evaluate_conversations([asked, later, how], config=str(REPO / "agents.toml")):
        assert result.passed, result.name + ": " + "\n".join(result.failures)


async def test_a_forgotten_app_pin_gets_the_passcode_article_not_a_reset_link():
    """cues.RESET (acct17): the app's pin is set again in the app after signing in with the
    password (tools/kb/app-passcode.md), so "forgot the pin" asks for no reset link; read as the
    password's, it was met with "what's the email on your account?" for a link. A forgotten
    password beside it still is the reset's."""
    pin = {"name": "pin forgotten", "turns": [
        {"customer": "nobody hacked me, i just forgot the pin for the acme app on my phone",
         "expect": {"agent": "technical", "reply": ["Setting or changing the app passcode"], "reply_not": ["email address"],
                    "not_tools": ["send_password_reset"], "context_absent": ["pending_offer"]}}]}
    password = {"name": "password forgotten", "turns": [
        {"customer": "i forgot the password for the acme app on my phone. CUS-1010",
         "expect": {"agent": "technical", "offers": ["send_password_reset"], "not_tools": ["send_password_reset"]}}]}
    for result in await evaluate_conversations([pin, password], config=str(REPO / "agents.toml")):
        assert result.passed, result.name + ": " + "\n".join(result.failures)


async def test_senior_takes_a_refund_above_the_level_one_limit(tmp_path):
    # Priya's annual charge was taken twice: $1,299.99 is above billing's level-1 limit.
    turns, _ = await talk(tmp_path, "I was charged twice for my annual plan, please refund the duplicate", "priya@example.com", "yes")
    handoffs = [h for t in turns for h in t.handoffs()]
    assert "billing>senior" in handoffs and turns[-1].agent == "senior", (handoffs, [t.said() for t in turns])


# --- issue 38: a no stays a no, the named charge, only what the tools did, a yes and more ---------
ACTIONS = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit"]


async def test_after_a_no_the_action_is_not_put_again_and_an_ok_takes_nothing():
    assert not await converse(
        ("i want to cancel my subscription. dana@example.com", {"offers": ["cancel_subscription"]}),
        ("no, i changed my mind, keep it", {"not_tools": ACTIONS, "reply": ["stays as it is"], "reply_not": ["shall i"]}),
        ("ok", {"not_tools": ACTIONS, "reply_not": ["shall i", "cancelled"]}),
    )


async def test_an_answer_that_is_no_yes_carries_the_declined_action_into_no_new_offer():
    # The gate reads "keep my subscription" as no yes ("other"); the reply must not put the
    # cancellation to the customer again, or their next "ok" would cancel.
    for declined in ("keep my subscription", "i'll keep it actually"):
        assert not await converse(
            ("cancel my subscription please, dana@example.com", {"offers": ["cancel_subscription"]}),
            (declined, {"not_tools": ACTIONS, "reply_not": ["shall i"]}),
            ("ok", {"not_tools": ACTIONS, "reply_not": ["shall i", "cancelled"]}),
        ), declined


async def test_an_ok_after_a_declined_refund_gets_no_new_question_about_it():
    assert not await converse(
        ("i was charged twice in march dana@example.com", {"offers": ["refund_charge"]}),
        ("no thanks", {"not_tools": ACTIONS, "reply": ["nothing has been refunded"]}),
        ("ok", {"not_tools": ACTIONS, "reply_not": ["refund it", "shall i"], "context_absent": ["pending_offer"]}),
    )


async def test_a_charge_named_by_its_day_is_the_one_offered():
    named = {"context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9003"}}}}
    assert not await converse(
        ("i was charged twice in march, the one from the 1st is the double one. dana@example.com", named),
        ("yes", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9003"}}]}),
    )
    # After the offer of the other one: "not that one" names the charge wanted by its day.
    assert not await converse(
        ("i was charged twice in march dana@example.com", {"offers": ["refund_charge"]}),
        ("no not that one, the one on the 1st is the double", {"not_tools": ACTIONS, **named}),
    )


async def test_a_yes_naming_another_charges_day_runs_nothing_and_that_charge_is_asked_about():
    assert not await converse(
        ("i was charged twice in march dana@example.com", {"offers": ["refund_charge"]}),
        ("yes, the one on the 1st", {"not_tools": ACTIONS, "offers": ["refund_charge"],
                                     "context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9003"}}}}),
    )


async def test_a_day_that_fits_several_charges_is_asked_about_then_the_one_chosen_is_offered():
    assert not await converse(
        ("refund the charge from the 1st please. dana@example.com",
         {"not_tools": ACTIONS, "context_absent": ["pending_offer"], "reply": ["January 1, 2026", "March 1, 2026", "which one"]}),
        ("the march one", {"not_tools": ACTIONS, "context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9003"}}}}),
    )
    # Spoken of as a double charge, the day picks the one of the duplicate pair.
    assert not await converse(
        ("i was charged twice, the one on the 1st is the extra one. dana@example.com",
         {"context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9003"}}}}),
    )


async def test_a_failed_charge_is_never_said_to_be_refunded():
    assert not await converse(
        ("refund my march charge please hugo.silva7@example.com",
         {"not_tools": ACTIONS, "reply": ["failed", "nothing to refund"], "reply_not": ["has been refunded"]}),
    )


async def test_a_failed_payment_told_in_words_leaning_to_the_card_article_is_billings():
    # "go through" leans the router to the in-app card article: the failed charge is billing's to
    # read (triage's asks.payment_failed_told), told with its day and amount, nothing changed.
    assert not await converse(
        ("you emailed me that my payment didnt go through?? why. CUS-1025",
         {"agent": "billing", "not_tools": [*ACTIONS, "update_payment_method"], "reply": ["failed", "March 10", "$29.99"],
          "reply_not": ["usually fixes"]}),
    )


def test_a_payment_that_did_not_work_or_was_not_successful_is_a_failed_payment():
    # held-16: "team payment didnt work??" went to the in-app card article.
    from supportdesk.models.offline.skills.money import asks
    for told in ("my pro payment didn't work this month", "the renewal wasnt succesful", "charge not successful??"):
        assert asks.payment_failed_told(told), told
    assert not asks.payment_failed_told("the app didnt work after the update")


async def test_a_renewal_that_failed_is_answered_with_the_failed_charge_not_the_next_payment():
    assert not await converse(
        ("my card was declined when pro renewed this month. what happens now? CUS-1025",
         {"agent": "billing", "not_tools": [*ACTIONS, "update_payment_method"],
          "reply": ["failed", "March 10", "$29.99", "INV-5075", "payment method"], "reply_not": ["next payment", "shall i"]}),
    )


async def test_a_failed_top_up_told_stays_with_the_credits_article():
    # A top-up's payment that failed is the app's (the credits article), not the account's charge.
    assert not await converse(
        ("my credits top-up payment failed", {"agent": "technical", "not_tools": ACTIONS, "reply": ["Usage credits"]}),
    )


async def test_a_refund_of_a_failed_charge_named_by_its_day_and_amount_says_it_failed():
    # Nothing can be refunded of a failed charge, so no refundable charge matches the day and the
    # amount: the charge named is still the one meant, not a refusal of every charge by policy.
    assert not await converse(
        ("i want a refund for the 29.99 from march 10, CUS-1025",
         {"not_tools": ACTIONS, "reply": ["failed", "nothing to refund"], "reply_not": ["policy allows"]}),
    )


async def test_a_change_the_gate_only_asked_about_is_never_said_made():
    assert not await converse(
        ("switch me to the starter plan, dana@example.com", {"offers": ["change_plan"]}),
        ("hmm is starter cheaper?", {"not_tools": ACTIONS, "reply": ["$9.99"], "reply_not": ["already made"]}),
        # The question answered, an "ok" to "Would you like to change your plan?" is asked once more.
        ("ok", {"not_tools": ACTIONS, "offers": ["change_plan"]}),
    )


async def test_a_yes_with_a_request_after_it_runs_the_offer_then_answers_the_request():
    assert not await converse(
        ("charged twice for march?? dana@example.com", {"offers": ["refund_charge"]}),
        ("yes do it, and also tell me when my next payment is too",
         {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9004"}}], "reply": ["refunded", "next payment"]}),
    )
    # Another team's request after the yes goes to that team, once the refund is made.
    assert not await converse(
        ("charged twice for march?? dana@example.com", {"offers": ["refund_charge"]}),
        ("yes refund it, and reset my password as well",
         {"tools": [{"name": "refund_charge"}], "reply": ["refunded"], "offers": ["send_password_reset"], "agent": "technical"}),
    )


def test_a_charge_named_as_the_one_repeated_is_not_the_charge_pointed_at():
    from supportdesk.models.offline import dialogue

    listed = [{"id": "CH-9003", "charged_on": "2026-03-01", "amount": 29.99}, {"id": "CH-9004", "charged_on": "2026-03-03", "amount": 29.99}]
    for said in ("that's a double of the march 1st one, refund it", "it's the same charge as march 1 - give it back", "a copy of CH-9003, refund that"):
        assert dialogue.point_at(said, listed, positions=False) is None, said
    assert dialogue.point_at("refund the march 1st one", listed, positions=False) == listed[:1]


async def test_that_one_after_a_day_named_is_refunded_not_the_charge_it_repeats():
    # Issue 38: the customer names a charge by its day, then says "that's a double of the march
    # 1st one, refund it": the refund is of the charge they asked about, never March 1.
    assert not await converse(
        ("what was the charge on the 3rd of march? dana@example.com", {"reply": ["March 3, 2026"]}),
        ("that's a double of the march 1st one, refund it", {"not_tools": ACTIONS,
         "context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9004"}}}}),
        ("yes", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9004"}}]}),
    )


async def test_a_charge_asked_by_its_day_is_answered_and_the_next_one_is_the_next_payment():
    # Issue 38: "how much did you take on 5 feb?" names no charge word, but a day said to
    # billing is a charge's day; "the next one" after it is the next payment.
    assert not await converse(
        ("how much did you take on 5 feb? grace.tanaka6@example.com", {"reply": ["February 5, 2026", "$9.99"], "not_tools": ACTIONS}),
        ("and when is the next one", {"reply": ["April 5, 2026"], "not_tools": ACTIONS}),
    )


def test_a_period_said_in_words_is_a_billing_period_and_another_card_named_is_a_card_change():
    from supportdesk.models.offline import cues

    assert cues.plan_request("i'd like to switch to paying once a year instead, same plan") == (None, "annual")
    assert cues.plan_request("every month please, not every year") == (None, "monthly")
    assert cues.PLAN_CHANGE.search("can i pay every year instead of every month?")
    assert cues.PAYMENT_METHOD.search("want to pay with a different card from now on - mastercard ending 7310")


async def test_the_same_plan_paid_yearly_is_offered_on_the_current_plan():
    assert not await converse(
        ("i'd like to switch to paying once a year instead, same plan", {"agent": "billing", "not_tools": ACTIONS}),
        ("marco@example.com", {"offers": ["change_plan"], "reply": ["Team plan, billed annually"], "reply_not": ["which plan", "to the Team plan"]}),
        ("yes", {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1002", "plan": "team", "billing_period": "annual"}}]}),
    )


def test_a_need_told_then_a_question_how_is_a_question_but_trouble_then_how_is_a_problem():
    # Issue 38: "someone ... needs access to our shared folder, how do i give it to her?" got
    # "here's what usually fixes this": the need told outweighed the question asked about it.
    assert technical.asks_how("my colleague needs access, how can i share it with him?")
    assert technical.asks_how("my coworker needs to edit our shared docs too. how can I give him access?")
    assert not technical.asks_how("my app keeps crashing, how do i stop it crashing?")
    assert not technical.asks_how("the sync stopped, how do i get it working again?")


def test_a_question_of_its_own_beside_a_trouble_is_asked_but_a_plea_for_the_fix_is_not():
    # kb-16: "my colleague lost her phone ... cant sign in, can she use a backup code?" was framed
    # as "what usually fixes this": the trouble told outweighed the question asked beside it.
    lost_phone = "Lost or stolen phone. Sign in with a backup code and set up two-factor again."
    two_factor = "Two-factor authentication codes. SMS codes can take a minute."
    assert technical.asks_beside_trouble(
        "my colleague lost her phone with the authenticator on it and now cant sign in, can she use a backup code?", lost_phone)
    assert technical.asks_beside_trouble("i dont own a smartphone. can the sms code come to my old nokia?", two_factor)
    # a failure asked about, the remedy asked for, a question the act reader hears as a problem,
    # a failure told of the question after it, or a plea naming nothing the article names, is
    # still the trouble's
    assert not technical.asks_beside_trouble("the app is slow today, is the sms code broken?", two_factor)
    assert not technical.asks_beside_trouble("the app is slow today, how do i fix the sms code?", two_factor)
    assert not technical.asks_beside_trouble("the app is slow today, what do i do about the sms code?", two_factor)
    assert not technical.asks_beside_trouble("the app is slow today, what happened to my sms codes?", two_factor)
    assert not technical.asks_beside_trouble("can i use the sms code? it keeps failing", two_factor)
    assert not technical.asks_beside_trouble("the sms code never came, any idea?", two_factor)


async def test_the_article_answers_a_question_asked_beside_a_trouble_and_still_fixes_the_trouble():
    # kb-16: the found article is given as the answer to the question asked, not as "what usually
    # fixes" the trouble told beside it; a trouble with a plea for the fix is still framed as one.
    assert not await converse(
        ("i left my phone with the authenticator in a taxi and now cant get in, is one of my backup codes enough?",
         {"agent": "technical", "reply": ["Lost or stolen phone", "covers this"], "reply_not": ["usually fixes", "whether that works"]}),
    )
    assert not await converse(
        ("i left my phone with the authenticator in a taxi and now cant get in, what should i do?",
         {"agent": "technical", "reply": ["Lost or stolen phone", "usually fixes"]}),
    )


def test_an_account_closed_for_good_is_a_deletion_and_a_plan_cancelled_is_not():
    from supportdesk.models.offline import cues

    def deletion(said: str) -> bool:
        return cues.unknown_ground(said) == "request to delete the account"

    for said in ("I want close my account for ever and delete all my datas from your servers",
                 "pls shut down our account for good, and wipe the files", "permanently close my account"):
        assert deletion(said), said
    assert not deletion("cancel my subscription please") and not deletion("close my account's open ticket")


def test_an_app_that_wont_open_finds_the_crash_article_and_an_old_version_the_restore_one():
    # Issue 38: the knowledge base's tags in customers' words. A device named beside a failure
    # ("the android app won't open") is the crash article's, not the devices one's; "the old
    # version of my document" is the restore article's, not identity documents'.
    from supportdesk.tools.kb import knowledge_base

    kb = knowledge_base()
    for said in ("the android app won't open at all since yesterday", "the ipad app won't open since this morning"):
        assert [a.slug for a, _ in kb.answer(said)][:1] == ["app-crashes"], said
    assert [a.slug for a, _ in kb.answer("is there an android app?")][:1] == ["apps-devices"]
    assert [a.slug for a, _ in kb.answer("where i can find the old version of my document from last week?")][:1] == ["restore-files"]


async def test_a_device_named_by_its_brand_is_a_question_for_technical():
    # Issue 38: "her school chromebook" leaned billing (a daughter, a school: family plans);
    # the lexicon folds computers named by brand onto "device", the technical agent's word.
    assert not await converse(
        ("can my daughter use acme on her school chromebook?",
         {"agent": "technical", "tools": [{"name": "search_kb"}], "reply": ["Apps and devices"], "not_tools": ACTIONS}),
    )
    assert not await converse(("can i use your app on my work thinkpad?", {"agent": "technical", "reply": ["Apps and devices"]}))


async def test_refund_it_is_the_charge_last_named_never_the_duplicate_found_for_them():
    # Issue 38: "ok refund it" after asking about February 1st offered the March duplicate; "it"
    # is the charge last named, and a charge the policy does not refund is refused with why.
    assert not await converse(
        ("what was the charge on march 3? dana@example.com", {"reply": ["March 3, 2026"]}),
        ("and the one on feb 1?", {"reply": ["February 1, 2026"], "not_tools": ACTIONS}),
        ("ok refund it", {"not_tools": ACTIONS, "reply": ["can't refund the charge of $29.99 on February 1, 2026"],
                          "context_absent": ["pending_offer"]}),
    )
    # Named and then pointed at: that charge is the one offered.
    assert not await converse(
        ("what was the charge on march 1? dana@example.com", {"reply": ["March 1, 2026"]}),
        ("refund that one", {"not_tools": ACTIONS, "context_includes": {"pending_offer": {"arguments": {"charge_id": "CH-9003"}}}}),
    )


# --- issue 38, held-4's kinds (fixer2) ------------------------------------------------------------


async def test_a_question_about_a_plan_change_is_answered_and_nothing_is_offered():
    # "if I downgrade now do I lose what I paid?" asks what a change would mean: the answer says
    # what happens to money paid, and no change waits for a "yes" that would set it off.
    assert not await converse(
        ("if i go down to starter now would i lose the rest of what i paid? dana@example.com",
         {"agent": "billing", "reply": ["isn't refunded", "next renewal"], "not_tools": ACTIONS,
          "context_absent": ["pending_offer"]}),
    )
    # Asked for, not asked about: still the plan change's offer.
    assert not await converse(("please downgrade me to starter, dana@example.com", {"offers": ["change_plan"]}))


async def test_a_yes_that_names_another_plan_offers_that_plan_and_runs_neither():
    assert not await converse(
        ("can i move to the pro plan? marco@example.com", {"offers": ["change_plan"]}),
        ("yes, though make it starter instead", {"not_tools": ACTIONS, "offers": ["change_plan"],
                                                 "context_includes": {"pending_offer": {"arguments": {"plan": "starter"}}}}),
        ("yes", {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1002", "plan": "starter"}}]}),
    )


async def test_just_cancel_it_then_after_a_price_answer_offers_the_cancellation():
    assert not await converse(
        ("how much is my plan a month? dana@example.com", {"reply": ["$29.99"], "not_tools": ACTIONS}),
        ("ok then just cancel it", {"offers": ["cancel_subscription"], "not_tools": ACTIONS, "reply_not": ["email address"]}),
    )


async def test_a_plan_price_asked_in_non_native_order_is_answered_without_an_email():
    assert not await converse(("how much cost the starter plan?", {"agent": "billing", "reply": ["$9.99"], "reply_not": ["email address"]}))


async def test_a_charge_asked_about_by_its_id_goes_to_billing_and_is_described():
    assert not await converse(
        ("marco@example.com what is ch-9005?",
         {"agent": "billing", "reply": ["$129.99", "January 1, 2026"], "not_tools": ACTIONS}),
    )


async def test_a_refund_refused_for_a_charge_disputed_with_the_bank_says_it_is_disputed():
    assert not await converse(
        ("aline.moreau26@example.com please refund my march payment, i opened a dispute with my bank about it",
         {"agent": "billing", "reply": ["already disputed with your bank"], "not_tools": ACTIONS,
          "context_absent": ["pending_offer"]}),
    )


async def test_an_account_wanted_closed_for_good_with_its_data_erased_is_a_deletion_not_lost_files():
    from supportdesk.models.offline import cues

    def deletion(said: str) -> bool:
        return cues.unknown_ground(said) == "request to delete the account"

    for said in ("i want my account closed permanently and all my data erased", "need the workspace shut down for good, files wiped"):
        assert deletion(said), said
    for said in ("my account was deleted by mistake, can you restore it?", "my account closed itself yesterday"):
        assert not deletion(said), said
    assert not await converse(
        ("i'd like my profile deleted and everything erased, for good",
         {"reply": ["person"], "reply_not": ["lost files", "Restoring deleted files"], "not_tools": ACTIONS}),
    )


async def test_a_question_about_how_long_the_bin_keeps_files_is_answered_not_escalated_as_lost_data():
    # kb-14: "before it's gone" is a loss supposed, not told (`cues.data_loss_told`): the restore
    # article answers, where lost data told goes to a senior colleague at once.
    from supportdesk.models.offline import cues

    for said in ("how many days before its gone for good?", "what if my files were deleted by someone?"):
        assert not cues.data_loss_told(said), said
    for said in ("all my files were deleted this morning", "when i came back my files were gone"):
        assert cues.data_loss_told(said), said
    assert not await converse(
        ("if i put a file in the trash, how long until it's gone for good?",
         {"agent": "technical", "reply": ["Restoring deleted files"], "reply_not": ["senior colleague"], "not_tools": ACTIONS}),
    )
    assert not await converse(
        ("all our documents were deleted overnight, nobody here did it",
         {"agent": "senior", "reply": ["senior"], "not_tools": ACTIONS}),
    )


async def test_a_duplicate_told_in_a_long_message_is_offered_not_asked_which():
    # "both for the Starter plan ... sort that out?" points at nothing said before this message,
    # and "charged me ... and again on ..." tells a duplicate without the word.
    assert not await converse(
        ("Long story, but I checked my bank app this month and saw two payments to you a day apart, both for the "
         "Starter plan, and I can't be paying for it double, could someone sort that out? My email is elena.ortiz36@example.com",
         {"offers": ["refund_charge"], "reply": ["$9.99"], "reply_not": ["More than one charge fits"], "not_tools": ACTIONS}),
        ("thank you so much, that would be great", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9116"}}]}),
    )
    assert not await converse(
        # above billing's limit: the refund goes to senior, who offers it
        ("hi, charged me 129.99 on march 24 and then again on march 25, that 2nd one is wrong. maya.farouk12@example.com",
         {"offers": ["refund_charge"], "reply": ["$129.99"], "not_tools": ACTIONS}),
    )


# --- route-7b (issue 38) ----------------------------------------------------------------------

_CONFIG_DESK = str(REPO / "evals" / "config-agent.toml")
_NO_MONEY = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method", "send_password_reset"]


async def test_a_config_only_agent_calls_its_tool_for_a_person_asked_for_beside_the_matter():
    """"i need a person now" is no phrase cues.HUMAN knows; the security agent reached with it
    calls request_human because a clause requests what that tool's own words say it brings."""
    convo = {"name": "a person beside a hack", "turns": [
        {"customer": "i need a person now, someone is inside my account changing my files",
         "expect": {"tools": [{"name": "request_human"}], "notices": ["human_requested"], "not_tools": _NO_MONEY}},
    ]}
    [result] = await evaluate_conversations([convo], config=_CONFIG_DESK)
    assert result.passed, "\n".join(result.failures)


async def test_a_person_is_not_called_for_a_matter_told_without_asking_for_one():
    convo = {"name": "a hack, no person asked", "turns": [
        {"customer": "someone is inside my account changing my files", "expect": {"agent": "security", "not_tools": ["request_human", *_NO_MONEY]}},
    ]}
    [result] = await evaluate_conversations([convo], config=_CONFIG_DESK)
    assert result.passed, "\n".join(result.failures)


async def test_which_card_is_on_file_is_billings_however_card_leans():
    convo = {"name": "card saved, rambling", "turns": [
        {"customer": "so my wife says we might have changed cards at some point and i honestly cant remember, "
                     "what card do you have saved for me? marco@example.com",
         "expect": {"agent": "billing", "reply": ["5454"], "not_tools": _NO_MONEY}},
    ]}
    await passes(convo)


async def test_torn_with_no_money_named_the_money_agent_steps_aside_among_three():
    """billing 0.28, technical 0.27, security 0.45: no money named, billing steps aside and the
    router places it between the two left (security), instead of asking which of three."""
    convo = {"name": "recovery email unknown", "turns": [
        {"customer": "the recovery email on my account is one i dont know", "expect": {"agent": "security", "not_tools": _NO_MONEY}},
    ]}
    [result] = await evaluate_conversations([convo], config=_CONFIG_DESK)
    assert result.passed, "\n".join(result.failures)
