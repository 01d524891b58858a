"""The demo business data on SQLite: `demo_*` tables in the session database's file.

Created with IF NOT EXISTS and seeded on first use, in one `BEGIN IMMEDIATE` transaction, so
two processes opening a fresh file cannot both seed it. Every write runs in one
`BEGIN IMMEDIATE` transaction that first claims its idempotency key in `demo_writes` (a
primary key: a second claim of the same key finds the first result instead). A refund moves
the charge's `refunded_amount` with one conditional `UPDATE ... RETURNING`: the database, not
Python, says no when the charge has less left than asked.

What each read and write does is `core.py`'s, written once for both adapters; this module holds
what is SQLite's: the schema, the set-up, the transaction frame, the refund's statement, the driver.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from supportdesk.business import demo
from supportdesk.business.core import (
    SQL_META_VERSIONS,
    SQL_SCHEMA_VERSION,
    SQL_SEED_VERSION,
    BusinessCore,
    BusinessDialect,
    BusinessSql,
    Steps,
    is_current,
    newer_schema,
    row_of,
)
from supportdesk.business.protocol import Row, call_key
from supportdesk.store.sqlite_tx import write_transaction

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

# A refund moves the charge only while what is left covers it; the WHERE clause is the rule.
# (amount, charge); amounts are whole cents, the round and the slack only absorb binary floating point.
SQL_REFUND_CHARGE = """
    UPDATE demo_charges SET refunded_amount = round(refunded_amount + ?1, 2)
    WHERE id = upper(?2) AND status <> 'failed' AND round(refunded_amount + ?1, 2) <= amount + 0.004
    RETURNING id, customer_id, refunded_amount
"""

# Numbered placeholders (?1 may stand twice); money as given (REAL); no row locks: every write
# runs in a BEGIN IMMEDIATE transaction, so no other writer moves money, numbers a ticket or
# changes a customer between its reads and its writes.
DIALECT = BusinessDialect(param=lambda n: f"?{n}", money=lambda value: value, row_locks=False)
SQL = BusinessSql(DIALECT, refund_charge=SQL_REFUND_CHARGE)


def _rows(cur: sqlite3.Cursor) -> list[Row]:
    if cur.description is None:
        return []
    names = [d[0] for d in cur.description]
    return [row_of(zip(names, row)) for row in cur.fetchall()]


def _drive(conn: sqlite3.Connection, steps: Steps[T]) -> T:
    """Run the statements `steps` yields on the connection, sending each its rows."""
    answer: list[Row] | None = None
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        cur = conn.execute(step.sql, step.params)
        answer = _rows(cur) if step.rows else None


def _drive_written(conn: sqlite3.Connection, steps: Steps[T]) -> T:
    """`steps` in one BEGIN IMMEDIATE transaction (one writer at a time), rolled back on any error
    (the session store's transaction frame: `store/sqlite_tx.py`)."""
    return write_transaction(conn, lambda c: _drive(c, steps))


def _insert(conn: sqlite3.Connection, table: str, rows: list[Row]) -> None:
    conn.executemany(*SQL.insert(table, rows))


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
    return is_current(conn.execute(SQL_META_VERSIONS).fetchall())


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
        version = conn.execute(SQL_SCHEMA_VERSION).fetchone()
        if version is None:
            _migrate_tool_calls(conn)
            conn.execute("INSERT OR REPLACE INTO demo_meta VALUES ('schema_version', ?)", (demo.SCHEMA_VERSION,))
        elif (newer := newer_schema(version[0])) is not None:
            raise newer
        if conn.execute(SQL_SEED_VERSION).fetchone() is None:
            seed = demo.seed_rows()
            seed["demo_meta"] = [r for r in seed["demo_meta"] if r["key"] == "seed_version"]
            for table, rows in seed.items():
                _insert(conn, table, rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class SqliteBusiness(BusinessCore):
    """The demo business data in a SQLite file. Open with `await SqliteBusiness.open(path)`.

    Its reads and writes are `BusinessCore`'s; this class runs their statements."""

    sql = SQL

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

    async def _run_steps(self, steps: Steps[T], *, write: bool) -> T:
        return await self._run(_drive_written if write else _drive, steps)

    # --- the whole data set (supportdesk db copy) -------------------------------------------------

    async def snapshot(self) -> dict[str, list[Row]]:
        def read(conn: sqlite3.Connection) -> dict[str, list[Row]]:
            conn.execute("BEGIN")
            try:
                return {table: _rows(conn.execute(SQL.snapshot(table))) for table in demo.TABLES}
            finally:
                conn.execute("COMMIT")

        return await self._run(read)

    async def restore(self, tables: dict[str, list[Row]]) -> None:
        def write(conn: sqlite3.Connection) -> None:
            for table in reversed(demo.TABLES):
                conn.execute(f"DELETE FROM {table}")
            for table in demo.TABLES:
                _insert(conn, table, tables.get(table, []))

        await self._run(write_transaction, write)
