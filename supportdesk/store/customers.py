"""The demo customer data the desk's tools act on: customers, plans, invoices and charges.

The tables live in the same SQLite file as the sessions, all prefixed `demo_`, created
with IF NOT EXISTS and seeded deterministically on first use, so every fresh database
holds the same customers (the seed scenario's duplicate charges among them).

Every write a tool makes (refund, credit, plan change, cancellation, payment method,
password reset, ticket) runs in one `BEGIN IMMEDIATE` transaction together with a row in
`demo_tool_calls` keyed by (session, call id). A call replayed after a crash finds that
row and returns the first result: nothing is refunded twice.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Callable
from datetime import date, datetime, timezone
from typing import Any, TypeVar

import aiosqlite

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS demo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS demo_plans (
    code TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    monthly_price REAL NOT NULL,
    annual_price REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_customers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL REFERENCES demo_plans(code),
    billing_period TEXT NOT NULL DEFAULT 'monthly',
    status TEXT NOT NULL DEFAULT 'active',
    payment_method TEXT NOT NULL,
    billing_day INTEGER NOT NULL,
    created_on TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_invoices (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES demo_customers(id),
    period TEXT NOT NULL,
    amount REAL NOT NULL,
    status TEXT NOT NULL,
    issued_on TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS demo_invoices_customer ON demo_invoices(customer_id);
CREATE TABLE IF NOT EXISTS demo_charges (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES demo_customers(id),
    invoice_id TEXT REFERENCES demo_invoices(id),
    amount REAL NOT NULL,
    currency TEXT NOT NULL DEFAULT 'USD',
    charged_on TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL,
    refunded_amount REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS demo_charges_customer ON demo_charges(customer_id);
CREATE INDEX IF NOT EXISTS demo_charges_amount ON demo_charges(amount);
CREATE TABLE IF NOT EXISTS demo_refunds (
    id INTEGER PRIMARY KEY,
    charge_id TEXT NOT NULL REFERENCES demo_charges(id),
    customer_id TEXT NOT NULL,
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_credits (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES demo_customers(id),
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_account_events (
    id INTEGER PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES demo_customers(id),
    event TEXT NOT NULL,
    detail TEXT NOT NULL,
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_tickets (
    id TEXT PRIMARY KEY,
    customer_id TEXT,
    summary TEXT NOT NULL,
    severity TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_tool_calls (
    session_id TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, call_id)
);
"""

PLANS = (
    ("starter", "Starter", 9.99, 99.99),
    ("pro", "Pro", 29.99, 299.99),
    ("team", "Team", 129.99, 1299.99),
)
SEED = 20260301
SEED_VERSION = "2"

FIRST = ("Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas", "Keiko", "Liam",
         "Maya", "Nils", "Olga", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Xia",
         "Yara", "Zane", "Aline", "Bruno", "Carmen", "Diego", "Esther", "Felix")
LAST = ("Lovelace", "Okafor", "Nguyen", "Patel", "Rossi", "Haddad", "Hopper", "Martin", "Novak", "Berg",
        "Tanaka", "Murphy", "Cohen", "Larsen", "Ivanova", "Shah", "Adams", "Silva", "Kowalski", "Reyes",
        "Farouk", "Lindqvist", "Moreau", "Chen", "Haddad", "Walsh", "Dubois", "Costa", "Ortiz", "Garcia",
        "Meyer", "Klein")
CARDS = ("visa ending 4242", "mastercard ending 5454", "amex ending 0005", "visa ending 1881", "paypal")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class CustomerError(Exception):
    """A request the demo data cannot satisfy (unknown customer, too large a refund ...)."""


