"""The demo business data on SQLite: `demo_*` tables in the session database's file.

Created with IF NOT EXISTS and seeded on first use, in one `BEGIN IMMEDIATE` transaction, so
two processes opening a fresh file cannot both seed it. Every write runs in one
`BEGIN IMMEDIATE` transaction that first claims its idempotency key in `demo_writes` (a
primary key: a second claim of the same key finds the first result instead). A refund moves
the charge's `refunded_amount` with one conditional `UPDATE ... RETURNING`: the database, not
Python, says no when the charge has less left than asked.
"""

from __future__ import annotations

from datetime import date

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from supportdesk.business import demo
from supportdesk.business.protocol import BusinessError, MoneyLimits, Row, call_key

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
    -- amounts are whole cents: the slack only absorbs binary floating point
    refunded_amount REAL NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount + 0.004)
);
CREATE INDEX IF NOT EXISTS demo_charges_customer ON demo_charges(customer_id);
CREATE INDEX IF NOT EXISTS demo_charges_amount ON demo_charges(amount);
CREATE TABLE IF NOT EXISTS demo_refunds (
    id INTEGER PRIMARY KEY,
    charge_id TEXT NOT NULL REFERENCES demo_charges(id),
    customer_id TEXT NOT NULL,
    amount REAL NOT NULL CHECK (amount > 0),
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
CREATE TABLE IF NOT EXISTS demo_writes (
    key TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    session_id TEXT NOT NULL,
    result TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

# The claim of an idempotency key: a row, or nothing when the key was claimed before.
SQL_CLAIM = (
    "INSERT INTO demo_writes (key, tool, session_id, result, created_at) VALUES (?, ?, ?, '', ?) "
    "ON CONFLICT (key) DO NOTHING"
)
# A refund moves the charge only while what is left covers it; the WHERE clause is the rule.
SQL_REFUND_CHARGE = """
    UPDATE demo_charges SET refunded_amount = round(refunded_amount + :amount, 2)
    WHERE id = upper(:charge) AND status <> 'failed' AND round(refunded_amount + :amount, 2) <= amount + 0.004
    RETURNING id, customer_id, refunded_amount
"""

# Refunds and credits together, in one session and to one customer since a time.
SQL_MOVED_IN_SESSION = """
    SELECT coalesce((SELECT sum(amount) FROM demo_refunds WHERE session_id = :session), 0)
         + coalesce((SELECT sum(amount) FROM demo_credits WHERE session_id = :session), 0)
"""
SQL_MOVED_TO_CUSTOMER = """
    SELECT coalesce((SELECT sum(amount) FROM demo_refunds WHERE customer_id = :customer AND created_at >= :since), 0)
         + coalesce((SELECT sum(amount) FROM demo_credits WHERE customer_id = :customer AND created_at >= :since), 0)
"""


def _moved(conn: sqlite3.Connection, session_id: str, customer_id: str, period_days: int) -> tuple[float, float]:
    in_session = conn.execute(SQL_MOVED_IN_SESSION, {"session": session_id}).fetchone()[0]
    to_customer = conn.execute(
        SQL_MOVED_TO_CUSTOMER, {"customer": customer_id, "since": demo.since(period_days)}
    ).fetchone()[0]
    return round(float(in_session), 2), round(float(to_customer), 2)


def _check_limits(
    conn: sqlite3.Connection, limits: MoneyLimits | None, session_id: str, customer_id: str, amount: float
) -> None:
    """Inside the write's BEGIN IMMEDIATE transaction: no other writer moves money between
    this read of the totals and the write that follows it."""
    if limits is not None:
        demo.check_limits(limits, amount, *_moved(conn, session_id, customer_id, limits.period_days), customer_id)


def _rows(cur: sqlite3.Cursor) -> list[Row]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _insert(conn: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    cols = demo.TABLES[table]
    conn.executemany(
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        [tuple(row[c] for c in cols) for row in rows],
    )


def _migrate_tool_calls(conn: sqlite3.Connection) -> None:
    """Schema 1 keyed writes by (session, call id) in demo_tool_calls: carry them over."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'demo_tool_calls'").fetchone() is None:
        return
    old = conn.execute("SELECT session_id, call_id, tool, result, created_at FROM demo_tool_calls").fetchall()
    conn.executemany(
        "INSERT OR IGNORE INTO demo_writes (key, tool, session_id, result, created_at) VALUES (?, ?, ?, ?, ?)",
        [(call_key(sid, cid), tool, sid, result, at) for sid, cid, tool, result, at in old],
    )
    conn.execute("DROP TABLE demo_tool_calls")


def _ready(conn: sqlite3.Connection) -> bool:
    """Tables there, at this schema, seeded: an open needs no write lock (every desk opens this)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'demo_writes'").fetchone() is None:
        return False
    found = dict(conn.execute("SELECT key, value FROM demo_meta WHERE key IN ('schema_version', 'seed_version')").fetchall())
    return found.get("schema_version") == demo.SCHEMA_VERSION and "seed_version" in found


def _setup(conn: sqlite3.Connection) -> None:
    if _ready(conn):
        return
    # Schema and seed in one transaction: one fsync instead of one per statement, and two
    # processes opening a fresh database cannot both seed it.
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        version = conn.execute("SELECT value FROM demo_meta WHERE key = 'schema_version'").fetchone()
        if version is None:
            _migrate_tool_calls(conn)
            conn.execute("INSERT OR REPLACE INTO demo_meta VALUES ('schema_version', ?)", (demo.SCHEMA_VERSION,))
        elif int(version[0]) > int(demo.SCHEMA_VERSION):
            raise BusinessError(f"the demo data was written by a newer supportdesk (schema {version[0]})")
        if conn.execute("SELECT value FROM demo_meta WHERE key = 'seed_version'").fetchone() is None:
            seed = demo.seed_rows()
            seed["demo_meta"] = [r for r in seed["demo_meta"] if r["key"] == "seed_version"]
            for table, rows in seed.items():
                _insert(conn, table, rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _write_once(conn: sqlite3.Connection, key: str, tool: str, session_id: str,
                act: Callable[[sqlite3.Connection], Row]) -> Row:
    """Claim `key`, run `act`, store its result: one transaction. A claimed key replays."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute(SQL_CLAIM, (key, tool, session_id, demo.now())).rowcount == 0:
            result, stored_tool = conn.execute("SELECT result, tool FROM demo_writes WHERE key = ?", (key,)).fetchone()
            conn.execute("COMMIT")
            return demo.replayed(json.loads(result), stored_tool, tool, key)
        result = act(conn)
        conn.execute("UPDATE demo_writes SET result = ? WHERE key = ?", (json.dumps(result), key))
        conn.execute("COMMIT")
        return result
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _require_customer(conn: sqlite3.Connection, customer_id: str) -> Row:
    found = _rows(conn.execute(
        "SELECT id, plan, billing_period, status, payment_method, email FROM demo_customers WHERE id = ?", (customer_id,)
    ))
    if not found:
        raise BusinessError(f"no customer {customer_id}")
    return found[0]


def _account_event(conn: sqlite3.Connection, customer_id: str, event: str, detail: str, agent: str, session_id: str) -> None:
    conn.execute(
        "INSERT INTO demo_account_events (customer_id, event, detail, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (customer_id, event, detail, agent, session_id, demo.now()),
    )


class SqliteBusiness:
    """The demo business data in a SQLite file. Open with `await SqliteBusiness.open(path)`."""

    def __init__(self, db: aiosqlite.Connection, path: str):
        self._db = db
        self.path = path

    @classmethod
    async def open(cls, db_path: str | os.PathLike[str]) -> SqliteBusiness:
        """Open (creating and seeding on first use) the demo tables in the database file."""
        path = str(db_path)
        db = await aiosqlite.connect(path, isolation_level=None)
        try:
            await db.execute("PRAGMA busy_timeout = 10000")
            await db.execute("PRAGMA foreign_keys = ON")
            await db._execute(_setup, db._conn)
        except BaseException:
            await db.close()
            raise
        return cls(db, path)

    @classmethod
    async def open_existing(cls, db_path: str | os.PathLike[str]) -> SqliteBusiness | None:
        """The demo tables already in the file, or None; never creates or seeds anything."""
        path = Path(db_path)
        if not path.is_file():
            return None
        probe = await aiosqlite.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            found = await (await probe.execute("SELECT 1 FROM sqlite_master WHERE name = 'demo_meta'")).fetchone()
        finally:
            await probe.close()
        return await cls.open(path) if found else None

    async def close(self) -> None:
        await self._db.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        # One hop to the connection's thread per transaction (see SessionStore._run).
        return await self._db._execute(fn, self._db._conn, *args)

    async def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        return await self._run(lambda conn: _rows(conn.execute(sql, params)))

    async def _write(self, key: str, tool: str, session_id: str, act: Callable[[sqlite3.Connection], Row]) -> Row:
        return await self._run(_write_once, key, tool, session_id, act)

    # --- reads -------------------------------------------------------------------------------

    async def find_customer(self, query: str) -> Row | None:
        q = query.strip()
        rows = await self._query(
            "SELECT * FROM demo_customers WHERE upper(id) = upper(?) OR lower(email) = lower(?)"
            " OR lower(name) = lower(?) ORDER BY id LIMIT 1",
            (q, q, q),
        )
        return rows[0] if rows else None

    def today(self) -> date:
        """The demo world's today (the refund window counts from it)."""
        return demo.TODAY

    async def get_customer(self, customer_id: str) -> Row | None:
        rows = await self._query("SELECT * FROM demo_customers WHERE id = ?", (customer_id,))
        return rows[0] if rows else None

    async def charges(self, customer_id: str) -> list[Row]:
        rows = await self._query(
            "SELECT * FROM demo_charges WHERE customer_id = ? ORDER BY charged_on, id", (customer_id,)
        )
        return demo.with_duplicates(rows)

    async def get_charge(self, charge_id: str) -> Row | None:
        # One hop: the charge's owner and the owner's charges (its duplicate marks need them all).
        rows = await self._query(
            "SELECT * FROM demo_charges WHERE customer_id = (SELECT customer_id FROM demo_charges WHERE id = upper(?))"
            " ORDER BY charged_on, id",
            (charge_id,),
        )
        return next((c for c in demo.with_duplicates(rows) if c["id"] == charge_id.upper()), None)

    async def find_charges(
        self, *, customer_id: str | None = None, amount: float | None = None, dates: list[str] | None = None
    ) -> list[Row]:
        where: list[str] = []
        params: list[Any] = []
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
        # One hop: every charge of the matching charges' owners, owner by owner (each owner's
        # duplicate marks need all of that owner's charges), then the match kept.
        rows = await self._query(
            "SELECT * FROM demo_charges WHERE customer_id IN"
            f" (SELECT customer_id FROM demo_charges WHERE {' AND '.join(where)}) ORDER BY customer_id, charged_on, id",
            tuple(params),
        )
        owners: dict[str, list[Row]] = {}
        for r in rows:
            owners.setdefault(r["customer_id"], []).append(r)
        out: list[Row] = []
        for charges in owners.values():
            for ch in demo.with_duplicates(charges):
                if amount is not None and abs(ch["amount"] - amount) >= 0.005:
                    continue
                if dates and not demo.matches_dates(ch["charged_on"], dates):
                    continue
                out.append(ch)
        return out

    async def invoices(self, customer_id: str) -> list[Row]:
        return await self._query(
            "SELECT * FROM demo_invoices WHERE customer_id = ? ORDER BY issued_on, id", (customer_id,)
        )

    async def get_invoice(self, invoice_id: str) -> Row | None:
        rows = await self._query("SELECT * FROM demo_invoices WHERE upper(id) = upper(?)", (invoice_id,))
        return rows[0] if rows else None

    async def plans(self) -> list[Row]:
        return await self._query(
            "SELECT code, name, monthly_price, annual_price FROM demo_plans ORDER BY monthly_price, code"
        )

    async def refunds(self, customer_id: str | None = None) -> list[Row]:
        if customer_id:
            return await self._query("SELECT * FROM demo_refunds WHERE customer_id = ? ORDER BY id", (customer_id,))
        return await self._query("SELECT * FROM demo_refunds ORDER BY id")

    async def credits(self, customer_id: str) -> list[Row]:
        return await self._query("SELECT * FROM demo_credits WHERE customer_id = ? ORDER BY id", (customer_id,))

    async def account_events(self, customer_id: str) -> list[Row]:
        return await self._query("SELECT * FROM demo_account_events WHERE customer_id = ? ORDER BY id", (customer_id,))

    async def tickets(self, customer_id: str | None = None) -> list[Row]:
        if customer_id:
            return await self._query("SELECT * FROM demo_tickets WHERE customer_id = ? ORDER BY id", (customer_id,))
        return await self._query("SELECT * FROM demo_tickets ORDER BY id")

    # --- writes: each once per key -------------------------------------------------------------

    async def money_moved(self, *, session_id: str, customer_id: str, period_days: int) -> tuple[float, float]:
        return await self._run(_moved, session_id, customer_id, period_days)

    async def refund(
        self, *, key: str, session_id: str, charge_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        amount = round(float(amount), 2)
        demo.check_refund_amount(amount)

        def act(conn: sqlite3.Connection) -> Row:
            owner = conn.execute("SELECT customer_id FROM demo_charges WHERE id = upper(?)", (charge_id,)).fetchone()
            if owner is not None:
                _check_limits(conn, limits, session_id, owner[0], amount)
            moved = conn.execute(SQL_REFUND_CHARGE, {"amount": amount, "charge": charge_id}).fetchone()
            if moved is None:
                found = _rows(conn.execute("SELECT * FROM demo_charges WHERE id = upper(?)", (charge_id,)))
                raise demo.refund_refused(charge_id, found[0] if found else None, amount)
            charge, customer_id, refunded_total = moved
            cur = conn.execute(
                "INSERT INTO demo_refunds (charge_id, customer_id, amount, reason, agent, session_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (charge, customer_id, amount, reason, agent, session_id, demo.now()),
            )
            return {
                "refund_id": f"RF-{cur.lastrowid}",
                "charge_id": charge,
                "customer_id": customer_id,
                "amount": amount,
                "refunded_total": round(refunded_total, 2),
                "status": "refunded",
            }

        return await self._write(key, "refund_charge", session_id, act)

    async def credit(
        self, *, key: str, session_id: str, customer_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            _require_customer(conn, customer_id)
            if amount <= 0:
                raise BusinessError("a credit must be more than zero")
            _check_limits(conn, limits, session_id, customer_id, round(float(amount), 2))
            cur = conn.execute(
                "INSERT INTO demo_credits (customer_id, amount, reason, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (customer_id, amount, reason, agent, session_id, demo.now()),
            )
            return {"credit_id": f"CR-{cur.lastrowid}", "customer_id": customer_id, "amount": round(amount, 2), "status": "credited"}

        return await self._write(key, "issue_credit", session_id, act)

    async def change_plan(
        self, *, key: str, session_id: str, customer_id: str, plan: str, billing_period: str | None, agent: str,
        when: str = "now",
    ) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            before = _require_customer(conn, customer_id)
            if conn.execute("SELECT 1 FROM demo_plans WHERE code = ?", (plan,)).fetchone() is None:
                codes = ", ".join(r[0] for r in conn.execute("SELECT code FROM demo_plans ORDER BY monthly_price"))
                raise BusinessError(f"no plan {plan!r}; plans: {codes}")
            period = billing_period or before["billing_period"]
            result = {"customer_id": customer_id, "from_plan": before["plan"], "from_billing_period": before["billing_period"],
                      "plan": plan, "billing_period": period, "when": when}
            if (plan, period) == (before["plan"], before["billing_period"]):
                return result | {"status": "unchanged"}
            if when == "renewal":
                detail = f"{before['plan']}/{before['billing_period']} -> {plan}/{period} at renewal"
                _account_event(conn, customer_id, "plan_change_scheduled", detail, agent, session_id)
                return result | {"status": "scheduled"}
            conn.execute(
                "UPDATE demo_customers SET plan = ?, billing_period = ?, status = 'active' WHERE id = ?",
                (plan, period, customer_id),
            )
            detail = f"{before['plan']}/{before['billing_period']} -> {plan}/{period}"
            _account_event(conn, customer_id, "plan_changed", detail, agent, session_id)
            return result | {"status": "changed"}

        return await self._write(key, "change_plan", session_id, act)

    async def cancel(self, *, key: str, session_id: str, customer_id: str, reason: str, agent: str) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            before = _require_customer(conn, customer_id)
            conn.execute("UPDATE demo_customers SET status = 'cancelled' WHERE id = ?", (customer_id,))
            _account_event(conn, customer_id, "cancelled", reason, agent, session_id)
            return {"customer_id": customer_id, "plan": before["plan"], "previous_status": before["status"], "status": "cancelled"}

        return await self._write(key, "cancel_subscription", session_id, act)

    async def update_payment_method(self, *, key: str, session_id: str, customer_id: str, method: str, agent: str) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            old = _require_customer(conn, customer_id)["payment_method"]
            conn.execute("UPDATE demo_customers SET payment_method = ? WHERE id = ?", (method, customer_id))
            _account_event(conn, customer_id, "payment_method_updated", f"{old} -> {method}", agent, session_id)
            return {"customer_id": customer_id, "previous": old, "payment_method": method, "status": "updated"}

        return await self._write(key, "update_payment_method", session_id, act)

    async def password_reset(self, *, key: str, session_id: str, customer_id: str, agent: str) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            email = _require_customer(conn, customer_id)["email"]
            _account_event(conn, customer_id, "password_reset_sent", email, agent, session_id)
            return {"customer_id": customer_id, "email": email, "status": "reset link sent", "expires_in_minutes": 30}

        return await self._write(key, "send_password_reset", session_id, act)

    async def create_ticket(
        self, *, key: str, session_id: str, customer_id: str | None, summary: str, severity: str, agent: str
    ) -> Row:
        def act(conn: sqlite3.Connection) -> Row:
            if customer_id:
                _require_customer(conn, customer_id)
            # Numbered under BEGIN IMMEDIATE: no other writer can take the same number.
            n = conn.execute("SELECT count(*) FROM demo_tickets").fetchone()[0]
            ticket_id = f"ENG-{n + 101}"
            conn.execute(
                "INSERT INTO demo_tickets (id, customer_id, summary, severity, agent, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (ticket_id, customer_id, summary, severity, agent, session_id, demo.now()),
            )
            return {"ticket_id": ticket_id, "customer_id": customer_id, "summary": summary, "severity": severity, "status": "open"}

        return await self._write(key, "create_ticket", session_id, act)

    # --- the whole data set (supportdesk db copy) -------------------------------------------------

    async def snapshot(self) -> dict[str, list[Row]]:
        def read(conn: sqlite3.Connection) -> dict[str, list[Row]]:
            conn.execute("BEGIN")
            try:
                return {
                    table: _rows(conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {demo.ORDER_BY[table]}"))
                    for table, cols in demo.TABLES.items()
                }
            finally:
                conn.execute("COMMIT")

        return await self._run(read)

    async def restore(self, tables: dict[str, list[Row]]) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in reversed(demo.TABLES):
                    conn.execute(f"DELETE FROM {table}")
                for table in demo.TABLES:
                    _insert(conn, table, tables.get(table, []))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        await self._run(write)
