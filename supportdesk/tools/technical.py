"""Technical tools: search the knowledge base, send a password reset."""

from __future__ import annotations

from pydantic import BaseModel, Field

from supportdesk.engine.tools import PolicyDenied, ToolContext, ToolOutput
from supportdesk.tools.shipped import registry
from supportdesk.tools.common import ToolFailure, customers, safe, write_key
# mypy takes the articles' folder tools/kb/ for a namespace package and misses tools/kb.py.
from supportdesk.tools.kb import knowledge_base  # type: ignore[attr-defined]


class SearchKbArgs(BaseModel):
    query: str = Field(min_length=1, description="what the customer is trying to do or what fails")
    limit: int = Field(3, ge=1, le=10)


def _search_kb(ctx: ToolContext, args: SearchKbArgs) -> ToolOutput:
    # Abstains: no article unless one answers with confidence (an unrelated article presented
    # as the answer is worse than none: the agent then says it does not know).
    hits = knowledge_base().answer(args.query, args.limit)
    return ToolOutput(
        {
            "articles": [
                {"id": a.slug, "title": a.title, "score": score, "steps": list(a.steps)} for a, score in hits
            ]
        }
    )


registry.tool(
    "search_kb",
    "Search the help-centre articles; returns the best matches with their steps, or none when no article answers.",
    SearchKbArgs,
)(
    _search_kb
)
# The articles are read when the tools are built (a desk's warm-up, or `serve` opening its desk),
# not inside the first turn that searches them: that was ~0.2 s on a server's event loop.
knowledge_base()


class PasswordResetArgs(BaseModel):
    customer: str = Field(min_length=1, description="customer id or the account's email address")


async def _reset_policy(ctx: ToolContext, args: PasswordResetArgs) -> None:
    # Checked before the call is offered to the customer: a link to no account is never offered.
    if await customers(ctx).find_customer(args.customer) is None:
        raise PolicyDenied(f"no account matches {args.customer!r}; ask for the email on the account")


async def _send_password_reset(ctx: ToolContext, args: PasswordResetArgs) -> ToolOutput:
    store = customers(ctx)
    found = await store.find_customer(args.customer)
    if found is None:
        raise ToolFailure(f"no account matches {args.customer!r}; ask for the email on the account")
    result = await store.password_reset(
        key=write_key(ctx), session_id=ctx.session_id, customer_id=found["id"], agent=ctx.agent.name
    )
    return ToolOutput(result, context={"customer_id": found["id"], "customer_email": found["email"]})


registry.tool(
    "send_password_reset",
    "Email a password reset link to the address on file (never to an address the customer gives).",
    PasswordResetArgs,
    policy=_reset_policy,
    effect="account",
    confirm="customer",
    describe=lambda a: f"email a password reset link for {a.customer} to the address on file",
    checks=lambda a: [("reset link", "password reset", "reset your password")],
)(safe(_send_password_reset))
