"""A conversation on a desk, checked the way the evals check it: the skills' tests drive whole
conversations (an offer, the customer's yes or no, the call made once) through these, so each test
says only its turns and what it expects."""

from __future__ import annotations

from supportdesk.commands.evals import evaluate_conversations
from tests.conftest import REPO

# The money and account tools an unasked turn must not call (each conversation's `not_tools`).
MONEY = ["refund_charge", "cancel_subscription", "change_plan", "issue_credit", "update_payment_method"]
# ... and with the password reset, the six no turn may run unless the customer asked for it.
UNASKED = [*MONEY, "send_password_reset"]


def not_run(*allowed: str) -> list[str]:
    """A turn's `not_tools`: the six, less the ones this turn runs on the customer's yes."""
    return [t for t in UNASKED if t not in allowed]


async def failures(conversation: dict, config: str = "agents.toml") -> list[str]:
    """The evaluator's reasons `conversation` fails on the desk file `config` (repository-relative)."""
    [result] = await evaluate_conversations([conversation], config=str(REPO / config))
    return result.failures


async def passes(conversation: dict, config: str = "agents.toml") -> None:
    """Fail with the evaluator's reasons unless `conversation` passes on `config`."""
    assert not (found := await failures(conversation, config)), "\n".join(found)


async def converse(*turns: tuple[str, dict]) -> list[str]:
    """The reasons a conversation of (customer text, expectations) turns fails on agents.toml."""
    return await failures({"name": "t", "turns": [{"customer": text, "expect": expect} for text, expect in turns]})


async def conversation_passes(turns: list[dict], counts: dict | None = None) -> None:
    """Run `turns` on agents.toml; fail with the evaluator's reasons. `counts`: each tool's
    successful calls over the whole conversation (exactly-once checks)."""
    conversation: dict = {"name": "money turns", "turns": turns}
    if counts is not None:
        conversation["expect"] = {"tool_counts": counts}
    await passes(conversation)
