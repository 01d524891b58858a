"""Issue 38 (money-7b): a plan named by its place in the price list ("the middle plan", "the one
in between", "the second cheapest") is offered and made on the yes; a request to stop paying is
a cancellation request, offered; a list reference with its yes in one answer ("the second one,
yes") is the yes to that item; a refund the policy refuses is said so, and why."""

from __future__ import annotations

from supportdesk.models.offline import slots
from tests.money_turns import MONEY, conversation_passes


def test_a_place_in_an_ordered_list_is_read_from_ordinals_and_ends():
    assert slots.place_named("id like the middle plan") == slots.Place(0, "middle")
    assert slots.place_named("the one in between") == slots.Place(0, "middle")
    assert slots.place_named("the second cheapest plan") == slots.Place(2, "low")
    assert slots.place_named("the 2nd most expensive one") == slots.Place(2, "high")
    assert slots.place_named("third from the top") == slots.Place(3, "high")
    assert slots.place_named("the cheapest plan") is None  # an end alone: the plan change's own reading
    assert slots.place_named("first i want to know") is None
    four = [1, 2, 3, 4]
    assert slots.Place(2, "high").pick(four) == 3 and slots.Place(0, "middle").pick(four) is None
    assert slots.Place(0, "middle").pick([1, 2, 3]) == 2 and slots.Place(5, "low").pick(four) is None


def test_a_plan_is_found_in_the_price_list_by_its_place():
    from supportdesk.models.offline.skills.money.plans import plan_in_catalogue

    # Another catalogue than the demo's, listed out of price order: the place is read by price.
    plans = [{"code": "crew", "name": "Crew", "monthly_price": 49.0, "annual_price": 490.0},
             {"code": "basic", "name": "Basic", "monthly_price": 5.0, "annual_price": 50.0},
             {"code": "plus", "name": "Plus", "monthly_price": 15.0, "annual_price": 150.0}]
    assert plan_in_catalogue("the middle plan please", plans) == "plus"
    assert plan_in_catalogue("the second most expensive tier", plans) == "plus"
    assert plan_in_catalogue("the third cheapest one", plans) == "crew"
    assert plan_in_catalogue("the middle plan please", plans[:2]) is None  # two plans: no middle


async def test_a_plan_named_by_its_place_is_offered_then_made_on_the_yes():
    # ben is on Team: "the one in between" is Pro, whatever plan the message also names.
    await conversation_passes([
        {"customer": "the team plan is too much for us now, i want the one in between. ben.martin33@example.com",
         "expect": {"agent": "billing", "offers": ["change_plan"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "change_plan", "arguments": {"customer_id": "CUS-1033", "plan": "pro"}}]}},
    ], {"change_plan": 1})


_LISTED_OFFER = (
    "Here are those charges — March 5, 2026: $9.99, Acme Cloud Starter plan, March 2026; March 6, 2026: $9.99, "
    "Acme Cloud Starter plan, March 2026 (duplicate). The charge on March 6, 2026 is a duplicate. Would you like me to refund it?"
)


def test_a_pointer_into_the_offers_own_list_with_a_yes_is_the_yes_to_that_item_only():
    from supportdesk.engine.confirmation import read_answer

    # The offer lists two days and asks about the second: its place in the list is the offer's.
    assert read_answer("the second one, yes", _LISTED_OFFER) == "yes"
    assert read_answer("yes the 2nd one", _LISTED_OFFER) == "yes"
    assert read_answer("the last one yes", _LISTED_OFFER) == "yes"
    # A pointer at the other listed item is no yes to this one, however it says yes.
    assert read_answer("the first one, yes", _LISTED_OFFER) != "yes"
    assert read_answer("1st one yes please", _LISTED_OFFER) != "yes"
    assert read_answer("the second one", _LISTED_OFFER) != "yes"  # which one, not whether
    assert read_answer("yes, the one on the third", _LISTED_OFFER.replace("6,", "3,")) == "yes"  # a day, no pointer


async def test_a_list_reference_and_its_yes_in_one_answer_refunds_that_charge_once():
    await conversation_passes([
        {"customer": "i was billed twice in march?? sami.meyer18@example.com",
         "expect": {"agent": "billing", "reply": ["$29.99"], "not_tools": MONEY}},
        {"customer": "yes the second one", "expect": {
            "tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9059", "amount": 29.99}}],
            "reply_not": ["just to be sure"]}},
    ], {"refund_charge": 1})
    await conversation_passes([
        {"customer": "i was billed twice in march?? sami.meyer18@example.com", "expect": {"not_tools": MONEY}},
        {"customer": "the first one, yes", "expect": {"not_tools": MONEY}},
    ], {"refund_charge": 0})


