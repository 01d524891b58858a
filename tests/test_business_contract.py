"""The business data contract, one suite over both demo adapters (SQLite and PostgreSQL).

The money rules are proven with real OS processes racing refunds on one charge: a charge is
never refunded past what was paid and a key refunds once, whichever machine asks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from supportdesk.business import BusinessData, BusinessError, BusinessSnapshot, open_business
from supportdesk.business.demo import ORDER_BY
from supportdesk.business.demo import seed_rows as unordered_seed
from tests.conftest import REPO

def seed_rows() -> dict:
    """The seed as a snapshot lists it: each table in its key's order."""
    return {t: sorted(rows, key=lambda r: r[ORDER_BY[t]]) for t, rows in unordered_seed().items()}


ADAPTERS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=ADAPTERS)
def where(request, tmp_path) -> str:
    """The database to open: a fresh SQLite file or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return str(tmp_path / "desk.db")


@pytest.fixture
async def business(where):
    opened = await open_business(where)
    yield opened
    await opened.close()


async def refund(business, key, charge="CH-9004", amount=29.99, session="s1"):
    return await business.refund(key=key, session_id=session, charge_id=charge, amount=amount, reason="dup", agent="billing")


async def test_both_adapters_keep_the_contract(business):
    assert isinstance(business, BusinessData) and isinstance(business, BusinessSnapshot)


async def test_a_fresh_database_holds_the_seed_exactly(business):
    assert await business.snapshot() == seed_rows()
    dana = await business.find_customer("DANA@example.com")
    assert dana["id"] == "CUS-1001" and dana["plan"] == "pro"
    assert (await business.find_customer("cus-1002"))["name"] == "Marco Bellini"
    assert (await business.find_customer("marco bellini"))["id"] == "CUS-1002"
    assert await business.find_customer("nobody@example.com") is None


async def test_reopening_does_not_seed_again(where):
    first = await open_business(where)
    await refund(first, "k1", amount=10)
    await first.close()
    again = await open_business(where)
    try:
        assert [r["amount"] for r in await again.refunds("CUS-1001")] == [10.0]
        assert len((await again.snapshot())["demo_customers"]) == 41
    finally:
        await again.close()


async def test_find_charges_marks_duplicates_and_reads_dates_without_year(business):
    found = await business.find_charges(amount=29.99, dates=["--03-01", "--03-03"])
    assert [(c["id"], c["customer_id"], c["charged_on"]) for c in found] == [
        ("CH-9003", "CUS-1001", "2026-03-01"), ("CH-9004", "CUS-1001", "2026-03-03"),
    ]
    assert [c.get("duplicate_of") for c in found] == [None, "CH-9003"]
    assert [c["refundable"] for c in found] == [29.99, 29.99]
    found = await business.find_charges(amount=129.99, dates=["2026-03-03"])
    assert [(c["customer_id"], c["charged_on"]) for c in found] == [("CUS-1002", "2026-03-03")]
    assert len(await business.find_charges(customer_id="CUS-1001")) == 4
    assert await business.find_charges() == []


async def test_find_charges_reads_each_owner_whole_in_one_read(business):
    """Charges matched across several customers come owner by owner, each owner's duplicate
    marks worked out over all of that owner's charges: what `charges(owner)` says of them."""
    found = await business.find_charges(amount=29.99)
    owners = sorted({c["customer_id"] for c in found})
    assert len(owners) > 1
    expected = [c for o in owners for c in await business.charges(o) if abs(c["amount"] - 29.99) < 0.005]
    assert found == expected
    assert await business.get_charge("CH-0000") is None
    assert await business.get_charge("ch-9004") == next(c for c in await business.charges("CUS-1001") if c["id"] == "CH-9004")


async def test_invoices_and_plans(business):
    invoices = await business.invoices("CUS-1001")
    assert [i["id"] for i in invoices] == ["INV-5001", "INV-5002", "INV-5003"]
    assert invoices[0]["amount"] == 29.99 and invoices[0]["status"] == "paid"
    plans = await business.plans()
    assert [(p["code"], p["monthly_price"], p["annual_price"]) for p in plans] == [
        ("starter", 9.99, 99.99), ("pro", 29.99, 299.99), ("team", 129.99, 1299.99),
    ]


async def test_refund_is_written_once_per_key(business):
    first = await refund(business, "s1/call_9_0")
    assert first["refund_id"].startswith("RF-") and first["refunded_total"] == 29.99
    replay = await refund(business, "s1/call_9_0")
    assert replay == first | {"replayed": True}
    assert len(await business.refunds("CUS-1001")) == 1
    charge = await business.get_charge("CH-9004")
    assert charge["refunded_amount"] == pytest.approx(29.99) and charge["refundable"] == 0
    # Another key cannot refund what is already refunded.
    with pytest.raises(BusinessError, match=r"only \$0.00 left"):
        await refund(business, "s1/call_10_0", amount=1)
    # A key names one request: another session's call of the same id is another key.
    with pytest.raises(BusinessError, match="left to refund"):
        await refund(business, "s2/call_9_0", session="s2")


