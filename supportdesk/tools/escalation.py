"""Senior and desk-wide tools: credits, engineering tickets, and asking for a human."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from supportdesk.engine.tools import ToolContext, ToolOutput
from supportdesk.items import Notice
from supportdesk.tools.shipped import registry
from supportdesk.tools.billing import MONEY_LIMITS
from supportdesk.tools.common import (
    customers,
    money,
    money_limits,
    require_level,
    require_named_account,
    safe,
    write_key,
)


class CreditArgs(BaseModel):
    customer_id: str = Field(min_length=1)
    amount: float = Field(gt=0)
    reason: str = Field(min_length=1)


async def _credit_policy(ctx: ToolContext, args: CreditArgs) -> None:
    require_level(ctx, 2, "an account credit")
    await require_named_account(ctx, args.customer_id)
    # (The amount's limits, declared below, the engine checks after this: engine/tools.py.)


async def _issue_credit(ctx: ToolContext, args: CreditArgs) -> ToolOutput:
    result = await customers(ctx).credit(
        key=write_key(ctx),
        session_id=ctx.session_id,
        customer_id=args.customer_id,
        amount=round(args.amount, 2),
        reason=args.reason,
        agent=ctx.agent.name,
        limits=money_limits(ctx),
    )
    return ToolOutput(result)


registry.tool(
    "issue_credit",
    "Give account credit against future invoices (level 2; large credits wait for staff approval).",
    CreditArgs,
    policy=_credit_policy,
    effect="money",
    confirm="customer",
    describe=lambda a: f"give {a.customer_id} {money(a.amount)} of account credit ({a.reason})",
    checks=lambda a: [("credit",), (money(a.amount),)],
    limits=MONEY_LIMITS,  # the refunds' (the totals count refunds and credits together)
    what="a credit",
)(safe(_issue_credit))


class TicketArgs(BaseModel):
    summary: str = Field(min_length=3, max_length=500)
    severity: Literal["low", "normal", "high", "urgent"] = "normal"
    customer_id: str | None = None


def _ticket_policy(ctx: ToolContext, args: TicketArgs) -> None:
    require_level(ctx, 2, "an engineering ticket")


async def _create_ticket(ctx: ToolContext, args: TicketArgs) -> ToolOutput:
    result = await customers(ctx).create_ticket(
        key=write_key(ctx),
        session_id=ctx.session_id,
        customer_id=args.customer_id,
        summary=args.summary,
        severity=args.severity,
        agent=ctx.agent.name,
    )
    return ToolOutput(result, context={"ticket_id": result["ticket_id"]})


registry.tool(
    "create_ticket", "Open an engineering ticket for a bug (level 2).", TicketArgs, policy=_ticket_policy, effect="desk"
)(safe(_create_ticket))


class HumanArgs(BaseModel):
    reason: str = Field("customer asked for a person", max_length=500)


def _request_human(ctx: ToolContext, args: HumanArgs) -> ToolOutput:
    notice = Notice(
        notice_kind="human_requested",
        text=f"The customer asked for a human: {args.reason}",
        data={"reason": args.reason, "agent": ctx.agent.name},
    )
    return ToolOutput("a member of staff has been notified and will join the conversation", notices=[notice])


registry.tool("request_human", "Ask a member of staff to join the conversation.", HumanArgs, effect="desk")(_request_human)
