"""Billing tools: find the customer, read charges, invoices and plan prices, refund, change the plan."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from supportdesk.business import Row
from supportdesk.config import ToolLimits
from supportdesk.engine.tools import PolicyDenied, ToolContext, ToolOutput
from supportdesk.tools.shipped import registry
from supportdesk.tools.common import (
    ToolFailure,
    customer_said,
    customers,
    emails_said,
    money,
    money_limits,
    names_account,
    names_id,
    not_named,
    require_named_account,
    safe,
    write_key,
)

# What a question must say to be the offer of a write (engine/tools.py `Checks`): the action,
# and its amount / plan / period / timing, each in one of these spellings.
REFUND_WORDS = ("refund", "refunded", "refunding")
CANCEL_WORDS = ("cancel", "cancelled", "canceled", "cancelling", "canceling", "cancellation")
PERIOD_WORDS = {
    "annual": ("annual", "annually", "yearly", "a year", "per year"),
    "monthly": ("monthly", "a month", "per month"),
}
RENEWAL_WORDS = ("renewal", "renews", "next billing date")


class FindCustomerArgs(BaseModel):
    query: str = Field(description="customer id (CUS-1001) or email address, as the customer gave it", min_length=1)


async def _find_customer(ctx: ToolContext, args: FindCustomerArgs) -> ToolOutput:
    found = await customers(ctx).find_customer(args.query)
    if found is None:
        return ToolOutput(f"no customer matches {args.query!r}", is_error=True)
    # The record holds the account's email address, plan and payment method: a name, which
    # anyone may know, does not show it; the customer's own email address or id does.
    await require_named_account(ctx, found)
    learned = {"customer_id": found["id"], "customer_email": found["email"]}
    # "as_of": the business data's today (the demo company's calendar lives in March 2026), so
    # an agent counts "your next payment" from it, not from the machine's clock.
    record = {**found, "as_of": _today(customers(ctx)).isoformat()}
    return ToolOutput(record, context={k: v for k, v in learned.items() if ctx.context.get(k) != v})


registry.tool("find_customer", "Look a customer up by the id or email address they gave.", FindCustomerArgs)(
    safe(_find_customer)
)


class FindChargesArgs(BaseModel):
    customer_id: str | None = Field(None, description="limit to this customer")
    customer: str | None = Field(None, description="or: the id or email address the customer gave, looked up first")
    amount: float | None = Field(None, gt=0, description="the charged amount, e.g. 29.99")
    dates: list[str] = Field(
        default_factory=list, description="dates as YYYY-MM-DD, or --MM-DD when the year is unknown"
    )


async def _find_charges(ctx: ToolContext, args: FindChargesArgs) -> ToolOutput:
    store = customers(ctx)
    customer_id = args.customer_id
    learned: dict[str, str] = {}
    if args.customer:
        # One call instead of find_customer + find_charges: the usual first step in billing.
        found = await store.find_customer(args.customer)
        if found is None:
            raise ToolFailure(f"no customer matches {args.customer!r}")
        await require_named_account(ctx, found)
        customer_id = found["id"]
        learned["customer_email"] = found["email"]
    elif customer_id:
        await require_named_account(ctx, customer_id)
    if not (customer_id or args.amount or args.dates):
        raise ToolFailure("give a customer, an amount or dates to search charges")
    charges = await store.find_charges(customer_id=customer_id, amount=args.amount, dates=args.dates or None)
    if not customer_id:
        charges = await _of_named_accounts(ctx, charges)
    owners = sorted({c["customer_id"] for c in charges})
    if customer_id and not owners:
        owners = [customer_id]
    result = {
        "charges": charges,
        "customers": owners,
        "duplicates": [c["id"] for c in charges if c.get("duplicate_of")],
    }
    if len(owners) == 1:
        learned["customer_id"] = owners[0]
    return ToolOutput(result, context={k: v for k, v in learned.items() if ctx.context.get(k) != v})


async def _of_named_accounts(ctx: ToolContext, charges: list[Row]) -> list[Row]:
    """A search by amount or dates shows only the charges of accounts the customer named (email
    or id). An amount and dates name no account, even when one account alone was charged them:
    anyone who knows a charge would see (and could have refunded) its owner's."""
    said = await customer_said(ctx)
    owners = {c["customer_id"] for c in charges}
    # An id is named as written; each email written is looked up once, rather than every
    # owner's account read (a plan's price was charged to 14 demo accounts).
    named = {owner for owner in owners if names_id(said, owner)}
    for email in emails_said(said):
        account = await customers(ctx).find_customer(email)
        if account is not None and account["id"] in owners and names_account(said, account):
            named.add(account["id"])
    shown = [c for c in charges if c["customer_id"] in named]
    if charges and not shown:
        raise not_named()
    return shown


registry.tool(
    "find_charges",
    "Find charges by customer, amount and/or dates; marks duplicates (duplicate_of) and what is still refundable.",
    FindChargesArgs,
)(safe(_find_charges))


class ListInvoicesArgs(BaseModel):
    customer_id: str = Field(min_length=1)


