"""The demo data both demo adapters hold: its tables, its deterministic seed, and the rules
that read the same on either (duplicate marks, the words of a refusal).

No SQL here: `sqlite.py` and `postgres.py` write these rows in their own dialects, so a
fresh database of either kind holds the same customers (the seed scenario's duplicate
charges among them).
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone
from typing import Any

from supportdesk.business.protocol import BusinessError, LimitReached, MoneyLimits, Row

# Every demo table with its columns in a fixed order, parents before children: the order a
# snapshot is written and restored in.
TABLES: dict[str, tuple[str, ...]] = {
    "demo_meta": ("key", "value"),
    "demo_plans": ("code", "name", "monthly_price", "annual_price"),
    "demo_customers": (
        "id", "name", "email", "plan", "billing_period", "status", "payment_method", "billing_day", "created_on",
    ),
    "demo_invoices": ("id", "customer_id", "period", "amount", "status", "issued_on"),
    "demo_charges": (
        "id", "customer_id", "invoice_id", "amount", "currency", "charged_on", "description", "status",
        "refunded_amount",
    ),
    "demo_refunds": ("id", "charge_id", "customer_id", "amount", "reason", "agent", "session_id", "created_at"),
    "demo_credits": ("id", "customer_id", "amount", "reason", "agent", "session_id", "created_at"),
    "demo_account_events": ("id", "customer_id", "event", "detail", "agent", "session_id", "created_at"),
    "demo_tickets": ("id", "customer_id", "summary", "severity", "status", "agent", "session_id", "created_at"),
    # One row per idempotency key: the first result of the write it names.
    "demo_writes": ("key", "tool", "session_id", "result", "created_at"),
}
# The key each table's snapshot is ordered by.
ORDER_BY = {name: cols[0] for name, cols in TABLES.items()}
# Tables whose integer id the database hands out (a restore moves the counter past the rows).
SERIAL_TABLES = ("demo_refunds", "demo_credits", "demo_account_events")

PLANS = (
    ("starter", "Starter", 9.99, 99.99),
    ("pro", "Pro", 29.99, 299.99),
    ("team", "Team", 129.99, 1299.99),
)
SEED = 20260301
# The demo world's today: the day after its last charges (March 27, 2026), so no charge or invoice
# lies ahead of it and the refund window (`[policy] refund_window_days`) means the same whenever
# the demo runs.
TODAY = date(2026, 3, 28)
SEED_VERSION = "2"
# demo_meta's 'schema_version': 2 keys writes by an opaque idempotency key (demo_writes)
# instead of (session, call id) (demo_tool_calls). Bump it with any change to either adapter's
# SCHEMA: an open of a database already at this version skips the DDL.
SCHEMA_VERSION = "2"

FIRST = ("Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas", "Keiko", "Liam",
         "Maya", "Nils", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Xia",
         "Yara", "Zane", "Aline", "Bruno", "Carmen", "Diego", "Esther", "Felix")
LAST = ("Lovelace", "Okafor", "Nguyen", "Patel", "Rossi", "Haddad", "Hopper", "Martin", "Novak", "Berg",
        "Tanaka", "Murphy", "Cohen", "Larsen", "Ivanova", "Shah", "Adams", "Silva", "Kowalski", "Reyes",
        "Farouk", "Lindqvist", "Moreau", "Chen", "Haddad", "Walsh", "Dubois", "Costa", "Ortiz", "Garcia",
        "Meyer", "Klein")
CARDS = ("visa ending 4242", "mastercard ending 5454", "amex ending 0005", "visa ending 1881", "paypal")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def since(period_days: int) -> str:
    """The `created_at` from which a period of days back counts (same format as `now`)."""
    return (datetime.now(timezone.utc) - timedelta(days=period_days)).isoformat(timespec="seconds")


def check_limits(limits: MoneyLimits, amount: float, in_session: float, to_customer: float, customer_id: str) -> None:
    """Raise `LimitReached` when `amount` on top of what already moved passes a limit."""
    slack = 0.004  # amounts are whole cents; the slack only absorbs binary floating point
    if in_session + amount > limits.per_conversation + slack:
        raise LimitReached(
            f"refunds and credits in this conversation would come to ${in_session + amount:,.2f}, "
            f"above the ${limits.per_conversation:,.2f} a conversation may move without staff"
        )
    if to_customer + amount > limits.per_customer + slack:
        raise LimitReached(
            f"refunds and credits to {customer_id} in the last {limits.period_days} days would come to "
            f"${to_customer + amount:,.2f}, above the ${limits.per_customer:,.2f} a customer may get without staff"
        )


def seed_rows() -> dict[str, list[Row]]:
    """The demo data of a fresh database. Deterministic: the same customers every time."""
    rng = random.Random(SEED)
    out: dict[str, list[Row]] = {name: [] for name in TABLES}
    out["demo_plans"] = [dict(zip(TABLES["demo_plans"], plan)) for plan in PLANS]
    price = {code: monthly for code, _, monthly, _ in PLANS}
    months = (date(2026, 1, 1), date(2026, 2, 1), date(2026, 3, 1))
    invoice_no, charge_no = 5001, 9001

    def add_customer(cid: str, name: str, email: str, plan: str, day: int, card: str, period: str = "monthly",
                     created_on: str | None = None) -> None:
        out["demo_customers"].append({
            "id": cid, "name": name, "email": email, "plan": plan, "billing_period": period, "status": "active",
            "payment_method": card, "billing_day": day, "created_on": created_on or "2025-06-%02d" % day,
        })

    def add_charge(cid: str, invoice: str, amount: float, charged_on: str, label: str, status: str) -> None:
        nonlocal charge_no
        out["demo_charges"].append({
            "id": f"CH-{charge_no}", "customer_id": cid, "invoice_id": invoice, "amount": amount, "currency": "USD",
            "charged_on": charged_on, "description": label, "status": status, "refunded_amount": 0.0,
        })
        charge_no += 1

    def add_month(cid: str, plan: str, month: date, day: int, *, status: str = "succeeded",
                  duplicate_on: int | None = None) -> None:
        nonlocal invoice_no
        amount = price[plan]
        inv = f"INV-{invoice_no}"
        invoice_no += 1
        charged_on = month.replace(day=day).isoformat()
        out["demo_invoices"].append({
            "id": inv, "customer_id": cid, "period": month.strftime("%Y-%m"), "amount": amount,
            "status": "paid" if status in ("succeeded", "disputed") else "unpaid", "issued_on": charged_on,
        })
        label = f"Acme Cloud {plan.title()} plan, {month.strftime('%B %Y')}"
        add_charge(cid, inv, amount, charged_on, label, status)
        if duplicate_on is not None:
            add_charge(cid, inv, amount, month.replace(day=duplicate_on).isoformat(), label, "succeeded")

    # The seed scenario's customers: a Pro customer and a Team customer, each charged twice
    # for March 2026 (March 1st and March 3rd).
    add_customer("CUS-1001", "Dana Whitfield", "dana@example.com", "pro", 1, "visa ending 4242")
    add_customer("CUS-1002", "Marco Bellini", "marco@example.com", "team", 1, "mastercard ending 5454")
    for cid, plan in (("CUS-1001", "pro"), ("CUS-1002", "team")):
        for month in months:
            add_month(cid, plan, month, 1, duplicate_on=3 if month.month == 3 else None)

    # A few dozen more, with duplicate charges, failed payments and disputed items sprinkled in.
    for n in range(3, 41):
        cid = f"CUS-{1000 + n}"
        first, last = FIRST[n % len(FIRST)], LAST[(n * 7) % len(LAST)]
        email = f"{first.lower()}.{last.lower()}{n}@example.com"
        plan = rng.choice(("starter", "starter", "pro", "pro", "team"))
        day = rng.randint(5, 27)
        add_customer(cid, f"{first} {last}", email, plan, day, rng.choice(CARDS))
        trouble = n % 6  # 0: a duplicate, 1: a failed payment, 2: a disputed charge, else clean
        for i, month in enumerate(months):
            last_month = i == len(months) - 1
            if last_month and trouble == 0:
                add_month(cid, plan, month, day, duplicate_on=day + 1)
            elif last_month and trouble == 1:
                add_month(cid, plan, month, day, status="failed")
            elif last_month and trouble == 2:
                add_month(cid, plan, month, day, status="disputed")
            else:
                add_month(cid, plan, month, day)
    # An annual Team customer charged twice for the year: a refund above the approval
    # threshold, so senior's refund waits for staff.
    # An annual plan renews on the anniversary the desk reads from `created_on`: the same day as
    # the year's charge below (January 15), so the account and its charges tell one story.
    add_customer("CUS-1041", "Priya Raman", "priya@example.com", "team", 15, "amex ending 0005", "annual",
                 created_on="2025-01-15")
    inv = f"INV-{invoice_no}"
    out["demo_invoices"].append({
        "id": inv, "customer_id": "CUS-1041", "period": "2026", "amount": 1299.99, "status": "paid",
        "issued_on": "2026-01-15",
    })
    for day in (15, 16):
        add_charge("CUS-1041", inv, 1299.99, f"2026-01-{day}", "Acme Cloud Team plan, 2026 (annual)", "succeeded")
    out["demo_meta"] = [{"key": "schema_version", "value": SCHEMA_VERSION}, {"key": "seed_version", "value": SEED_VERSION}]
    return out


def with_duplicates(charges: list[Row]) -> list[Row]:
    """Mark each charge that repeats an earlier successful one for the same invoice and amount,
    and what is still refundable on each."""
    seen: dict[tuple[Any, float], str] = {}
    for ch in sorted(charges, key=lambda c: (c["charged_on"], c["id"])):
        ch["refundable"] = round(ch["amount"] - ch["refunded_amount"], 2) if ch["status"] != "failed" else 0.0
        key = (ch["invoice_id"], ch["amount"])
        if ch["status"] == "succeeded" and key in seen:
            ch["duplicate_of"] = seen[key]
        elif ch["status"] == "succeeded":
            seen[key] = ch["id"]
    return charges


def matches_dates(charged_on: str, dates: list[str]) -> bool:
    return any(charged_on.endswith(d[1:]) if d.startswith("--") else charged_on == d for d in dates)


def check_refund_amount(amount: float) -> None:
    if amount <= 0:
        raise BusinessError("a refund must be more than zero")


def refund_refused(charge_id: str, charge: Row | None, amount: float) -> BusinessError:
    """Why the database refused a refund, in words for the agent (read after the refusal)."""
    if charge is None:
        return BusinessError(f"no charge {charge_id}")
    if charge["status"] == "failed":
        return BusinessError(f"charge {charge_id} failed, so there is nothing to refund")
    left = max(round(charge["amount"] - charge["refunded_amount"], 2), 0.0)
    return BusinessError(f"charge {charge_id} has only ${left:.2f} left to refund")


def replayed(result: Row, stored_tool: str, tool: str, key: str) -> Row:
    """The first result of a key, for a repeated call; another tool may not reuse the key."""
    if stored_tool != tool:
        raise BusinessError(f"call {key} was already used for {stored_tool}")
    return result | {"replayed": True}
