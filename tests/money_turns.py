"""A conversation on the default desk, checked the way the evals check it: the money skill's tests
drive whole conversations (an offer, the customer's yes or no, the call made once) through this."""

from __future__ import annotations

from supportdesk.commands.evals import evaluate_conversations
from tests.conftest import REPO

# The money and account tools an unasked turn must not call (each conversation's `not_tools`).
MONEY = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]


async def conversation_passes(turns: list[dict], counts: dict | None = None) -> None:
    """Run `turns` on agents.toml; fail with the evaluator's reasons. `counts`: each tool's
    successful calls over the whole conversation (exactly-once checks)."""
    conversation: dict = {"name": "money turns", "turns": turns}
    if counts is not None:
        conversation["expect"] = {"tool_counts": counts}
    [result] = await evaluate_conversations([conversation], config=str(REPO / "agents.toml"))
    assert result.passed, "\n".join(result.failures)
