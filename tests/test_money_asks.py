"""Issue 38 (money-7): the money skill answers what a money question asks, from the business
data: a day named from today counted on the demo calendar, the renewal's date and price, a
plan's price with no change wanted; plans named by what they are, resolved against the price
list; a change at renewal told without the word "change" offered, and made on the yes."""

from __future__ import annotations

from datetime import date

from supportdesk.commands.evals import evaluate_conversations
from supportdesk.models.offline import slots
from tests.conftest import REPO

MONEY = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]


async def _passes(turns: list[dict], counts: dict | None = None) -> None:
    convo: dict = {"name": "money asks", "turns": turns}
    if counts is not None:
        convo["expect"] = {"tool_counts": counts}
    [result] = await evaluate_conversations([convo], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)


def test_a_day_named_from_today_is_counted_from_the_calendar_given():
    today = date(2026, 3, 20)
    assert slots.relative_days("did you charge me anything yesterday?", today) == [slots.Date(3, 19, 2026)]
    assert slots.relative_days("the day before yesterday, or 3 days ago", today) == [slots.Date(3, 18, 2026), slots.Date(3, 17, 2026)]
    assert slots.relative_days("today's charge", date(2026, 1, 1)) == [slots.Date(1, 1, 2026)]
    assert slots.relative_days("what did i pay in march", today) == []


async def test_yesterday_is_the_demo_calendars_and_its_missing_charge_said():
    # The demo company's today is March 20, 2026 (business/demo.py): its yesterday has no charge.
    await _passes([{"customer": "did you charge me anything yesterday? dana@example.com",
                    "expect": {"agent": "billing", "reply": ["I don't see a charge on March 19, 2026"],
                               "reply_not": ["Here is that charge"], "not_tools": MONEY}}])
