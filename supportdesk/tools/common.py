"""What the desk's tools share: reaching the business data and the policy checks."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from supportdesk.engine.tools import ApprovalRequired, PolicyDenied, ToolContext, ToolOutput
from supportdesk.business import BusinessData, BusinessError, LimitReached, MoneyLimits, Row, call_key
from supportdesk.text import money


class ToolFailure(Exception):
    """An expected failure the agent should read (unknown customer ...), not a crash."""


def customers(ctx: ToolContext) -> BusinessData:
    store = getattr(ctx.services, "customers", None)
    if store is None:
        raise ToolFailure("the customer data store is not available on this desk")
    return store


def write_key(ctx: ToolContext) -> str:
    """The idempotency key of the write this call makes: the engine's, when it gives one,
    else today's (session, call id). The business data treats it as an opaque string."""
    return ctx.idempotency_key or call_key(ctx.session_id, ctx.call_id)


def check_refund_policy(ctx: ToolContext, amount: float, what: str = "refund") -> None:
    """Per-level limits and the staff-approval threshold, read from the desk's policy.

    This is the only place that decides: no instruction in a prompt or a customer's
    message can change it.
    """
    level = ctx.agent.level
    limit = ctx.desk.policy.refund_limit(level)
    if amount > limit + 1e-9:
        raise PolicyDenied(
            f"a {what} of {money(amount)} is above the {money(limit)} limit for level-{level} agents"
            + ("; escalate to a senior agent" if level < 2 else "")
        )
    threshold = ctx.desk.policy.approval_threshold
    if amount >= threshold - 1e-9:
        raise ApprovalRequired(f"a {what} of {money(amount)} is at or above the {money(threshold)} approval threshold")


def money_limits(ctx: ToolContext) -> MoneyLimits | None:
    """The totals a refund or credit may not take a conversation or a customer past without
    staff (None once staff approved this very call). The business data checks them in the
    write's own transaction, so calls racing on several machines add up too."""
    if ctx.approved:
        return None
    policy = ctx.desk.policy
    return MoneyLimits(
        per_conversation=policy.money_limit_per_conversation,
        per_customer=policy.money_limit_per_customer,
        period_days=policy.money_period_days,
    )


async def require_named_account(ctx: ToolContext, account_or_id: Row | str) -> None:
    """Show or act on an account only once the customer has named it in this session, in their
    own messages, by its email address or customer id: one rule for every account tool, reads
    and writes, refunds and plan changes alike (issue 39 §3: the stricter of the two it had).

    Neither the model nor the shared context (which models write) can vouch for whose account
    it is: a message that talks a model into it must not show, cancel, re-plan, re-bill, credit
    or refund an account its writer never named. What others may know names no account: a name,
    or a charge's amount and dates (anyone who saw the statement, or knows a plan's price)."""
    # A caller that has just read the account passes it rather than have it read again.
    account = await customers(ctx).get_customer(account_or_id) if isinstance(account_or_id, str) else account_or_id
    if account is None:
        return  # no such account: the tool itself says so, and acts on nothing
    if not names_account(await customer_said(ctx), account):
        raise not_named()


async def customer_said(ctx: ToolContext) -> str:
    """What the customer wrote in this session, casefolded ("" outside a desk runner)."""
    return (await ctx.customer_words()).casefold() if ctx.customer_words is not None else ""


def names_account(said: str, account: Row) -> bool:
    """Whether the customer's words (casefolded) hold the account's email address or id."""
    return any(_holds(said, str(mark)) for mark in (account["email"], account["id"]))


def names_id(said: str, customer_id: str) -> bool:
    """Whether the customer's words (casefolded) hold this account id (no read needed)."""
    return _holds(said, customer_id)


def _holds(said: str, mark: str) -> bool:
    mark = mark.casefold()
    return bool(mark) and re.search(rf"(?<![\w.+-]){re.escape(mark)}(?![\w-])", said) is not None


_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def emails_said(said: str) -> set[str]:
    """The email addresses in the customer's words."""
    return set(_EMAIL.findall(said))


def not_named() -> PolicyDenied:
    # In the customer's words (the embedded model reads it out after "That didn't go through:"),
    # naming no account; a model reads it as what to ask for. A PolicyDenied: the tool result
    # says "refused by policy: ...", never a technical failure's words.
    return PolicyDenied("to confirm the account is yours, I need the email address on it")


def require_level(ctx: ToolContext, level: int, what: str) -> None:
    if ctx.agent.level < level:
        raise PolicyDenied(f"{what} needs a level-{level} agent; {ctx.agent.name} is level {ctx.agent.level}")


def safe(fn: Callable[[ToolContext, Any], Awaitable[ToolOutput]]) -> Callable[[ToolContext, Any], Awaitable[ToolOutput]]:
    """Turn the data store's expected failures into a readable error output for the agent."""

    @functools.wraps(fn)
    async def run(ctx: ToolContext, args: Any) -> ToolOutput:
        try:
            return await fn(ctx, args)
        except LimitReached as exc:  # nothing moved: staff decide (the runner files the request)
            return ToolOutput.held(str(exc))
        except (BusinessError, ToolFailure) as exc:
            return ToolOutput(str(exc), is_error=True)

    return run