async def _list_invoices(ctx: ToolContext, args: ListInvoicesArgs) -> ToolOutput:
    store = customers(ctx)
    account = await store.get_customer(args.customer_id)
    if account is None:
        raise ToolFailure(f"no customer {args.customer_id}")
    await require_named_account(ctx, account)
    return ToolOutput({"invoices": await store.invoices(args.customer_id), "refunds": await store.refunds(args.customer_id)})


registry.tool("list_invoices", "List a customer's invoices and the refunds made so far.", ListInvoicesArgs)(
    safe(_list_invoices)
)


class RefundArgs(BaseModel):
    charge_id: str = Field(min_length=1, description="the charge to refund, e.g. CH-9004")
    amount: float = Field(gt=0, description="amount to refund in the charge's currency")
    reason: str = Field(
        min_length=1,
        description="one of the desk's refund reasons: duplicate charge, charged after cancellation, "
        "failed service credited by a ticket",
    )


async def _refund_policy(ctx: ToolContext, args: RefundArgs) -> None:
    # The reason comes first: a refund the desk would never make is not put to staff either;
    # nor one on an account the customer has not named.
    if ctx.limits.reason(args.reason) is None:
        raise PolicyDenied(_no_refund(ctx, f"{args.reason!r} is not a reason this desk refunds for"))
    charge = await customers(ctx).get_charge(args.charge_id.upper())
    if charge is not None:  # (an unknown charge is the tool's own "no charge" answer)
        await require_named_account(ctx, charge["customer_id"])
        # The reason must be true of the charge before the refund is offered to the customer
        # (issue 33); `_refund` checks again when the money moves.
        await _check_refund_facts(ctx, args)
    # (The amount's limits, declared below, the engine checks after this: engine/tools.py.)


def _no_refund(ctx: ToolContext, why: str) -> str:
    """A refusal the agent passes on: why, what the desk refunds for, and the way forward."""
    listed = ", ".join(ctx.limits.reasons or ())
    return (
        f"no refund: {why}. This desk refunds only for: {listed}. If the customer still wants a refund, "
        "offer to escalate to a senior agent or a human"
    )


async def _check_refund_facts(ctx: ToolContext, args: RefundArgs) -> None:
    """The named reason must be true of the charge, whatever the model says; and the charge recent."""
    store = customers(ctx)
    # Read again rather than taken from the policy check: a refund held for staff approval runs
    # when it is approved, perhaps hours later, and the facts must hold when the money moves.
    charge = await store.get_charge(args.charge_id.upper())
    if charge is None:
        raise ToolFailure(f"no charge {args.charge_id}")
    limits = ctx.limits
    reason = limits.reason(args.reason)
    if reason == "duplicate charge":
        await _check_duplicate(ctx, store, charge)
    if reason == "charged after cancellation":
        customer = await store.get_customer(charge["customer_id"])
        if customer is None or customer.get("status") != "cancelled":
            raise PolicyDenied(_no_refund(ctx, f"{charge['customer_id']}'s subscription is not cancelled"))
    if reason == "failed service credited by a ticket" and not await store.tickets(charge["customer_id"]):
        raise PolicyDenied(_no_refund(ctx, f"no ticket records a failed service for {charge['customer_id']}"))
    today = _today(store)
    age = (today - date.fromisoformat(str(charge["charged_on"])[:10])).days
    if limits.window_days is not None and age > limits.window_days:
        raise PolicyDenied(
            _no_refund(ctx, f"{charge['id']} was charged {age} days ago, outside the {limits.window_days}-day refund window")
        )


async def _check_duplicate(ctx: ToolContext, store: object, charge: dict) -> None:
    """Either charge of a duplicate pair may be refunded (the customer may name the first), but
    only one: a pair whose other charge was already refunded is no duplicate any more."""
    siblings = await customers(ctx).charges(charge["customer_id"])
    original = charge.get("duplicate_of") or charge["id"]
    pair = [c for c in siblings if c["id"] == original or c.get("duplicate_of") == original]
    if len(pair) < 2:
        raise PolicyDenied(_no_refund(ctx, f"{charge['id']} is not one of a pair of duplicate charges"))
    refunded = [c["id"] for c in pair if c["id"] != charge["id"] and c.get("refunded_amount", 0) > 0]
    if refunded:
        raise PolicyDenied(
            _no_refund(ctx, f"the duplicate of {charge['id']} was already refunded ({', '.join(refunded)})")
        )


def _today(store: object) -> date:
    """Today as the business data sees it (the demo data lives in its own early 2026)."""
    today = getattr(store, "today", None)
    return today() if callable(today) else date.today()


async def _refund(ctx: ToolContext, args: RefundArgs) -> ToolOutput:
    await _check_refund_facts(ctx, args)
    result = await customers(ctx).refund(
        key=write_key(ctx),
        session_id=ctx.session_id,
        charge_id=args.charge_id,
        amount=round(args.amount, 2),
        reason=args.reason,
        agent=ctx.agent.name,
        limits=money_limits(ctx),
    )
    return ToolOutput(
        result,
        context={"last_refund": {"charge_id": result["charge_id"], "amount": result["amount"], "refund_id": result["refund_id"]}},
    )


