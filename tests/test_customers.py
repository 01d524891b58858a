"""The demo business data on SQLite: in the session database's file, seeded once, migrated.

What both adapters must do is in tests/test_business_contract.py; this file looks inside the
SQLite file."""

from __future__ import annotations

import json
import sqlite3

import pytest

from supportdesk.business import call_key
from supportdesk.business.protocol import BusinessError
from supportdesk.business.sqlite import SqliteBusiness
from supportdesk.store import SessionStore


@pytest.fixture
async def customers(db_path):
    store = await SqliteBusiness.open(db_path)
    yield store
    await store.close()


async def test_seeded_with_a_few_dozen_customers_and_trouble(customers):
    rows = await customers._query("SELECT count(*) AS n FROM demo_customers")
    assert 30 <= rows[0]["n"] <= 60
    statuses = {r["status"] for r in await customers._query("SELECT DISTINCT status FROM demo_charges")}
    assert {"succeeded", "failed", "disputed"} <= statuses


async def test_seed_is_deterministic(tmp_path):
    a = await SqliteBusiness.open(tmp_path / "a.db")
    b = await SqliteBusiness.open(tmp_path / "b.db")
    try:
        sql = "SELECT * FROM demo_charges ORDER BY id"
        assert await a._query(sql) == await b._query(sql)
        assert await a._query("SELECT * FROM demo_customers ORDER BY id") == await b._query(
            "SELECT * FROM demo_customers ORDER BY id"
        )
    finally:
        await a.close()
        await b.close()


async def test_shares_the_session_database_and_reopens_without_reseeding(db_path):
    sessions = await SessionStore.open(db_path)
    first = await SqliteBusiness.open(db_path)
    await first.refund(key="s/c1", session_id="s", charge_id="CH-9004", amount=10.0, reason="test", agent="billing")
    await first.close()
    again = await SqliteBusiness.open(db_path)
    try:
        assert len(await again._query("SELECT * FROM demo_customers")) == 41
        assert [r["amount"] for r in await again.refunds("CUS-1001")] == [10.0]
    finally:
        await again.close()
        await sessions.close()
    names = {r[0] for r in sqlite3.connect(db_path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {n for n in names if n.startswith("demo_")} >= {"demo_customers", "demo_charges", "demo_writes"}


async def test_failed_write_leaves_no_claim_behind(customers):
    with pytest.raises(BusinessError, match="no charge CH-0000"):
        await customers.refund(key="s/c", session_id="s", charge_id="CH-0000", amount=5, reason="x", agent="billing")
    assert await customers._query("SELECT * FROM demo_writes") == []


async def test_the_database_refuses_a_refund_past_the_charge_whatever_python_does(customers):
    """The CHECK constraint stands behind the conditional UPDATE."""
    with pytest.raises(sqlite3.IntegrityError):
        await customers._run(lambda conn: conn.execute("UPDATE demo_charges SET refunded_amount = amount + 1 WHERE id = 'CH-9004'"))


async def test_plans_read_the_plan_table_cheapest_first(customers, db_path):
    table = sqlite3.connect(db_path).execute(
        "SELECT code, name, monthly_price, annual_price FROM demo_plans ORDER BY monthly_price"
    ).fetchall()
    assert len(table) >= 2
    plans = await customers.plans()
    assert [(p["code"], p["name"], p["monthly_price"], p["annual_price"]) for p in plans] == table
    # A price changed in the table is what the next read returns: nothing is cached.
    await customers._run(lambda conn: conn.execute("UPDATE demo_plans SET monthly_price = 1.25 WHERE code = ?", (table[-1][0],)))
    again = await customers.plans()
    assert again[0]["code"] == table[-1][0] and again[0]["monthly_price"] == 1.25


async def test_a_database_from_before_idempotency_keys_keeps_its_writes(db_path):
    """Schema 1 keyed writes by (session, call id): the replay of such a call still replays."""
    conn = sqlite3.connect(db_path)
    conn.executescript(
        """
        CREATE TABLE demo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE demo_tool_calls (session_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
            result TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (session_id, call_id));
        """
    )
    first = {"refund_id": "RF-1", "charge_id": "CH-9004", "amount": 29.99, "status": "refunded"}
    conn.execute("INSERT INTO demo_tool_calls VALUES ('s1', 'call_9_0', 'refund_charge', ?, '2026-03-04')", (json.dumps(first),))
    conn.commit()
    conn.close()
    store = await SqliteBusiness.open(db_path)
    try:
        again = await store.refund(
            key=call_key("s1", "call_9_0"), session_id="s1", charge_id="CH-9004", amount=29.99, reason="dup", agent="billing"
        )
        assert again == first | {"replayed": True}
        assert await store.refunds() == []
        meta = {r["key"]: r["value"] for r in await store._query("SELECT * FROM demo_meta")}
        assert meta["schema_version"] == "2" and meta["seed_version"] == "2"
    finally:
        await store.close()
    names = {r[0] for r in sqlite3.connect(db_path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "demo_tool_calls" not in names