def _rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _seed(conn: sqlite3.Connection) -> None:
    """Fill the demo tables once. Deterministic: the same customers in every database."""
    rng = random.Random(SEED)
    conn.executemany("INSERT INTO demo_plans VALUES (?, ?, ?, ?)", PLANS)
    price = {code: monthly for code, _, monthly, _ in PLANS}
    months = (date(2026, 1, 1), date(2026, 2, 1), date(2026, 3, 1))
    invoice_no, charge_no = 5001, 9001

    def add_customer(cid: str, name: str, email: str, plan: str, day: int, card: str) -> None:
        conn.execute(
            "INSERT INTO demo_customers (id, name, email, plan, payment_method, billing_day, created_on)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (cid, name, email, plan, card, day, "2025-06-%02d" % day),
        )

    def add_month(cid: str, plan: str, month: date, day: int, *, status: str = "succeeded",
                  duplicate_on: int | None = None, invoice_status: str | None = None) -> None:
        nonlocal invoice_no, charge_no
        amount = price[plan]
        inv = f"INV-{invoice_no}"
        invoice_no += 1
        charged_on = month.replace(day=day).isoformat()
        inv_status = invoice_status or ("paid" if status in ("succeeded", "disputed") else "unpaid")
        conn.execute(
            "INSERT INTO demo_invoices VALUES (?, ?, ?, ?, ?, ?)",
            (inv, cid, month.strftime("%Y-%m"), amount, inv_status, charged_on),
        )
        label = f"Acme Cloud {plan.title()} plan, {month.strftime('%B %Y')}"
        conn.execute(
            "INSERT INTO demo_charges (id, customer_id, invoice_id, amount, charged_on, description, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (f"CH-{charge_no}", cid, inv, amount, charged_on, label, status),
        )
        charge_no += 1
        if duplicate_on is not None:
            conn.execute(
                "INSERT INTO demo_charges (id, customer_id, invoice_id, amount, charged_on, description, status)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (f"CH-{charge_no}", cid, inv, amount, month.replace(day=duplicate_on).isoformat(), label, "succeeded"),
            )
            charge_no += 1

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
    add_customer("CUS-1041", "Priya Raman", "priya@example.com", "team", 15, "amex ending 0005")
    conn.execute("UPDATE demo_customers SET billing_period = 'annual' WHERE id = 'CUS-1041'")
    conn.execute(
        "INSERT INTO demo_invoices VALUES (?, ?, ?, ?, ?, ?)",
        (f"INV-{invoice_no}", "CUS-1041", "2026", 1299.99, "paid", "2026-01-15"),
    )
    for charge_id, day in ((f"CH-{charge_no}", 15), (f"CH-{charge_no + 1}", 16)):
        conn.execute(
            "INSERT INTO demo_charges (id, customer_id, invoice_id, amount, charged_on, description, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (charge_id, "CUS-1041", f"INV-{invoice_no}", 1299.99, f"2026-01-{day}", "Acme Cloud Team plan, 2026 (annual)", "succeeded"),
        )
    conn.execute("INSERT INTO demo_meta VALUES ('seed_version', ?)", (SEED_VERSION,))