async def test_partial_refunds_add_up_to_the_charge_and_no_further(business):
    assert (await refund(business, "a", amount=10))["refunded_total"] == 10.0
    assert (await refund(business, "b", amount=19.99))["refunded_total"] == 29.99
    with pytest.raises(BusinessError, match=r"only \$0.00 left"):
        await refund(business, "c", amount=0.01)
    assert [r["amount"] for r in await business.refunds()] == [10.0, 19.99]


async def test_refused_refunds_leave_nothing_and_the_key_stays_usable(business):
    with pytest.raises(BusinessError, match="no charge CH-0000"):
        await refund(business, "k", charge="CH-0000", amount=5)
    with pytest.raises(BusinessError, match="failed, so there is nothing to refund"):
        await refund(business, "k", charge=await _a_failed_charge(business), amount=5)
    with pytest.raises(BusinessError, match=r"only \$29.99 left"):
        await refund(business, "k", amount=40)
    with pytest.raises(BusinessError, match="more than zero"):
        await refund(business, "k", amount=0)
    assert await business.refunds() == []
    ok = await refund(business, "k", amount=5)
    assert ok["amount"] == 5 and "replayed" not in ok


async def _a_failed_charge(business) -> str:
    snapshot = await business.snapshot()
    return next(c["id"] for c in snapshot["demo_charges"] if c["status"] == "failed")


async def test_a_key_reused_by_another_tool_is_refused(business):
    await business.credit(key="k", session_id="s", customer_id="CUS-1001", amount=10, reason="outage", agent="senior")
    with pytest.raises(BusinessError, match="already used for issue_credit"):
        await business.create_ticket(key="k", session_id="s", customer_id=None, summary="x", severity="low", agent="senior")
    assert await business.credits("CUS-1001") != []
    assert await business.tickets() == []


async def test_account_changes_are_visible(business):
    await business.change_plan(key="a", session_id="s", customer_id="CUS-1001", plan="team", billing_period="annual", agent="billing")
    await business.update_payment_method(key="b", session_id="s", customer_id="CUS-1001", method="visa ending 1111", agent="billing")
    reset = await business.password_reset(key="c", session_id="s", customer_id="CUS-1001", agent="technical")
    assert reset["email"] == "dana@example.com"
    credit = await business.credit(key="d", session_id="s", customer_id="CUS-1001", amount=20, reason="outage", agent="senior")
    assert credit["credit_id"] == "CR-1" and credit["amount"] == 20
    ticket = await business.create_ticket(key="e", session_id="s", customer_id="CUS-1001", summary="sync stuck", severity="high", agent="senior")
    second = await business.create_ticket(key="e2", session_id="s", customer_id=None, summary="export empty", severity="low", agent="senior")
    assert (ticket["ticket_id"], second["ticket_id"]) == ("ENG-101", "ENG-102")
    await business.cancel(key="f", session_id="s", customer_id="CUS-1001", reason="too expensive", agent="billing")
    dana = await business.get_customer("CUS-1001")
    assert (dana["plan"], dana["billing_period"], dana["payment_method"], dana["status"]) == (
        "team", "annual", "visa ending 1111", "cancelled",
    )
    events = [e["event"] for e in await business.account_events("CUS-1001")]
    assert events == ["plan_changed", "payment_method_updated", "password_reset_sent", "cancelled"]
    assert [c["amount"] for c in await business.credits("CUS-1001")] == [20]
    assert [t["id"] for t in await business.tickets("CUS-1001")] == ["ENG-101"]
    with pytest.raises(BusinessError, match="no plan 'gold'"):
        await business.change_plan(key="g", session_id="s", customer_id="CUS-1001", plan="gold", billing_period=None, agent="billing")
    with pytest.raises(BusinessError, match="no customer CUS-9999"):
        await business.cancel(key="h", session_id="s", customer_id="CUS-9999", reason="x", agent="billing")


async def test_a_plan_change_at_renewal_is_recorded_and_a_no_op_changes_nothing(business):
    same = await business.change_plan(key="p1", session_id="s", customer_id="CUS-1002", plan="team", billing_period=None, agent="billing")
    assert same["status"] == "unchanged"
    later = await business.change_plan(
        key="p2", session_id="s", customer_id="CUS-1002", plan="pro", billing_period=None, agent="billing", when="renewal"
    )
    assert (later["status"], later["from_plan"], later["plan"], later["when"]) == ("scheduled", "team", "pro", "renewal")
    marco = await business.get_customer("CUS-1002")
    assert marco["plan"] == "team"  # nothing changes before the renewal
    assert [e["event"] for e in await business.account_events("CUS-1002")] == ["plan_change_scheduled"]


