"""The two business adapters hold only what differs between their databases (issue 36).

What both need lives once in `supportdesk/business/core.py`: every read and write of the
contract, the statements (placeholders made per dialect), the money limits, the idempotency
key's claim and replay. These checks keep copies from coming back: no function body (docstring
aside, `await` aside, placeholders made alike) and no SQL statement (anywhere in the module,
placeholders `?`, `?n`, `$n` and `:name` made alike) is written in two adapters (SQLite and
PostgreSQL today, any later one too), and neither adapter's class writes a method of the contract
itself. Read with `ast`, nothing run; the last test runs one rule the core made the same on both databases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from supportdesk.business import BusinessData, BusinessError, MoneyLimits, open_business
from tests.copies import written_twice

BUSINESS = Path(__file__).resolve().parent.parent / "supportdesk" / "business"
# Every adapter module: what is in business/ besides the contract, the core and the demo seed.
NOT_ADAPTERS = {"__init__.py", "core.py", "demo.py", "protocol.py"}
ADAPTER_FILES = sorted(p.name for p in BUSINESS.glob("*.py") if p.name not in NOT_ADAPTERS)
def _read(name: str) -> dict[str, str]:
    return {name: (BUSINESS / name).read_text(encoding="utf-8")}


def test_no_function_or_statement_is_written_in_two_adapters():
    assert ADAPTER_FILES[:2] == ["postgres.py", "sqlite.py"]  # (and any later backend's)
    problems = [
        problem
        for n, left in enumerate(ADAPTER_FILES)
        for right in ADAPTER_FILES[n + 1 :]
        for problem in written_twice(_read(left), _read(right), "business/core.py")
    ]
    assert problems == []


def test_the_check_sees_a_copied_helper_and_a_copied_statement():
    # What the adapters looked like before the core: the same write in each driver's words
    # (sync with `?` and a tuple, async with `$n`), a module-level statement differing only in
    # its placeholders, and a helper whose body differs only by `await`.
    sqlite = {
        "sqlite.py": (
            'SQL_MOVED = "SELECT sum(amount) FROM demo_refunds WHERE session_id = :session"\n'
            "def cancel(conn, customer_id):\n"
            "    conn.execute(\"UPDATE demo_customers SET status = 'cancelled' WHERE id = ?\", (customer_id,))\n"
            "def _event(conn, customer_id):\n    '''SQLite's.'''\n    conn.execute(EVENT, customer_id)\n"
        )
    }
    postgres = {
        "postgres.py": (
            'SQL_MOVED = "SELECT sum(amount) FROM demo_refunds WHERE session_id = $1"\n'
            "async def cancel(conn, customer_id):\n"
            "    await conn.execute(\"UPDATE demo_customers SET status = 'cancelled' WHERE id = $1\", customer_id)\n"
            "async def _event(conn, customer_id):\n    await conn.execute(EVENT, customer_id)\n"
            "async def _other(conn):\n    await conn.execute(\"SELECT 1\")\n"
        )
    }
    problems = written_twice(sqlite, postgres, "business/core.py")
    assert problems == [
        "sqlite.py:1 = postgres.py:1: move it to business/core.py",
        "sqlite.py:3 = postgres.py:3: move it to business/core.py",
        "sqlite.py:_event = postgres.py:_event: move it to business/core.py",
    ], problems


def test_the_adapters_stand_on_the_core():
    # Every read and write of the contract is the core's: neither adapter's class writes one
    # (a copy of `find_charges` or `refund` in an adapter fails here), and each builds its
    # statements from its own dialect.
    from supportdesk.business import core, postgres, sqlite

    contract = {
        name for name in vars(BusinessData) if not name.startswith("_") and callable(getattr(BusinessData, name))
    }
    shared = contract - {"close"}
    assert shared <= set(vars(core.BusinessCore)), shared - set(vars(core.BusinessCore))
    for module, adapter in ((sqlite, sqlite.SqliteBusiness), (postgres, postgres.PostgresBusiness)):
        assert issubclass(adapter, core.BusinessCore)
        assert adapter.sql is module.SQL and module.SQL.dialect is module.DIALECT
        written_here = shared & set(vars(adapter))
        assert not written_here, f"{module.__name__} writes {sorted(written_here)}: the core's"
    assert sqlite.DIALECT.param(3) == "?3" and postgres.DIALECT.param(3) == "$3"
    assert sqlite.SQL.lock_customer is None and postgres.SQL.lock_customer is not None


ADAPTERS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=ADAPTERS)
def where(request, tmp_path) -> str:
    return request.getfixturevalue("pg_url") if request.param == "postgres" else str(tmp_path / "desk.db")


@pytest.fixture
async def business(where):
    opened = await open_business(where)
    yield opened
    await opened.close()


async def test_a_credit_to_no_customer_is_refused_for_that_on_both_databases(business):
    # One rule, written once: the customer is checked before the amount and the money limits
    # (PostgreSQL used to answer a zero credit, or a limit, for a customer that does not exist).
    limits = MoneyLimits(per_conversation=10.0, per_customer=10.0, period_days=30)
    for amount, given in ((0.0, None), (500.0, limits)):
        with pytest.raises(BusinessError, match="^no customer CUS-9999$"):
            await business.credit(
                key=f"k-{amount}", session_id="s1", customer_id="CUS-9999", amount=amount, reason="r", agent="billing",
                limits=given,
            )
    assert await business.money_moved(session_id="s1", customer_id="CUS-9999", period_days=30) == (0.0, 0.0)
    # ... and the keys stay usable: nothing was claimed.
    done = await business.credit(key="k-0.0", session_id="s1", customer_id="CUS-1001", amount=5, reason="r", agent="billing")
    assert done == {"credit_id": done["credit_id"], "customer_id": "CUS-1001", "amount": 5, "status": "credited"}