def _setup(conn: sqlite3.Connection) -> None:
    # Schema and seed in one transaction: one fsync instead of one per statement, and two
    # processes opening a fresh database cannot both seed it.
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        seeded = conn.execute("SELECT value FROM demo_meta WHERE key = 'seed_version'").fetchone()
        if seeded is None:
            _seed(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _with_duplicates(charges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark each charge that repeats an earlier successful one for the same invoice and amount."""
    seen: dict[tuple[Any, float], str] = {}
    for ch in sorted(charges, key=lambda c: (c["charged_on"], c["id"])):
        ch["refundable"] = round(ch["amount"] - ch["refunded_amount"], 2) if ch["status"] != "failed" else 0.0
        key = (ch["invoice_id"], ch["amount"])
        if ch["status"] == "succeeded" and key in seen:
            ch["duplicate_of"] = seen[key]
        elif ch["status"] == "succeeded":
            seen[key] = ch["id"]
    return charges


class CustomerStore:
    """The demo customer data. Open with `await open_customers(db_path)`."""

    def __init__(self, db: aiosqlite.Connection, path: str):
        self._db = db
        self.path = path

    async def close(self) -> None:
        await self._db.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # One hop to the connection's thread per transaction (see SessionStore._run).
        return await self._db._execute(fn, self._db._conn, *args)

    async def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return await self._run(lambda conn: _rows(conn.execute(sql, params)))

    # --- reads -------------------------------------------------------------------------------

    async def find_customer(self, query: str) -> dict[str, Any] | None:
        """A customer by id (CUS-1001), email, or full name (case-insensitive)."""
        q = query.strip()
        rows = await self._query(
            "SELECT * FROM demo_customers WHERE upper(id) = upper(?) OR lower(email) = lower(?)"
            " OR lower(name) = lower(?) ORDER BY id LIMIT 1",
            (q, q, q),
        )
        return rows[0] if rows else None

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None:
        rows = await self._query("SELECT * FROM demo_customers WHERE id = ?", (customer_id,))
        return rows[0] if rows else None

    async def charges(self, customer_id: str) -> list[dict[str, Any]]:
        rows = await self._query(
            "SELECT * FROM demo_charges WHERE customer_id = ? ORDER BY charged_on, id", (customer_id,)
        )
        return _with_duplicates(rows)

    async def get_charge(self, charge_id: str) -> dict[str, Any] | None:
        rows = await self._query("SELECT * FROM demo_charges WHERE id = ?", (charge_id,))
        if not rows:
            return None
        everything = await self.charges(rows[0]["customer_id"])
        return next(c for c in everything if c["id"] == charge_id)

    async def find_charges(
        self, *, customer_id: str | None = None, amount: float | None = None, dates: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """Charges matching an amount and/or dates ('2026-03-01', or '--03-01' for any year).

        Without a customer this is how an agent finds an account from what the customer can
        see on their statement.
        """
        where, params = [], []
        if customer_id:
            where.append("customer_id = ?")
            params.append(customer_id)
        if amount is not None:
            where.append("abs(amount - ?) < 0.005")
            params.append(float(amount))
        if dates:
            parts = []
            for d in dates:
                parts.append("charged_on LIKE ?" if d.startswith("--") else "charged_on = ?")
                params.append("%" + d[1:] if d.startswith("--") else d)
            where.append("(" + " OR ".join(parts) + ")")
        if not where:
            return []
        rows = await self._query(
            f"SELECT DISTINCT customer_id FROM demo_charges WHERE {' AND '.join(where)}", tuple(params)
        )
        out: list[dict[str, Any]] = []
        for row in rows:
            marked = await self.charges(row["customer_id"])
            for ch in marked:
                if amount is not None and abs(ch["amount"] - amount) >= 0.005:
                    continue
                if dates and not any(ch["charged_on"].endswith(d[1:]) if d.startswith("--") else ch["charged_on"] == d for d in dates):
                    continue
                out.append(ch)
        return out

    async def invoices(self, customer_id: str) -> list[dict[str, Any]]:
        return await self._query(
            "SELECT * FROM demo_invoices WHERE customer_id = ? ORDER BY issued_on, id", (customer_id,)
        )

    async def get_invoice(self, invoice_id: str) -> dict[str, Any] | None:
        rows = await self._query("SELECT * FROM demo_invoices WHERE upper(id) = upper(?)", (invoice_id,))
        return rows[0] if rows else None

    async def plans(self) -> list[dict[str, Any]]:
        """The plans on sale, cheapest first: code, name, monthly_price, annual_price."""
        return await self._query(
            "SELECT code, name, monthly_price, annual_price FROM demo_plans ORDER BY monthly_price, code"
        )

    async def refunds(self, customer_id: str | None = None) -> list[dict[str, Any]]:
        if customer_id:
            return await self._query("SELECT * FROM demo_refunds WHERE customer_id = ? ORDER BY id", (customer_id,))
        return await self._query("SELECT * FROM demo_refunds ORDER BY id")

    async def credits(self, customer_id: str) -> list[dict[str, Any]]:
        return await self._query("SELECT * FROM demo_credits WHERE customer_id = ? ORDER BY id", (customer_id,))

    async def account_events(self, customer_id: str) -> list[dict[str, Any]]:
        return await self._query("SELECT * FROM demo_account_events WHERE customer_id = ? ORDER BY id", (customer_id,))

    async def tickets(self, customer_id: str | None = None) -> list[dict[str, Any]]:
        if customer_id:
            return await self._query("SELECT * FROM demo_tickets WHERE customer_id = ? ORDER BY id", (customer_id,))
        return await self._query("SELECT * FROM demo_tickets ORDER BY id")

    # --- writes: each once per (session, call id) -----------------------------------------------

    async def _once(self, session_id: str, call_id: str, tool: str, act: Callable[[sqlite3.Connection], dict[str, Any]]) -> dict[str, Any]:
        """Run `act` and record its result in one transaction, unless this call already ran."""

        def tx(conn: sqlite3.Connection) -> dict[str, Any]:
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT result, tool FROM demo_tool_calls WHERE session_id = ? AND call_id = ?", (session_id, call_id)
                ).fetchone()
                if row is not None:
                    if row[1] != tool:
                        raise CustomerError(f"call id {call_id} was already used for {row[1]}")
                    conn.execute("COMMIT")
                    result = json.loads(row[0])
                    result["replayed"] = True
                    return result
                result = act(conn)
                conn.execute(
                    "INSERT INTO demo_tool_calls VALUES (?, ?, ?, ?, ?)",
                    (session_id, call_id, tool, json.dumps(result), _now()),
                )
                conn.execute("COMMIT")
                return result
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        return await self._run(tx)

    async def refund(self, *, session_id: str, call_id: str, charge_id: str, amount: float, reason: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            row = conn.execute(
                "SELECT customer_id, amount, refunded_amount, status FROM demo_charges WHERE upper(id) = upper(?)",
                (charge_id,),
            ).fetchone()
            if row is None:
                raise CustomerError(f"no charge {charge_id}")
            customer_id, charged, refunded, status = row
            if status == "failed":
                raise CustomerError(f"charge {charge_id} failed, so there is nothing to refund")
            left = round(charged - refunded, 2)
            if amount <= 0:
                raise CustomerError("a refund must be more than zero")
            if amount > left + 0.005:
                raise CustomerError(f"charge {charge_id} has only ${left:.2f} left to refund")
            conn.execute(
                "UPDATE demo_charges SET refunded_amount = round(refunded_amount + ?, 2) WHERE upper(id) = upper(?)",
                (amount, charge_id),
            )
            cur = conn.execute(
                "INSERT INTO demo_refunds (charge_id, customer_id, amount, reason, agent, session_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (charge_id.upper(), customer_id, amount, reason, agent, session_id, _now()),
            )
            return {
                "refund_id": f"RF-{cur.lastrowid}",
                "charge_id": charge_id.upper(),
                "customer_id": customer_id,
                "amount": round(amount, 2),
                "refunded_total": round(refunded + amount, 2),
                "status": "refunded",
            }

        return await self._once(session_id, call_id, "refund_charge", act)

    async def credit(self, *, session_id: str, call_id: str, customer_id: str, amount: float, reason: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            if conn.execute("SELECT 1 FROM demo_customers WHERE id = ?", (customer_id,)).fetchone() is None:
                raise CustomerError(f"no customer {customer_id}")
            if amount <= 0:
                raise CustomerError("a credit must be more than zero")
            cur = conn.execute(
                "INSERT INTO demo_credits (customer_id, amount, reason, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (customer_id, amount, reason, agent, session_id, _now()),
            )
            return {"credit_id": f"CR-{cur.lastrowid}", "customer_id": customer_id, "amount": round(amount, 2), "status": "credited"}

        return await self._once(session_id, call_id, "issue_credit", act)

    def _account_event(self, conn: sqlite3.Connection, customer_id: str, event: str, detail: str, agent: str, session_id: str) -> None:
        conn.execute(
            "INSERT INTO demo_account_events (customer_id, event, detail, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (customer_id, event, detail, agent, session_id, _now()),
        )

    def _require_customer(self, conn: sqlite3.Connection, customer_id: str) -> tuple[Any, ...]:
        row = conn.execute(
            "SELECT id, plan, billing_period, status, payment_method, email FROM demo_customers WHERE id = ?", (customer_id,)
        ).fetchone()
        if row is None:
            raise CustomerError(f"no customer {customer_id}")
        return row

    async def change_plan(self, *, session_id: str, call_id: str, customer_id: str, plan: str, billing_period: str | None, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            _, old_plan, old_period, _, _, _ = self._require_customer(conn, customer_id)
            if conn.execute("SELECT 1 FROM demo_plans WHERE code = ?", (plan,)).fetchone() is None:
                codes = ", ".join(r[0] for r in conn.execute("SELECT code FROM demo_plans ORDER BY monthly_price"))
                raise CustomerError(f"no plan {plan!r}; plans: {codes}")
            period = billing_period or old_period
            conn.execute(
                "UPDATE demo_customers SET plan = ?, billing_period = ?, status = 'active' WHERE id = ?",
                (plan, period, customer_id),
            )
            self._account_event(conn, customer_id, "plan_changed", f"{old_plan}/{old_period} -> {plan}/{period}", agent, session_id)
            return {"customer_id": customer_id, "from_plan": old_plan, "plan": plan, "billing_period": period, "status": "changed"}

        return await self._once(session_id, call_id, "change_plan", act)

    async def cancel(self, *, session_id: str, call_id: str, customer_id: str, reason: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            _, plan, _, status, _, _ = self._require_customer(conn, customer_id)
            conn.execute("UPDATE demo_customers SET status = 'cancelled' WHERE id = ?", (customer_id,))
            self._account_event(conn, customer_id, "cancelled", reason, agent, session_id)
            return {"customer_id": customer_id, "plan": plan, "previous_status": status, "status": "cancelled"}

        return await self._once(session_id, call_id, "cancel_subscription", act)

    async def update_payment_method(self, *, session_id: str, call_id: str, customer_id: str, method: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            _, _, _, _, old, _ = self._require_customer(conn, customer_id)
            conn.execute("UPDATE demo_customers SET payment_method = ? WHERE id = ?", (method, customer_id))
            self._account_event(conn, customer_id, "payment_method_updated", f"{old} -> {method}", agent, session_id)
            return {"customer_id": customer_id, "previous": old, "payment_method": method, "status": "updated"}

        return await self._once(session_id, call_id, "update_payment_method", act)

    async def password_reset(self, *, session_id: str, call_id: str, customer_id: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            *_, email = self._require_customer(conn, customer_id)
            self._account_event(conn, customer_id, "password_reset_sent", email, agent, session_id)
            return {"customer_id": customer_id, "email": email, "status": "reset link sent", "expires_in_minutes": 30}

        return await self._once(session_id, call_id, "send_password_reset", act)

    async def create_ticket(self, *, session_id: str, call_id: str, customer_id: str | None, summary: str, severity: str, agent: str) -> dict[str, Any]:
        def act(conn: sqlite3.Connection) -> dict[str, Any]:
            if customer_id:
                self._require_customer(conn, customer_id)
            n = conn.execute("SELECT count(*) FROM demo_tickets").fetchone()[0]
            ticket_id = f"ENG-{n + 101}"
            conn.execute(
                "INSERT INTO demo_tickets (id, customer_id, summary, severity, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (ticket_id, customer_id, summary, severity, agent, session_id, _now()),
            )
            return {"ticket_id": ticket_id, "customer_id": customer_id, "summary": summary, "severity": severity, "status": "open"}

        return await self._once(session_id, call_id, "create_ticket", act)


async def open_customers(db_path: str | os.PathLike[str]) -> CustomerStore:
    """Open (creating and seeding on first use) the demo tables in the session database."""
    path = str(db_path)
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        await db.execute("PRAGMA busy_timeout = 10000")
        await db.execute("PRAGMA foreign_keys = ON")
        await db._execute(_setup, db._conn)
    except BaseException:
        await db.close()
        raise
    return CustomerStore(db, path)
