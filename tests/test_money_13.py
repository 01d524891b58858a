"""The money skill's side of a refund passed up (issue 38.1, evals/money-13-*): a duplicate seen
while answering about a charge is offered by billing on the senior's behalf, asked again after a
hedge in the same way, and a duplicate told by its first day "and again the next day" is refunded
on the repeat, not the first. Conversations run the real desk on a fresh demo database."""

from __future__ import annotations

from tests.money_turns import converse
from tests.test_offline_skills import ACTIONS

MONEY = ACTIONS + ["update_payment_method", "send_password_reset"]
NOT_REFUND = [t for t in MONEY if t != "refund_charge"]


def _offered(charge_id: str) -> dict:
    return {"context_includes": {"pending_offer": {"arguments": {"charge_id": charge_id}}}}


async def test_a_duplicate_told_by_its_first_day_and_again_the_next_is_refunded_on_the_repeat():
    assert not await converse(
        ("acme took 9.99 on the 24th of march and then again the next day, i have one plan. elena.ortiz36@example.com",
         {"offers": ["refund_charge"], "not_tools": MONEY, **_offered("CH-9116")}),
        ("yes pls", {"tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9116", "amount": 9.99}}]}),
    )
    # Named as the double by its day, the charge named is the one offered (no "again" after it).
    assert not await converse(
        ("i was charged twice in march, the one from the 1st is the double one. dana@example.com", _offered("CH-9003")),
    )


async def test_a_hedge_to_a_refund_passed_up_is_put_again_for_the_senior_and_the_plain_yes_runs_it_there():
    assert not await converse(
        ("what is the march 3 charge on my account? marco@example.com", {"agent": "billing", "offers": ["refund_charge"], "not_tools": MONEY}),
        ("i guess so?", {"agent": "billing", "offers": ["refund_charge"], "not_tools": MONEY}),
        ("yes", {"agent": "senior", "reply_not": ["shall i"], "not_tools": NOT_REFUND,
                 "tools": [{"name": "refund_charge", "arguments": {"charge_id": "CH-9008", "amount": 129.99}}]}),
    )