# What money may move without staff (config.ToolLimits); a desk file sets other values in
# `[tools.NAME]`, or for both money tools at once in `[policy]` (refund_limit_level1 ...).
MONEY_LIMITS = ToolLimits(
    limit_level1=50.0,
    limit_level2=2000.0,
    approval_threshold=250.0,
    limit_per_conversation=500.0,
    limit_per_customer=1000.0,
    period_days=30,
)

registry.tool(
    "refund_charge",
    "Refund (part of) a charge. Limited per agent level; large refunds wait for staff approval.",
    RefundArgs,
    policy=_refund_policy,
    effect="money",
    confirm="customer",
    describe=lambda a: f"refund {money(a.amount)} on charge {a.charge_id.upper()} ({a.reason})",
    checks=lambda a: [REFUND_WORDS, (money(a.amount),)],
    # The first three reasons are checked against the data (the charge is a duplicate, the
    # subscription is cancelled, a ticket records the failure); a reason a desk adds is taken
    # as given. A charge older than the window is not refunded by an agent (escalate instead).
    limits=dataclasses.replace(
        MONEY_LIMITS,
        reasons=("duplicate charge", "charged after cancellation", "failed service credited by a ticket"),
        window_days=90,
    ),
    what="a refund",
)(safe(_refund))


class PaymentMethodArgs(BaseModel):
    customer_id: str = Field(min_length=1)
    method: str = Field(min_length=3, max_length=80, description="e.g. 'visa ending 1234' or 'paypal'")


async def _update_payment_method(ctx: ToolContext, args: PaymentMethodArgs) -> ToolOutput:
    return ToolOutput(
        await customers(ctx).update_payment_method(
            key=write_key(ctx), session_id=ctx.session_id, customer_id=args.customer_id, method=args.method, agent=ctx.agent.name
        )
    )


async def _named_account(ctx: ToolContext, args: PaymentMethodArgs | ChangePlanArgs | CancelArgs) -> None:
    await require_named_account(ctx, args.customer_id)


registry.tool(
    "update_payment_method",
    "Replace the payment method on file.",
    PaymentMethodArgs,
    policy=_named_account,
    effect="account",
    confirm="customer",
    describe=lambda a: f"replace the payment method of {a.customer_id} with {a.method}",
    checks=lambda a: [(a.method,)],
)(safe(_update_payment_method))


class ListPlansArgs(BaseModel):
    """No arguments: the price list is the same for every customer."""


async def _list_plans(ctx: ToolContext, args: ListPlansArgs) -> ToolOutput:
    plans = await customers(ctx).plans()
    if not plans:
        raise ToolFailure("no plans are on sale right now")
    return ToolOutput({"plans": plans})


registry.tool(
    "list_plans",
    "List the plans on sale with their monthly and annual prices (read-only; no customer needed).",
    ListPlansArgs,
)(safe(_list_plans))


class ChangePlanArgs(BaseModel):
    customer_id: str = Field(min_length=1)
    plan: Literal["starter", "pro", "team"]
    billing_period: Literal["monthly", "annual"] | None = None
    when: Literal["now", "renewal"] = Field("now", description="now, or at the customer's next renewal")


async def _change_plan(ctx: ToolContext, args: ChangePlanArgs) -> ToolOutput:
    return ToolOutput(
        await customers(ctx).change_plan(
            key=write_key(ctx),
            session_id=ctx.session_id,
            customer_id=args.customer_id,
            plan=args.plan,
            billing_period=args.billing_period,
            agent=ctx.agent.name,
            when=args.when,
        )
    )


registry.tool(
    "change_plan",
    "Move a customer to another plan or billing period, now or at their next renewal; "
    "status says whether anything changed (changed, scheduled, unchanged).",
    ChangePlanArgs,
    policy=_named_account,
    effect="account",
    confirm="customer",
    describe=lambda a: (
        f"move {a.customer_id} to the {a.plan} plan"
        + (f", billed {'annually' if a.billing_period == 'annual' else 'monthly'}" if a.billing_period else "")
        + (", starting now" if a.when == "now" else ", from the next renewal")
    ),
    checks=lambda a: [
        (f"{a.plan} plan", f"{a.plan} plan's"),
        *([PERIOD_WORDS[a.billing_period]] if a.billing_period else []),
        *([RENEWAL_WORDS] if a.when == "renewal" else []),
    ],
)(safe(_change_plan))


class CancelArgs(BaseModel):
    customer_id: str = Field(min_length=1)
    reason: str = "customer asked to cancel"


async def _cancel(ctx: ToolContext, args: CancelArgs) -> ToolOutput:
    return ToolOutput(
        await customers(ctx).cancel(
            key=write_key(ctx), session_id=ctx.session_id, customer_id=args.customer_id, reason=args.reason, agent=ctx.agent.name
        )
    )


registry.tool(
    "cancel_subscription",
    "Cancel a customer's subscription (no further renewals).",
    CancelArgs,
    policy=_named_account,
    effect="account",
    confirm="customer",
    describe=lambda a: f"cancel the subscription of {a.customer_id} (no further renewals)",
    checks=lambda a: [CANCEL_WORDS],
)(safe(_cancel))
