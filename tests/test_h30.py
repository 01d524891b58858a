"""held-30's three seen misses by kind, and two20's polish (issue 38, round 20b: the h30 family,
evals/h30-tune.jsonl).

Each test guards one protection and fails (never hangs) with it removed:
- a question of how long, how soon or how many about an action's thing asks a fact of it, not
  the action (`specialist._FACT_OF_ACTION` in `asks_information`), so it is taken up beside an
  answered price;
- a settled matter's "anything else?" gives way to the next matter taken up in the same reply
  (`specialist.ANYTHING_ELSE`, `Specialist._hand_over_next`);
- a trouble named in the clause that says it is fixed is the solved one (`_thanks_for_a_fix`);
- an idiom of ending said of the subscription is a cancellation, billing's however the router
  leans (`cues.CANCEL_IDIOM`, triage's `stops_paying`; "sub" in `triage._PAID_FOR`);
- a report that the steps worked ("that sorted it, syncing fine now") is no yes to an offer made
  beside them (the gate's `confirmation._OUTCOME`, stricter only);
- referral and affiliate programmes are the discount ground (the ground reader's
  evals/ground-lines-30-tune.jsonl).
"""

from __future__ import annotations

from supportdesk.engine.confirmation import read_answer
from supportdesk.models.offline import cues
from supportdesk.models.offline.specialist import asks_information
from tests.money_turns import converse, not_run


def test_how_long_about_an_action_s_thing_is_information():
    assert asks_information("how long is a password reset link valid for?")
    assert asks_information("and how many days does a refund take to show up?")
    # the action itself, asked, is still no information
    assert not asks_information("can you send me a password reset link?")
    assert not asks_information("please refund the duplicate charge")


async def test_a_price_and_how_long_a_reset_link_lasts_in_one_reply():
    assert not await converse(
        ("whats the monthly price of starter, and how long does a password reset link stay valid?",
         {"reply": ["9.99", "30 minutes"], "not_tools": not_run()}),
    )


async def test_thanks_for_the_steps_hands_over_without_anything_else_first():
    assert not await converse(
        ("my files won't sync to my tablet, and i was charged twice in march. dana@example.com", {"not_tools": not_run()}),
        ("that sorted it, syncing fine now, thanks!", {"reply_not": ["anything else"], "offers": ["refund_charge"], "not_tools": not_run()}),
    )


async def test_the_trouble_named_as_fixed_is_no_new_trouble():
    assert not await converse(
        ("the app keeps freezing on my phone, and i was charged twice in march. dana@example.com", {"not_tools": not_run()}),
        ("ok that fixed the freezing, thanks", {"reply_not": ["what you see on screen"], "offers": ["refund_charge"], "not_tools": not_run()}),
    )


def test_idioms_of_ending_name_the_subscription():
    assert cues.CANCEL_IDIOM.search("pull the plug on my acme sub pls")
    assert cues.CANCEL_IDIOM.search("we're done with our subscription")
    assert cues.CANCEL_IDIOM.search("ditch my membership")
    assert not cues.CANCEL_IDIOM.search("the sync pulled the plug on my uploads")
    assert not cues.CANCEL_IDIOM.search("the app pulled old versions of my files")


async def test_pulling_the_plug_on_the_sub_is_billing_s_cancellation():
    assert not await converse(
        ("pull the plug on the acme sub, we don't use it. elena.ortiz4@example.com",
         {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": not_run()}),
        ("yes", {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1004"}}], "not_tools": not_run("cancel_subscription")}),
    )


def test_a_referral_programme_is_ground_no_tool_covers():
    assert cues.unknown_ground("is there a referral scheme for inviting other companies?") == "discount or promo code"
    assert cues.unknown_ground("do you run an affiliate program for bloggers?") == "discount or promo code"
    assert cues.unknown_ground("how do i invite my friend to our workspace?") is None


def test_a_report_that_the_steps_worked_is_no_yes_to_the_offer_beside_them():
    # (the gate: h30 found "that sorted it, syncing fine now, thanks!" running the refund offered)
    for said in ("that sorted it, syncing fine now, thanks!", "that did the trick, thank you", "its working properly now thx"):
        assert read_answer(said) != "yes", said
    for said in ("yes please", "sure, that works for me", "go ahead"):
        assert read_answer(said) == "yes", said


def test_a_link_for_a_password_is_no_reward_whatever_the_ground_reader_hears(monkeypatch):
    # held-31: the ground reader, taught referral links (ground-lines-30), heard a reward's link
    # in a non-native request for the reset link; a password named keeps it the reset's.
    from supportdesk.readers import gates

    monkeypatch.setattr(gates, "ground", lambda text: gates.DISCOUNT)
    assert cues.unknown_ground("i would like that you send me the link for make new password") is None
    assert cues.unknown_ground("is there a bonus when i refer a friend?") is not None
