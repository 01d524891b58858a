"""The desk's business data as the tools see it: customers, charges, invoices, plans, and the
writes that move money or change an account.

This is not session storage. Today two demo adapters keep it (`sqlite.py`, `postgres.py`, the
same seeded customers on either), each only its driver and dialect on one shared core
(`core.py`: every statement, read and write written once); a real back office would be a third
adapter behind the same contract, on that core when it speaks SQL. Rows are plain dicts (what a tool hands to the model as JSON).

Every write takes an idempotency `key`: an opaque string naming the request (the engine builds
it; see `tools/common.py`). The first call with a key does the work and stores its result with
the key, in the same transaction; any later call with that key gets the stored result back,
marked `replayed`, on whichever machine it runs. Reusing a key for another tool is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Row = dict[str, Any]


class BusinessError(Exception):
    """A request the business data cannot satisfy (unknown customer, too large a refund ...):
    the message is for the agent to read, not a crash."""


@dataclass(frozen=True)
class MoneyLimits:
    """How much money (refunds and credits together) may move without staff: per conversation
    (session) and per customer over the last `period_days`. The money tool declares them (`ToolLimits`) and the desk file may set them."""

    per_conversation: float
    per_customer: float
    period_days: int


class LimitReached(BusinessError):
    """A refund or credit that would take a conversation's or a customer's total past its
    `MoneyLimits`: nothing was written; staff may approve it (the tool asks)."""


def call_key(session_id: str, call_id: str) -> str:
    """Today's idempotency key of a tool call: its session and the model's call id."""
    return f"{session_id}/{call_id}"


@runtime_checkable
class BusinessData(Protocol):
    """What the desk's tools read and write. Open one with `supportdesk.business.open_business`."""

    async def close(self) -> None: ...

    # --- reads ---
    async def find_customer(self, query: str) -> Row | None:
        """A customer by id (CUS-1001), email, or full name, case-insensitive."""
        ...

    async def get_customer(self, customer_id: str) -> Row | None: ...

    async def find_charges(
        self, *, customer_id: str | None = None, amount: float | None = None, dates: list[str] | None = None
    ) -> list[Row]:
        """Charges matching a customer, an amount and/or dates ('2026-03-01', or '--03-01' for
        any year), each marked with `refundable` and, for a repeat, `duplicate_of`."""
        ...

    async def charges(self, customer_id: str) -> list[Row]: ...

    async def get_charge(self, charge_id: str) -> Row | None: ...

    async def tickets(self, customer_id: str | None = None) -> list[Row]: ...

    async def invoices(self, customer_id: str) -> list[Row]: ...

    async def refunds(self, customer_id: str | None = None) -> list[Row]: ...

    async def plans(self) -> list[Row]:
        """The plans on sale, cheapest first: code, name, monthly_price, annual_price."""
        ...

    # --- writes, each done once per key ---
    async def refund(
        self, *, key: str, session_id: str, charge_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        """Refund part of a charge. Never past what was paid: the database refuses it inside
        the refund's transaction, whatever other machines refund at the same moment. With
        `limits`, raises `LimitReached` (writing nothing) when the session's or the customer's
        refunds and credits would pass them: the totals are read and the refund written in one
        transaction, serialized per session and per customer, so concurrent calls add up."""
        ...

    async def credit(
        self, *, key: str, session_id: str, customer_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        """Credit an account; `limits` as for `refund`."""
        ...

    async def money_moved(self, *, session_id: str, customer_id: str, period_days: int) -> tuple[float, float]:
        """Refunds and credits together: (in this session, to this customer in the last
        `period_days`)."""
        ...

    async def change_plan(
        self, *, key: str, session_id: str, customer_id: str, plan: str, billing_period: str | None, agent: str,
        when: str = "now",
    ) -> Row:
        """Move a customer to `plan` now, or record the move for their next renewal (`when`).
        `status` says what happened: "changed", "scheduled", or "unchanged" when the customer
        is already on that plan and period (nothing is written then)."""
        ...

    async def cancel(self, *, key: str, session_id: str, customer_id: str, reason: str, agent: str) -> Row: ...

    async def update_payment_method(
        self, *, key: str, session_id: str, customer_id: str, method: str, agent: str
    ) -> Row: ...

    async def password_reset(self, *, key: str, session_id: str, customer_id: str, agent: str) -> Row: ...

    async def create_ticket(
        self, *, key: str, session_id: str, customer_id: str | None, summary: str, severity: str, agent: str
    ) -> Row: ...


@runtime_checkable
class BusinessSnapshot(Protocol):
    """An optional capability: the whole data set as rows, and put back (`supportdesk db copy`).

    The demo adapters have it; a real back office would not be copied by the desk."""

    async def snapshot(self) -> dict[str, list[Row]]:
        """Every table (`demo.TABLES`) as rows in a stable order."""
        ...

    async def restore(self, tables: dict[str, list[Row]]) -> None:
        """Replace everything with `tables`, in one transaction."""
        ...
