"""Issue 38 (money-h18, held-18's money misses by kind): a day named without its month that fits
several charges is asked about, a failed one said to have failed as it is listed; a day's charges asked for are not heard as a duplicate told; a charge asked about "yesterday";
an offer held while someone else approves it stays offered for the later yes, a card change too;
a billing period said "by the year" or "for the whole year" is a period change; a plan change is
told with its price unless that very price was already said."""

from __future__ import annotations

from supportdesk.models.offline import cues
from supportdesk.models.offline.skills.money import asks
from supportdesk.models.offline.skills.money.heard import heard_duplicate
from tests.money_turns import MONEY, passes


def test_a_period_said_by_the_year_or_for_the_whole_year_is_a_period_change():
    assert cues.plan_request("ok then make it starter, by the year") == ("starter", "annual")
    assert cues.plan_request("by the month please, pro")[1] == "monthly"
    assert cues.PLAN_CHANGE.search("switch me to paying for the whole year at once instead")
    assert not cues.PLAN_CHANGE.search("i paid for the whole year at once last january")  # no change verb


def test_another_persons_approval_awaited_is_no_refusal():
    for text in ("one moment, our finance guy has to approve this first", "my boss needs to sign it off before"):
        assert asks.waits_for_someone(text), text
    assert not asks.waits_for_someone("no, leave the card as it is")


def test_a_days_charges_asked_for_are_no_duplicate_told():
    assert asks.asks_charges("was anything taken on the 5th of this month")
    assert not heard_duplicate("was anything taken on the 5th of this month")
    assert heard_duplicate("i was charged twice this month")


async def test_a_failed_payment_named_by_its_day_alone_is_listed_as_failed_then_refused_with_why():
    # CUS-1013's starter payment failed on March 10; January's and February's 10th went through:
    # which one is asked (a day fits three), the failed one said to have failed as it is listed.
    await passes({"name": "money h18", "turns": [
        {"customer": "CUS-1013 the starter payment of the 10th didnt go out, refund it anyway",
         "expect": {"agent": "billing", "reply": ["Which one", "March 10, 2026 (CH-9043, failed: no money was taken)"],
                    "reply_not": ["shall i refund"], "not_tools": MONEY}},
        {"customer": "the march one",
         "expect": {"reply": ["failed", "nothing to refund"], "reply_not": ["shall i refund"], "not_tools": MONEY}},
    ], "expect": {"tool_counts": {"refund_charge": 0}}})


async def test_a_charge_asked_about_yesterday_is_that_days():
    await passes({"name": "money h18", "turns": [
        {"customer": "CUS-1038 whats that acme item on my paypal from yesterday",
         "expect": {"agent": "billing", "reply": ["March 27, 2026", "$29.99"], "not_tools": MONEY}},
    ]})


async def test_a_card_change_held_for_an_approval_runs_once_on_the_later_yes():
    await passes({"name": "money h18", "turns": [
        {"customer": "CUS-1021 make the amex ending 0005 my card from now on",
         "expect": {"agent": "billing", "offers": ["update_payment_method"], "not_tools": MONEY}},
        {"customer": "hang on, i have to ask my business partner first", "expect": {"reply_not": ["No problem"], "not_tools": MONEY}},
        {"customer": "she said yes, go ahead",
         "expect": {"tools": [{"name": "update_payment_method", "arguments": {"customer_id": "CUS-1021", "method": "amex ending 0005"}}]}},
    ], "expect": {"tool_counts": {"update_payment_method": 1}}})


async def test_a_period_change_after_the_next_payment_is_offered_with_its_price():
    # The next payment's answer reads the price list; the change's own price was never said.
    await passes({"name": "money h18", "turns": [
        {"customer": "CUS-1017 when is my next payment", "expect": {"agent": "billing", "reply": ["April 17, 2026"], "not_tools": MONEY}},
        {"customer": "then move me to starter billed yearly",
         "expect": {"offers": ["change_plan"], "reply": ["$99.99"], "not_tools": MONEY}},
    ], "expect": {"tool_counts": {"change_plan": 0}}})



def test_time_asked_to_decide_is_undecided_not_a_no():
    # "gimme a minute, not sure yet" to an offer: no yes and no refusal, so the offer is put again
    # (held-19); time asked beside a refusal or another matter is still no hedge.
    from supportdesk.engine.confirmation import hedged, read_answer

    for text in ("hmm gimme a minute, not sure yet", "give me a sec", "one moment please"):
        assert hedged(text) and read_answer(text) != "yes", text
    for text in ("a minute ago i said no", "no, give me a minute to cancel the other thing", "hold on"):
        assert not hedged(text), text


async def test_a_cancel_turned_down_then_asked_for_by_its_verb_is_offered_again_and_runs_once_on_yes():
    # held-19: "right, decided. go ahead and cancel it" after a no named no subscription and got
    # "Alright."; the cancellation it points at is put again, and only the yes runs it, once.
    nothing = [t for t in MONEY if t != "cancel_subscription"]
    await passes({"name": "money h18 cancel again", "turns": [
        {"customer": "cancel my subscription please, iris.haddad40@example.com",
         "expect": {"offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "no, leave it", "expect": {"not_tools": MONEY}},
        {"customer": "right, decided. go ahead and cancel it", "expect": {"offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1040"}}],
                                       "not_tools": nothing}},
    ], "tool_counts": {"cancel_subscription": 1}})
