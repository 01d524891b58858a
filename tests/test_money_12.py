"""The money skill answers a question with its answer and offers only what is asked for (issue 38,
evals/money-12-*): what cancelling would do answered with nothing offered, a downgrade's price
with what it does to the period paid for, the billing period by its own noun with the last
payment's day, a month's charges asked as "what's on my account", another way to pay asked for
without a change verb, and a duplicate told by both its days refunded on the duplicate's day.
Conversations run the real desk on a fresh demo database."""

from __future__ import annotations

from supportdesk.models.offline import dialogue
from supportdesk.models.offline.skills.money import asks
from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method", "send_password_reset"]


def test_a_question_about_what_an_action_would_do_is_about_it_not_for_it():
    assert asks.asks_what_it_would_do("if i cancel my plan whats gonna happen with all my notes and files?")
    assert asks.asks_what_it_would_do("what would cancelling do to my documents, would they be gone?")
    assert not asks.asks_what_it_would_do("please cancel my subscription today")
    assert not asks.asks_what_it_would_do("i want to cancel, my email is dana@example.com")


async def test_what_cancelling_would_do_is_answered_and_nothing_is_offered():
    assert not await converse(
        ("if i cancel my plan whats gonna happen with all my notes and files? CUS-1017",
         {"reply": ["keep access"], "reply_not": ["shall i", "I can help with charges"],
          "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


async def test_after_the_answer_a_request_to_cancel_is_still_offered_and_done_on_its_yes():
    assert not await converse(
        ("what happens if i cancel my subscription? CUS-1016",
         {"reply": ["keep access"], "context_absent": ["pending_offer"], "not_tools": MONEY}),
        ("ok then please cancel it", {"offers": ["cancel_subscription"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1016"}}]}),
    )


def test_a_question_about_losing_what_was_paid_is_read_beside_a_price():
    assert asks.asks_what_is_lost("how much would starter be and would we lose what we already paid? CUS-1028")
    assert asks.asks_what_is_lost("if we downgraded, do we get the rest of the month back?")
    assert not asks.asks_what_is_lost("how much is team a month?")
    # a loss told, not asked: only the sentences that ask are read
    assert not asks.asks_what_is_lost("did it again, lost my card. how much is team a month?")


async def test_a_downgrades_price_and_what_is_lost_are_both_answered():
    # CUS-1028 is on Pro ($29.99 a month); Starter is $9.99.
    assert not await converse(
        ("we're on pro but money is tight, thinking of going down to starter - how much would that be and would we "
         "lose what we already paid? just asking for now. CUS-1028",
         {"agent": "billing", "reply": ["$9.99", "isn't refunded"], "reply_not": ["shall i"],
          "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


async def test_the_billing_cycle_by_its_noun_is_the_period_with_the_last_payments_day():
    # CUS-1003: Pro, monthly, last paid March 26, 2026.
    assert not await converse(
        ("quick one: what's my billing cycle and on which day did my most recent payment go through? CUS-1003",
         {"agent": "billing", "reply": ["monthly", "March 26, 2026"], "reply_not": ["Your recent charges"],
          "not_tools": MONEY}),
    )


def test_the_billing_cycle_as_when_something_starts_is_no_question_about_the_period():
    from supportdesk.models.offline.skills.money.intents import _intents_in

    assert "my_plan" in _intents_in("what's my billing cycle?")
    # "from the next billing cycle" is a time (cues.AT_RENEWAL), not the period asked about
    assert "my_plan" not in _intents_in("will anything change for us from the next billing cycle?")


async def test_a_question_naming_a_month_is_about_its_charges():
    # Dana (CUS-1001) was charged on March 1 and again on March 3.
    assert not await converse(
        ("whats on my account for march? dana@example.com",
         {"agent": "billing", "reply": ["March 1, 2026", "March 3, 2026"], "reply_not": ["I can help with charges"],
          "not_tools": MONEY}),
        ("the first one, what was that for?",  # a pointer into the charges the month's question listed
         {"agent": "billing", "reply": ["March 1, 2026"], "reply_not": ["I can help with charges", "March 3, 2026"],
          "not_tools": MONEY}),
    )


async def test_another_way_to_pay_asked_for_without_a_change_verb_is_offered():
    assert not await converse(
        ("i'd like to pay with paypal from now on, my account is rosa.chen17@example.com",
         {"agent": "billing", "offers": ["update_payment_method"], "not_tools": MONEY}),
        ("yes", {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1017", "method": "paypal"}}]}),
    )


def test_days_of_the_month_said_in_one_list_are_each_a_day():
    assert dialogue.bare_days("billed twice in march, on the 24th and 25th.") == {24, 25}
    assert dialogue.bare_days("the 10th, 11th and 12th") == {10, 11, 12}
    assert dialogue.days_named("on the 24th and 25th") == 2
    assert dialogue.bare_days("on the 2nd try it worked") == set()


async def test_a_duplicate_told_by_both_days_refunds_the_duplicates_day():
    # CUS-1012 (Team, $129.99) was charged on March 24 (CH-9039) and again on March 25 (CH-9040):
    # above billing's limit, the senior asks, and the yes refunds the duplicate, not the original.
    assert not await converse(
        ("i got billed 129.99 twice in march, on the 24th and 25th. maya.farouk12@example.com",
         {"reply": ["$129.99", "March 25, 2026"], "not_tools": MONEY}),
        ("yes please, thanks a lot!!",
         {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9040", "amount": 129.99}}]}),
    )


async def test_cancelling_talked_of_in_words_no_cue_lists_is_still_answered_as_a_question():
    # "cancelling at some point ... if i do": no cue hears a cancellation; the capability list answered.
    assert asks.cancelling_asked_about("im thinking about cancelling at some point, what happens to all my files if i do? CUS-1022")
    assert not asks.cancelling_asked_about("im thinking about cancelling at some point")  # no question
    assert not await converse(
        ("im thinking about cancelling at some point, what happens to all my files if i do? CUS-1022",
         {"reply": ["keep access"], "reply_not": ["shall i", "I can help with charges"],
          "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


async def test_a_refund_above_billings_limit_that_no_reason_fits_is_refused_by_billing_not_passed_up():
    """held-11: "not happy with the team plan, refund march's 129.99" is above billing's limit and
    no reason the desk refunds for fits it (the reasons are the desk's, the same at every level):
    billing says why, and nothing is passed up to be offered by the senior and then refused."""
    assert not await converse(
        ("we're not happy with what the team plan gives us, refund march's 129.99 please. CUS-1005",
         {"agent": "billing", "reply": ["can't refund", "duplicate"], "reply_not": ["shall i"],
          "context_absent": ["pending_offer"], "not_tools": MONEY}),
    )


def test_a_bare_go_ahead_is_never_a_request_to_cancel_of_its_own(monkeypatch):
    """"please do" names nothing to stop: the desk intents reader reads cancel on "please" alone,
    so with the money gate's reading left to chance (here: sure of money) it must still not be
    heard as a cancellation asked for (test_offline_moves_property caught billing turning "please
    do", after "if you'd like it refunded, just say so", into a cancel)."""
    from supportdesk.models.offline.skills.money import heard
    from supportdesk.readers import gates

    monkeypatch.setattr(gates, "reads_money", lambda text: True)
    assert not heard.heard_cancel_request("please do")
    assert not heard.heard_cancel_request("yes please")
    assert heard.heard_cancel_request("stop billing me please")


async def test_please_do_after_a_refund_passed_up_is_that_refund_not_a_cancellation():
    # (Since money-13 billing offers the refund on the senior's behalf: "please do" runs it there.)
    assert not await converse(
        ("marco@example.com here. there's a charge I don't recognise", {"agent": "billing", "offers": ["refund_charge"], "not_tools": MONEY}),
        ("please do", {"agent": "senior", "reply_not": ["cancel"], "not_tools": [t for t in MONEY if t != "refund_charge"],
                       "tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9008", "amount": 129.99}}]}),
    )
