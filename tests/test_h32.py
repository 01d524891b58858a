"""h32 (issue 38): held-32's two seen money misses, by kind (evals/h32-tune.jsonl).

Each test guards one protection and fails with it removed:
- "mid march" is a time of a month, not the middle plan of the price list (`slots._PLACE_MIDDLE`):
  a duplicate told as "two payments mid march, one has to go" asks no plan change;
- "+" lists two days as "and" does ("15th + 16th": `slots._LISTED`, `slots._BARE_DAY`), so the
  refund goes to the second day's charge, the duplicate;
- a read of the account asked in a clause of its own beside a refund (the next payment, an
  invoice, a price) is said before the refund's offer, whose question stays last
  (`MoneySkill._reads_beside_refund`).
"""

from __future__ import annotations

from supportdesk.models.offline import slots
from supportdesk.models.offline.skills.money.intents import _intents_in
from tests.money_turns import conversation_passes, not_run


def test_mid_month_is_a_time_not_a_place_in_the_price_list():
    assert slots.place_named("two payments mid march") is None
    assert slots.place_named("around the middle of the month") is None
    assert slots.place_named("the middle plan") is not None
    assert slots.place_named("the mid tier please") is not None
    assert _intents_in("two 9.99 charges mid february, one has to go") == {"duplicate"}


def test_plus_lists_two_days_as_and_does():
    assert [d.day for d in slots.extract("march 5th + 6th").dates] == [5, 6]
    assert slots.bare_days("on the 5th + 6th") == {5, 6}


async def test_a_duplicate_told_by_two_days_mid_month_is_offered_and_the_yes_refunds_the_second():
    await conversation_passes([
        {"customer": "grace.tanaka6@example.com: 9.99 went out twice mid march (5th + 6th), one of those has to go",
         "expect": {"agent": "billing", "offers": ["refund_charge"], "not_tools": not_run()}},
        {"customer": "ok", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9021", "amount": 9.99}}],
                                      "not_tools": not_run("refund_charge")}},
    ])


async def test_the_next_payment_asked_beside_a_double_charge_is_said_before_the_offer():
    await conversation_passes([
        {"customer": "dana@example.com you charged me twice in march. and when is the next payment?",
         "expect": {"agent": "billing", "reply": ["April 1, 2026"], "offers": ["refund_charge"], "not_tools": not_run()}},
        {"customer": "yes", "expect": {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9004", "amount": 29.99}}],
                                       "not_tools": not_run("refund_charge")}},
    ])


async def test_an_invoice_asked_beside_a_double_charge_is_listed_before_the_offer():
    await conversation_passes([
        {"customer": "sami.meyer18@example.com double charge for march; what is my february invoice number?",
         "expect": {"agent": "billing", "reply": ["INV-5053"], "offers": ["refund_charge"], "not_tools": not_run()}},
    ])
