"""Technical tools: search the knowledge base, send a password reset."""

from __future__ import annotations

import re

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
                {"id": a.slug, "title": a.title, "score": score, "steps": list(a.steps), "reference": a.reference}
                for a, score in hits
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


# The knowledge-base article whose step this tool carries out ("support can send you a reset link").
RESET_ARTICLE = "password-reset"


def _reset_asked_for(text: str) -> bool:
    """Whether a customer's message asks for a reset link (confirm = "request": the request is
    the consent, the lead's policy of issue 38): a clause of it asks for something (the act
    reader, engine/confirmation.py), with no other clause asking a question, and the message, or that clause, is about what the reset
    article answers (the knowledge base's confident answer). "how do I reset my password?" asks
    how, "I can't log in" tells a problem, "lock things down" asks for something else: none is
    a request for the link."""
    from supportdesk.engine.confirmation import requests_apart  # (the engine's reader of acts)

    # A clause asking beside another that asks a question is no request for the link: the
    # question is about it (`requests_apart`, the technical skill's reading too).
    asking = requests_apart(text)
    if not asking:
        return False
    kb = knowledge_base()

    def topic(said: str) -> str | None:
        answers = kb.answer(said)
        if any(a.slug == RESET_ARTICLE for a, _ in answers) and _NAMES_THE_RESET.search(said):
            # The reset named in the asking clause, and the reset article among the confident
            # answers, though another's word came first ("hook me up w a reset link": "hook"
            # found the integrations article; sec17). Without "reset" ("i need a new password",
            # "help me change my password") the reset article second is no request for the link.
            return RESET_ARTICLE
        return answers[0][0].slug if answers else None

    # The clause that asks is about the reset; or it names no matter of its own ("need a new
    # one") and the message around it is. A request for something else beside a forgotten
    # password ("I forgot my password, and I also need last month's invoice") asks for no link.
    # (The knowledge base has no billing articles: a clause about money is a matter of its own
    # however the articles read it, as the money reader, readers/gates.py, is sure of.)
    from supportdesk.readers.gates import money_probability

    whole = topic(text)
    return any(
        (mine := topic(clause)) == RESET_ARTICLE
        or (mine is None and whole == RESET_ARTICLE and money_probability(clause) < _SURELY_MONEY)
        for clause in asking
    )


_SURELY_MONEY = 0.9
# The reset article's own action named (its slug's verb): "reset", "resetting".
_NAMES_THE_RESET = re.compile(r"\breset", re.I)


registry.tool(
    "send_password_reset",
    "Email a password reset link to the address on file (never to an address the customer gives).",
    PasswordResetArgs,
    policy=_reset_policy,
    effect="account",
    # The link changes nothing until the customer uses it, and goes only to the address on
    # file: a customer who asks for it has said yes; offered unasked, it waits for a yes.
    confirm="request",
    asked=_reset_asked_for,
    describe=lambda a: f"email a password reset link for {a.customer} to the address on file",
    checks=lambda a: [("reset link", "password reset", "reset your password")],
)(safe(_send_password_reset))
