"""What the desk's tools share: reaching the business data and the policy checks."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from supportdesk.engine.tools import PolicyDenied, ToolContext, ToolOutput
from supportdesk.business import BusinessData, BusinessError, LimitReached, MoneyLimits, Row, call_key
from supportdesk.text import EMAIL_ADDRESS, money


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


def money_limits(ctx: ToolContext) -> MoneyLimits | None:
    """The totals the called tool's limits (`ctx.limits`: its declaration, with the desk file's
    values) let a refund or credit not take a conversation or a customer past without staff;
    None once staff approved this very call, or when the tool declares no totals. The business
    data checks them in the write's own transaction, so calls racing on several machines add
    up too. (The per-call limits and the approval threshold the engine checks before the call:
    engine/tools.py `Tool.check_amount`.)"""
    limits = ctx.limits
    if ctx.approved or (limits.limit_per_conversation is None and limits.limit_per_customer is None):
        return None
    unlimited = float("inf")
    return MoneyLimits(
        per_conversation=unlimited if limits.limit_per_conversation is None else limits.limit_per_conversation,
        per_customer=unlimited if limits.limit_per_customer is None else limits.limit_per_customer,
        period_days=limits.period_days or 1,  # (a tool declaring a per-customer total declares its period)
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


def emails_said(said: str) -> set[str]:
    """The email addresses in the customer's words."""
    return {m.group("address") for m in EMAIL_ADDRESS.finditer(said)}


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
