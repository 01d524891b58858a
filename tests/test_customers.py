"""The demo customer store: seeded once and the same everywhere, writes visible, idempotent."""

from __future__ import annotations

import sqlite3

import pytest

from supportdesk.store import SessionStore
from supportdesk.store.customers import CustomerError, open_customers


@pytest.fixture
async def customers(db_path):
    store = await open_customers(db_path)
    yield store
    await store.close()


async def test_seeded_with_a_few_dozen_customers_and_trouble(customers):
    rows = await customers._query("SELECT count(*) AS n FROM demo_customers")
    assert 30 <= rows[0]["n"] <= 60
    statuses = {r["status"] for r in await customers._query("SELECT DISTINCT status FROM demo_charges")}
    assert {"succeeded", "failed", "disputed"} <= statuses
    dana = await customers.find_customer("dana@example.com")
    assert dana["id"] == "CUS-1001" and dana["plan"] == "pro"
    charges = await customers.charges("CUS-1001")
    dups = [c for c in charges if c.get("duplicate_of")]
    assert [(c["charged_on"], c["amount"]) for c in dups] == [("2026-03-03", 29.99)]


async def test_seed_is_deterministic(tmp_path):
    a = await open_customers(tmp_path / "a.db")
    b = await open_customers(tmp_path / "b.db")
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
    first = await open_customers(db_path)
    await first.refund(session_id="s", call_id="c1", charge_id="CH-9004", amount=10.0, reason="test", agent="billing")
    await first.close()
    again = await open_customers(db_path)
    try:
        assert len(await again._query("SELECT * FROM demo_customers")) == 41
        assert [r["amount"] for r in await again.refunds("CUS-1001")] == [10.0]
    finally:
        await again.close()
        await sessions.close()
    names = {r[0] for r in sqlite3.connect(db_path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {n for n in names if n.startswith("demo_")} >= {"demo_customers", "demo_charges", "demo_tool_calls"}


async def test_find_charges_by_amount_and_dates_without_year(customers):
    found = await customers.find_charges(amount=29.99, dates=["--03-01", "--03-03"])
    assert {c["customer_id"] for c in found} == {"CUS-1001"}
    assert [c["id"] for c in found if c.get("duplicate_of")] == ["CH-9004"]
    found = await customers.find_charges(amount=129.99, dates=["2026-03-03"])
    assert [(c["customer_id"], c["charged_on"]) for c in found] == [("CUS-1002", "2026-03-03")]
    assert await customers.find_charges() == []


async def test_refund_is_written_once_per_call_id(customers):
    first = await customers.refund(session_id="s1", call_id="call_9_0", charge_id="CH-9004", amount=29.99, reason="dup", agent="billing")
    replay = await customers.refund(session_id="s1", call_id="call_9_0", charge_id="CH-9004", amount=29.99, reason="dup", agent="billing")
    assert replay["refund_id"] == first["refund_id"] and replay["replayed"] is True
    assert len(await customers.refunds("CUS-1001")) == 1
    charge = await customers.get_charge("CH-9004")
    assert charge["refunded_amount"] == pytest.approx(29.99) and charge["refundable"] == 0
    # Another call cannot refund what is already refunded.
    with pytest.raises(CustomerError, match="only \\$0.00 left"):
        await customers.refund(session_id="s1", call_id="call_10_0", charge_id="CH-9004", amount=1, reason="x", agent="billing")
    # The same call id in another session is another call.
    with pytest.raises(CustomerError):
        await customers.refund(session_id="s2", call_id="call_9_0", charge_id="CH-9004", amount=29.99, reason="dup", agent="billing")


async def test_failed_refund_leaves_nothing_behind(customers):
    with pytest.raises(CustomerError):
        await customers.refund(session_id="s", call_id="c", charge_id="CH-0000", amount=5, reason="x", agent="billing")
    assert await customers.refunds() == []
    assert await customers._query("SELECT * FROM demo_tool_calls") == []
    # The failed call id can be used again once the problem is fixed.
    ok = await customers.refund(session_id="s", call_id="c", charge_id="CH-9004", amount=5, reason="x", agent="billing")
    assert ok["amount"] == 5


async def test_account_changes_are_visible(customers):
    await customers.change_plan(session_id="s", call_id="a", customer_id="CUS-1001", plan="team", billing_period="annual", agent="billing")
    await customers.update_payment_method(session_id="s", call_id="b", customer_id="CUS-1001", method="visa ending 1111", agent="billing")
    await customers.password_reset(session_id="s", call_id="c", customer_id="CUS-1001", agent="technical")
    await customers.credit(session_id="s", call_id="d", customer_id="CUS-1001", amount=20, reason="outage", agent="senior")
    ticket = await customers.create_ticket(session_id="s", call_id="e", customer_id="CUS-1001", summary="sync stuck", severity="high", agent="senior")
    await customers.cancel(session_id="s", call_id="f", customer_id="CUS-1001", reason="too expensive", agent="billing")
    dana = await customers.get_customer("CUS-1001")
    assert (dana["plan"], dana["billing_period"], dana["payment_method"], dana["status"]) == (
        "team", "annual", "visa ending 1111", "cancelled",
    )
    events = [e["event"] for e in await customers.account_events("CUS-1001")]
    assert events == ["plan_changed", "payment_method_updated", "password_reset_sent", "cancelled"]
    assert [c["amount"] for c in await customers.credits("CUS-1001")] == [20]
    assert [t["id"] for t in await customers.tickets("CUS-1001")] == [ticket["ticket_id"]]
    with pytest.raises(CustomerError, match="no plan"):
        await customers.change_plan(session_id="s", call_id="g", customer_id="CUS-1001", plan="gold", billing_period=None, agent="billing")


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