def test_a_request_to_stop_paying_is_heard_as_a_cancellation_and_a_period_change_is_not():
    from supportdesk.models.offline.skills.money.intents import MoneyIntents

    for said in ("stop billing me.", "i'd like to stop paying for acme from now on.",
                 "I no longer want to be charged for Acme every month, please stop it."):
        assert MoneyIntents._intents_of(said) == {"cancel"}, said
    # A billing period wanted, a problem told, a plan by its place: no cancellation heard.
    assert "cancel" not in MoneyIntents._intents_of("I want to be charged every year, not every month")
    assert "cancel" not in MoneyIntents._intents_of("I am not happy with speed of the app, please return me the money of february.")
    assert MoneyIntents._intents_of("id like the middle plan please") == {"plan"}


async def test_a_cancellation_in_other_words_is_offered_and_made_only_on_the_yes():
    await conversation_passes([
        {"customer": "stop billing me. esther.kowalski30@example.com",
         "expect": {"agent": "billing", "offers": ["cancel_subscription"], "not_tools": MONEY}},
        {"customer": "yes", "expect": {"tools": [{"name": "cancel_subscription", "arguments": {"customer_id": "CUS-1030"}}]}},
    ], {"cancel_subscription": 1, "refund_charge": 0})


def test_a_choice_pointed_at_is_no_cancellation_nor_a_plan_unless_a_plan_is_named():
    from supportdesk.models.offline.skills.money.intents import MoneyIntents

    # The intent reader reads short "i want ..." requests as cancel: no verb of ending, no cancellation.
    for said in ("i want the second one", "id like the other one", "Starter please", "oops wrong account, i meant marco@example.com"):
        assert "cancel" not in MoneyIntents._intents_of(said), said
    # "the second one" points into any list shown (here the charges): no plan change heard.
    assert MoneyIntents._intents_of("you charged me twice in march, the second one on march 3 is a duplicate") == {"duplicate"}


def test_money_back_asked_in_other_words_is_heard_clause_by_clause_and_a_question_is_not():
    from supportdesk.models.offline.skills.money.intents import MoneyIntents

    assert MoneyIntents._intents_of("I am not happy with speed of the app, please return me the money of february.") == {"refund"}
    for said in ("what did i pay in february?", "how much was the february charge", "show me my charges from february"):
        assert "refund" not in MoneyIntents._intents_of(said), said


async def test_a_refund_the_policy_refuses_is_said_so_and_why_never_offered():
    # farid's february charge is no duplicate: money back asked for in other words is refused, with why.
    await conversation_passes([
        {"customer": "I am not happy with speed of the app, please return me the money of february. farid.patel5@example.com",
         "expect": {"agent": "billing", "reply": ["can't refund", "duplicate"], "reply_not": ["shall i refund"],
                    "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"refund_charge": 0})
    # No charge named, and none of vera's fits a listed reason: refused, not "which one?".
    await conversation_passes([
        {"customer": "i dont really use the app anymore, can i get a refund for my last payment? vera.reyes21@example.com",
         "expect": {"agent": "billing", "reply": ["can't refund", "duplicate"], "reply_not": ["which of these would you like refunded"],
                    "context_absent": ["pending_offer"], "not_tools": MONEY}},
    ], {"refund_charge": 0})
    # A duplicate among the charges: a refund could go through, so which one is asked (nothing refused).
    await conversation_passes([
        {"customer": "can i get a refund please? sami.meyer18@example.com", "expect": {"reply_not": ["can't refund"], "not_tools": MONEY}},
    ])


def test_a_plan_or_a_period_wanted_is_no_money_back_however_the_intent_reader_leans():
    # The intent reader knows no plan change (Banking77's intents) and reads this as refund 0.99;
    # heard as money back it drew the policy's refusal of every charge instead of the change's
    # offer (held-8's "yearly starter from the next renewal").
    from supportdesk.models.offline.skills.money import heard

    assert not heard.heard_refund("from my next renewal onwards i want starter but paid yearly, not monthly. ada.lovelace32@example.com")
    assert not heard.heard_refund("please put me on pro from march, carmen.rossi28@example.com")
    assert heard.heard_refund("I am not happy with speed of the app, please return me the money of february")