async def test_snapshot_restores_into_another_database_and_ids_go_on(business, tmp_path):
    await refund(business, "r1", amount=5)
    await business.credit(key="c1", session_id="s", customer_id="CUS-1002", amount=7.5, reason="x", agent="senior")
    await business.create_ticket(key="t1", session_id="s", customer_id=None, summary="bug", severity="low", agent="senior")
    taken = await business.snapshot()
    other = await open_business(tmp_path / "other.db")
    try:
        await other.restore(taken)
        assert await other.snapshot() == taken
        # Replays and numbering continue where the source stopped.
        assert (await refund(other, "r1", amount=5))["replayed"] is True
        assert (await refund(other, "r2", amount=5))["refund_id"] == "RF-2"
    finally:
        await other.close()
    # And back: the restored rows replace whatever the database held.
    await business.restore(seed_rows())
    assert await business.snapshot() == seed_rows()
    assert (await refund(business, "r3", amount=1))["refund_id"] == "RF-1"


# --- real processes racing on one charge ------------------------------------------------------

WORKERS = 8


def _race(where: str, tmp_path: Path) -> list[dict]:
    """8 processes: each tries three $5.00 refunds of its own and one $1.00 refund under a key
    they all share, on CH-9004 ($29.99), started together."""
    start = tmp_path / "go"
    env = os.environ | {"PYTHONPATH": str(REPO)}
    procs = []
    for n in range(WORKERS):
        plan = [{"key": f"w{n}-{i}", "charge": "CH-9004", "amount": 5.0} for i in range(3)]
        plan.insert(n % 4, {"key": "shared", "charge": "ch-9004", "amount": 1.0})
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "tests.business_refunder", where, str(start), json.dumps(plan)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ))
    start.touch()
    lines = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        lines += [json.loads(line) for line in out.splitlines()]
    return lines


async def test_racing_refunds_from_processes_never_pass_the_charge(where, tmp_path):
    from supportdesk.store import open_store

    async with await open_store(where):  # a desk's database (on SQLite: WAL, as desks run it)
        pass
    seeded = await open_business(where)  # seeded before the race: the race is about refunds
    await seeded.close()
    lines = _race(where, tmp_path)
    assert len(lines) == WORKERS * 4
    mine = [line for line in lines if line["key"] != "shared"]
    # $1.00 once + $5.00 five times = $26.00; a sixth $5.00 would pass $29.99.
    assert sum(line["ok"] for line in mine) == 5
    assert all("only $" in line["error"] for line in mine if not line["ok"])
    shared = [line for line in lines if line["key"] == "shared"]
    assert all(line["ok"] for line in shared)
    assert len({line["result"]["refund_id"] for line in shared}) == 1
    assert sum(not line["result"].get("replayed") for line in shared) == 1
    business = await open_business(where)
    try:
        refunds = await business.refunds("CUS-1001")
        assert sorted(r["amount"] for r in refunds) == [1.0] + [5.0] * 5
        charge = await business.get_charge("CH-9004")
        assert charge["refunded_amount"] == pytest.approx(26.0) and charge["refundable"] == pytest.approx(3.99)
        assert {r["refund_id"] for r in (line["result"] for line in lines if line["ok"])} == {
            f"RF-{r['id']}" for r in refunds
        }
    finally:
        await business.close()


def test_a_sqlite_desk_never_imports_the_postgresql_driver(tmp_path):
    script = (
        "import asyncio, sys\n"
        "from supportdesk.wiring import open_desk\n"
        "async def main():\n"
        f"    async with await open_desk({str(tmp_path / 'd.db')!r}, {str(REPO / 'agents.toml')!r}) as desk:\n"
        "        assert type(desk.services.customers).__name__ == 'SqliteBusiness'\n"
        "        assert (await desk.services.customers.find_customer('CUS-1001'))['name'] == 'Dana Whitfield'\n"
        "asyncio.run(main())\n"
        "assert 'asyncpg' not in sys.modules, 'asyncpg imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.postgres
async def test_a_postgresql_desk_keeps_its_business_data_in_postgresql(pg_url):
    """The seed scenario on a postgresql:// desk: the refund lands in PostgreSQL, once."""
    from tests.test_seed_scenario import run_scenario

    desk, _, turns = await run_scenario(pg_url, "$29.99")
    try:
        assert type(desk.services.customers).__name__ == "PostgresBusiness"
        stored = await desk.services.customers.refunds("CUS-1001")
        assert [(r["charge_id"], r["amount"], r["agent"]) for r in stored] == [("CH-9004", 29.99, "billing")]
    finally:
        await desk.close()


async def test_find_business_never_seeds_a_database_that_has_none(where):
    from supportdesk.business import find_business
    from supportdesk.store import open_store

    async with await open_store(where):
        pass
    assert await find_business(where) is None
    assert await find_business(where) is None  # the probe created nothing
    seeded = await open_business(where)
    await refund(seeded, "k", amount=3)
    await seeded.close()
    found = await find_business(where)
    assert found is not None
    try:
        assert [r["amount"] for r in await found.refunds()] == [3.0]
    finally:
        await found.close()
