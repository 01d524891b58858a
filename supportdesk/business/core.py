"""The business data's dialect-free core: what the SQLite and the PostgreSQL demo adapters share.

`sqlite.py` and `postgres.py` keep only what differs between their databases: the driver's
calls, opening and setting up (the schema's types, the first seed), the frame of a transaction,
the few statements whose words differ (the refund's conditional UPDATE, PostgreSQL's locks), and
the copy of the whole data set. Everything else is written here once:

- `BusinessDialect`: the few words an adapter gives (its placeholder, how it binds money,
  whether a write locks the rows it reads);
- `BusinessSql`: every statement, built from the dialect (as `store/core.py`'s `ReadSql`), with
  the ones whose words differ passed in by the adapter;
- `Step` and `Steps`: a write's transaction as a generator that yields its statements and is
  sent their rows, so the rules of each write (validation, money limits, the idempotency key's
  claim and replay) are written once and run by either driver, a sync one on SQLite's connection
  thread or an async one on PostgreSQL, inside the adapter's transaction;
- `BusinessCore`: the base class of both adapters, holding the contract's reads and writes; an
  adapter sets `sql` and gives `_query` (one read) and `_run_steps` (steps, in a write
  transaction or not), plus `close` and its own open;
- pure functions: a row as the tools see it (`row_of`: numeric money as float), the charges
  that match a search, a refusal of a newer schema.

A new business backend (a real back office behind SQL) gives a dialect, its few statements and
the driver calls, and inherits the rest; `tests/test_business_core.py` fails when a function
body or a SQL statement is written in both adapters. A back office that is not SQL implements
`BusinessData` (protocol.py) directly.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, ClassVar, Self, TypeAlias, TypeVar

from supportdesk.business import demo
from supportdesk.business.protocol import BusinessError, MoneyLimits, Row

T = TypeVar("T")

# Money columns: a driver with an exact decimal type binds these with `BusinessDialect.money`.
NUMERIC_COLUMNS = frozenset({"amount", "monthly_price", "annual_price", "refunded_amount"})

# The versions an open reads first (nothing to do when both are current) and during set-up.
SQL_META_VERSIONS = "SELECT key, value FROM demo_meta WHERE key IN ('schema_version', 'seed_version')"
SQL_SCHEMA_VERSION = "SELECT value FROM demo_meta WHERE key = 'schema_version'"
SQL_SEED_VERSION = "SELECT value FROM demo_meta WHERE key = 'seed_version'"


def row_of(pairs: Iterable[tuple[str, Any]]) -> Row:
    """A row as the tools see it, from (column, value) pairs: numeric money as float."""
    return {k: float(v) if isinstance(v, Decimal) else v for k, v in pairs}


def is_current(versions: Iterable[tuple[str, str]]) -> bool:
    """Whether the (key, value) rows of SQL_META_VERSIONS say the tables are at this schema and seeded."""
    found = dict(versions)
    return found.get("schema_version") == demo.SCHEMA_VERSION and "seed_version" in found


def newer_schema(version: Any) -> BusinessError | None:
    """The refusal of tables a newer supportdesk wrote (None: this one can use them)."""
    if version is not None and int(version) > int(demo.SCHEMA_VERSION):
        return BusinessError(f"the demo data was written by a newer supportdesk (schema {version})")
    return None


def matching_charges(rows: Iterable[Row], amount: float | None, dates: list[str] | None) -> list[Row]:
    """Of every charge of some owners (ordered by owner), the ones matching `amount` and `dates`,
    each marked against all of its owner's charges (`demo.with_duplicates`)."""
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


@dataclass(frozen=True)
class BusinessDialect:
    """The few words in which the two databases' business SQL differs."""

    # The placeholder of the n-th parameter (from 1), usable more than once: "?n" or "$n".
    param: Callable[[int], str]
    # A money amount as the driver binds it (PostgreSQL: an exact Decimal of whole cents).
    money: Callable[[float], Any]
    # Whether a write locks the rows it reads (`FOR UPDATE`); SQLite's writes need not: each
    # runs in a BEGIN IMMEDIATE transaction, one writer at a time.
    row_locks: bool


@dataclass(frozen=True)
class Step:
    """One statement of a transaction for the adapter to run; its rows are sent back as `Row`s
    when `rows` is true (a statement that returns none gets []), else None."""

    sql: str
    params: tuple[Any, ...] = ()
    rows: bool = True


# The work of one transaction, written once: a generator that yields each statement, is sent
# what it returned, and returns the result. The adapter runs it with its driver.
Steps: TypeAlias = Generator[Step, Any, T]


def all_rows(sql: str, *params: Any) -> Steps[list[Row]]:
    rows: list[Row] = yield Step(sql, params)
    return rows


def first_row(sql: str, *params: Any) -> Steps[Row | None]:
    rows: list[Row] = yield Step(sql, params)
    return rows[0] if rows else None


def first_value(sql: str, *params: Any) -> Steps[Any]:
    row = yield from first_row(sql, *params)
    return next(iter(row.values())) if row else None


def run(sql: str, *params: Any) -> Steps[None]:
    yield Step(sql, params, rows=False)


class BusinessSql:
    """Every statement of the business data in one dialect's placeholders; the ones whose words
    differ are the adapter's, passed in."""

    def __init__(
        self,
        dialect: BusinessDialect,
        *,
        refund_charge: str,
        lock_session_money: str | None = None,
        lock_tickets: str | None = None,
    ):
        p = dialect.param
        self.dialect = dialect
        locked = " FOR UPDATE" if dialect.row_locks else ""
        # --- reads ---
        self.customer_by_query = (
            f"SELECT * FROM demo_customers WHERE upper(id) = upper({p(1)}) OR lower(email) = lower({p(1)})"
            f" OR lower(name) = lower({p(1)}) ORDER BY id LIMIT 1"
        )
        self.customer = f"SELECT * FROM demo_customers WHERE id = {p(1)}"
        self.charges = f"SELECT * FROM demo_charges WHERE customer_id = {p(1)} ORDER BY charged_on, id"
        # One read: the charge's owner and the owner's charges (its duplicate marks need them all).
        self.charge_with_siblings = (
            "SELECT * FROM demo_charges WHERE customer_id = (SELECT customer_id FROM demo_charges WHERE id = upper("
            f"{p(1)})) ORDER BY charged_on, id"
        )
        self.invoices = f"SELECT * FROM demo_invoices WHERE customer_id = {p(1)} ORDER BY issued_on, id"
        self.invoice = f"SELECT * FROM demo_invoices WHERE upper(id) = upper({p(1)})"
        self.plans = "SELECT code, name, monthly_price, annual_price FROM demo_plans ORDER BY monthly_price, code"
        self.refunds = f"SELECT * FROM demo_refunds WHERE customer_id = {p(1)} ORDER BY id"
        self.all_refunds = "SELECT * FROM demo_refunds ORDER BY id"
        self.credits = f"SELECT * FROM demo_credits WHERE customer_id = {p(1)} ORDER BY id"
        self.account_events = f"SELECT * FROM demo_account_events WHERE customer_id = {p(1)} ORDER BY id"
        self.tickets = f"SELECT * FROM demo_tickets WHERE customer_id = {p(1)} ORDER BY id"
        self.all_tickets = "SELECT * FROM demo_tickets ORDER BY id"
        # Refunds and credits together, in one session and to one customer since a time.
        self.moved_in_session = (
            f"SELECT coalesce((SELECT sum(amount) FROM demo_refunds WHERE session_id = {p(1)}), 0)"
            f" + coalesce((SELECT sum(amount) FROM demo_credits WHERE session_id = {p(1)}), 0)"
        )
        self.moved_to_customer = (
            f"SELECT coalesce((SELECT sum(amount) FROM demo_refunds WHERE customer_id = {p(1)} AND created_at >= {p(2)}), 0)"
            f" + coalesce((SELECT sum(amount) FROM demo_credits WHERE customer_id = {p(1)} AND created_at >= {p(2)}), 0)"
        )
        # --- the idempotency key: claimed (a row back) or claimed before (none), then its result kept ---
        self.claim = (
            "INSERT INTO demo_writes (key, tool, session_id, result, created_at)"
            f" VALUES ({p(1)}, {p(2)}, {p(3)}, '', {p(4)}) ON CONFLICT (key) DO NOTHING RETURNING key"
        )
        self.stored_write = f"SELECT result, tool FROM demo_writes WHERE key = {p(1)}"
        self.keep_result = f"UPDATE demo_writes SET result = {p(2)} WHERE key = {p(1)}"
        # --- the writes' statements ---
        self.require_customer = (
            f"SELECT id, plan, billing_period, status, payment_method, email FROM demo_customers WHERE id = {p(1)}{locked}"
        )
        self.charge_owner = f"SELECT customer_id FROM demo_charges WHERE id = upper({p(1)})"
        self.charge = f"SELECT * FROM demo_charges WHERE id = upper({p(1)})"
        # (amount, charge) -> (id, customer_id, refunded_amount) of the charge moved, or no row:
        # the adapter's, its WHERE clause the rule that a charge is never refunded past what was paid.
        self.refund_charge = refund_charge
        self.insert_refund = (
            "INSERT INTO demo_refunds (charge_id, customer_id, amount, reason, agent, session_id, created_at)"
            f" VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)}, {p(7)}) RETURNING id"
        )
        self.insert_credit = (
            "INSERT INTO demo_credits (customer_id, amount, reason, agent, session_id, created_at)"
            f" VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)}) RETURNING id"
        )
        self.plan_exists = f"SELECT 1 FROM demo_plans WHERE code = {p(1)}"
        self.plan_codes = "SELECT code FROM demo_plans ORDER BY monthly_price"
        self.set_plan = f"UPDATE demo_customers SET plan = {p(1)}, billing_period = {p(2)}, status = 'active' WHERE id = {p(3)}"
        self.cancel = f"UPDATE demo_customers SET status = 'cancelled' WHERE id = {p(1)}"
        self.set_payment_method = f"UPDATE demo_customers SET payment_method = {p(1)} WHERE id = {p(2)}"
        self.account_event = (
            "INSERT INTO demo_account_events (customer_id, event, detail, agent, session_id, created_at)"
            f" VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)})"
        )
        self.count_tickets = "SELECT count(*) FROM demo_tickets"
        self.insert_ticket = (
            "INSERT INTO demo_tickets (id, customer_id, summary, severity, agent, session_id, created_at)"
            f" VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)}, {p(7)})"
        )
        # --- locks (None: the adapter's transactions already serialize the writes) ---
        # (session) before the money totals are read, then the customer's row (always in that
        # order: no deadlock), so concurrent writes moving money read each other's totals.
        self.lock_session_money = lock_session_money
        self.lock_customer = f"SELECT 1 FROM demo_customers WHERE id = {p(1)}{locked}" if locked else None
        # Tickets are numbered in order: one numbering transaction at a time.
        self.lock_tickets = lock_tickets

    def charges_matching(
        self, customer_id: str | None, amount: float | None, dates: list[str] | None
    ) -> tuple[str, tuple[Any, ...]] | None:
        """One read of every charge of the owners of the charges matching a customer, an amount
        and/or dates, owner by owner (`matching_charges` keeps the match); None: nothing asked."""
        where: list[str] = []
        params: list[Any] = []

        def param(value: Any) -> str:
            params.append(value)
            return self.dialect.param(len(params))

        if customer_id:
            where.append(f"customer_id = {param(customer_id)}")
        if amount is not None:
            where.append(f"abs(amount - {param(self.dialect.money(float(amount)))}) < 0.005")
        if dates:
            parts = [
                f"charged_on LIKE {param('%' + d[1:])}" if d.startswith("--") else f"charged_on = {param(d)}"
                for d in dates
            ]
            where.append("(" + " OR ".join(parts) + ")")
        if not where:
            return None
        sql = (
            "SELECT * FROM demo_charges WHERE customer_id IN"
            f" (SELECT customer_id FROM demo_charges WHERE {' AND '.join(where)}) ORDER BY customer_id, charged_on, id"
        )
        return sql, tuple(params)

    def snapshot(self, table: str) -> str:
        """A whole demo table, in its snapshot order."""
        return f"SELECT {', '.join(demo.TABLES[table])} FROM {table} ORDER BY {demo.ORDER_BY[table]}"

    def insert(self, table: str, rows: Sequence[Row]) -> tuple[str, list[tuple[Any, ...]]]:
        """An INSERT of whole rows of a demo table and its parameters, money bound by the dialect."""
        cols = demo.TABLES[table]
        money = self.dialect.money
        values = ", ".join(self.dialect.param(n) for n in range(1, len(cols) + 1))
        params = [
            tuple(money(row[c]) if c in NUMERIC_COLUMNS and row[c] is not None else row[c] for c in cols) for row in rows
        ]
        return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({values})", params


# --- the writes' steps, each run inside one transaction -----------------------------------------


def write_once(sql: BusinessSql, key: str, tool: str, session_id: str, act: Steps[Row]) -> Steps[Row]:
    """Claim `key`, run `act`, keep its result, all in the caller's transaction; a key claimed
    before gives its first result back (`demo.replayed`)."""
    if (yield from first_row(sql.claim, key, tool, session_id, demo.now())) is None:
        stored = yield from first_row(sql.stored_write, key)
        assert stored is not None  # claimed before: its row is there
        return demo.replayed(json.loads(stored["result"]), stored["tool"], tool, key)
    result = yield from act
    yield from run(sql.keep_result, key, json.dumps(result))
    return result


def moved(sql: BusinessSql, session_id: str, customer_id: str, period_days: int) -> Steps[tuple[float, float]]:
    """Refunds and credits together: (in this session, to this customer in the last `period_days`)."""
    in_session = yield from first_value(sql.moved_in_session, session_id)
    to_customer = yield from first_value(sql.moved_to_customer, customer_id, demo.since(period_days))
    return round(float(in_session), 2), round(float(to_customer), 2)


def lock_money(sql: BusinessSql, limits: MoneyLimits | None, session_id: str, customer_id: str) -> Steps[None]:
    """Before the totals are read: the session's money lock, then the customer's row, held to the
    transaction's end (where the dialect needs locks at all)."""
    if limits is None:
        return
    if sql.lock_session_money is not None:
        yield from run(sql.lock_session_money, session_id)
    if sql.lock_customer is not None:
        yield from run(sql.lock_customer, customer_id)


def within_limits(
    sql: BusinessSql, limits: MoneyLimits | None, session_id: str, customer_id: str, amount: float
) -> Steps[None]:
    """Raise `LimitReached` when `amount` on top of what already moved passes `limits` (after `lock_money`)."""
    if limits is not None:
        in_session, to_customer = yield from moved(sql, session_id, customer_id, limits.period_days)
        demo.check_limits(limits, amount, in_session, to_customer, customer_id)


def require_customer(sql: BusinessSql, customer_id: str) -> Steps[Row]:
    found = yield from first_row(sql.require_customer, customer_id)
    if found is None:
        raise BusinessError(f"no customer {customer_id}")
    return found


def account_event(sql: BusinessSql, customer_id: str, event: str, detail: str, agent: str, session_id: str) -> Steps[None]:
    yield from run(sql.account_event, customer_id, event, detail, agent, session_id, demo.now())


def refund_steps(
    sql: BusinessSql, session_id: str, charge_id: str, amount: float, reason: str, agent: str, limits: MoneyLimits | None
) -> Steps[Row]:
    owner = yield from first_value(sql.charge_owner, charge_id)
    if owner is not None:
        yield from lock_money(sql, limits, session_id, owner)
        yield from within_limits(sql, limits, session_id, owner, amount)
    money = sql.dialect.money(amount)
    charge = yield from first_row(sql.refund_charge, money, charge_id)
    if charge is None:  # the database said no: read why, for the agent
        found = yield from first_row(sql.charge, charge_id)
        raise demo.refund_refused(charge_id, found, amount)
    refund_id = yield from first_value(
        sql.insert_refund, charge["id"], charge["customer_id"], money, reason, agent, session_id, demo.now()
    )
    return {
        "refund_id": f"RF-{refund_id}",
        "charge_id": charge["id"],
        "customer_id": charge["customer_id"],
        "amount": amount,
        "refunded_total": round(charge["refunded_amount"], 2),
        "status": "refunded",
    }


def credit_steps(
    sql: BusinessSql, session_id: str, customer_id: str, amount: float, reason: str, agent: str, limits: MoneyLimits | None
) -> Steps[Row]:
    # The locks first (as a refund takes them), then the customer, the amount and the totals.
    yield from lock_money(sql, limits, session_id, customer_id)
    yield from require_customer(sql, customer_id)
    if amount <= 0:
        raise BusinessError("a credit must be more than zero")
    yield from within_limits(sql, limits, session_id, customer_id, round(float(amount), 2))
    credit_id = yield from first_value(
        sql.insert_credit, customer_id, sql.dialect.money(amount), reason, agent, session_id, demo.now()
    )
    return {"credit_id": f"CR-{credit_id}", "customer_id": customer_id, "amount": round(amount, 2), "status": "credited"}


def change_plan_steps(
    sql: BusinessSql, session_id: str, customer_id: str, plan: str, billing_period: str | None, agent: str, when: str
) -> Steps[Row]:
    before = yield from require_customer(sql, customer_id)
    if (yield from first_row(sql.plan_exists, plan)) is None:
        codes = ", ".join(r["code"] for r in (yield from all_rows(sql.plan_codes)))
        raise BusinessError(f"no plan {plan!r}; plans: {codes}")
    period = billing_period or before["billing_period"]
    result = {"customer_id": customer_id, "from_plan": before["plan"], "from_billing_period": before["billing_period"],
              "plan": plan, "billing_period": period, "when": when}
    if (plan, period) == (before["plan"], before["billing_period"]):
        return result | {"status": "unchanged"}
    if when == "renewal":
        detail = f"{before['plan']}/{before['billing_period']} -> {plan}/{period} at renewal"
        yield from account_event(sql, customer_id, "plan_change_scheduled", detail, agent, session_id)
        return result | {"status": "scheduled"}
    yield from run(sql.set_plan, plan, period, customer_id)
    detail = f"{before['plan']}/{before['billing_period']} -> {plan}/{period}"
    yield from account_event(sql, customer_id, "plan_changed", detail, agent, session_id)
    return result | {"status": "changed"}


def cancel_steps(sql: BusinessSql, session_id: str, customer_id: str, reason: str, agent: str) -> Steps[Row]:
    before = yield from require_customer(sql, customer_id)
    yield from run(sql.cancel, customer_id)
    yield from account_event(sql, customer_id, "cancelled", reason, agent, session_id)
    return {"customer_id": customer_id, "plan": before["plan"], "previous_status": before["status"], "status": "cancelled"}


def payment_method_steps(sql: BusinessSql, session_id: str, customer_id: str, method: str, agent: str) -> Steps[Row]:
    old = (yield from require_customer(sql, customer_id))["payment_method"]
    yield from run(sql.set_payment_method, method, customer_id)
    yield from account_event(sql, customer_id, "payment_method_updated", f"{old} -> {method}", agent, session_id)
    return {"customer_id": customer_id, "previous": old, "payment_method": method, "status": "updated"}


def password_reset_steps(sql: BusinessSql, session_id: str, customer_id: str, agent: str) -> Steps[Row]:
    email = (yield from require_customer(sql, customer_id))["email"]
    yield from account_event(sql, customer_id, "password_reset_sent", email, agent, session_id)
    return {"customer_id": customer_id, "email": email, "status": "reset link sent", "expires_in_minutes": 30}


def ticket_steps(
    sql: BusinessSql, session_id: str, customer_id: str | None, summary: str, severity: str, agent: str
) -> Steps[Row]:
    if customer_id:
        yield from require_customer(sql, customer_id)
    if sql.lock_tickets is not None:
        yield from run(sql.lock_tickets)
    # Numbered while no other writer can number (the lock, or SQLite's BEGIN IMMEDIATE).
    n = yield from first_value(sql.count_tickets)
    ticket_id = f"ENG-{n + 101}"
    yield from run(sql.insert_ticket, ticket_id, customer_id, summary, severity, agent, session_id, demo.now())
    return {"ticket_id": ticket_id, "customer_id": customer_id, "summary": summary, "severity": severity, "status": "open"}


class BusinessCore:
    """The contract's reads and writes, written once. An adapter sets `sql` and gives `_query`
    (one read, its rows as `row_of` makes them), `_run_steps` (steps, in one write transaction
    when `write`, else on one connection as they come) and `close`."""

    sql: ClassVar[BusinessSql]
    # A turn's view (`for_turn`): each read's rows as first read, by (statement, parameters);
    # None on the desk's own adapter, which every turn shares.
    _kept: dict[tuple[str, tuple[Any, ...]], list[Row]] | None = None
    # Moved at the start and at the end of each write through the view (odd: one is under way).
    _writes: int = 0

    async def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        raise NotImplementedError

    async def _run_steps(self, steps: Steps[T], *, write: bool) -> T:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def _write(self, key: str, tool: str, session_id: str, act: Steps[Row]) -> Row:
        self._forget_reads()
        try:
            return await self._run_steps(write_once(self.sql, key, tool, session_id, act), write=True)
        finally:
            self._forget_reads()

    # --- one turn's view -----------------------------------------------------------------------

    def for_turn(self) -> Self:
        """This adapter as one turn's tools read it: each read made once and its rows given again,
        with what they tell of other reads (the customer a search found is that customer by id; a
        charge's siblings, or the owners a charge search read whole, are those owners' charges),
        until a write through the view, after which everything is read again (issue 34: a served
        money turn read the same rows 6 times, 2.3 statements a message on PostgreSQL). The turn
        sees each row as of its first read of it, as a turn whose reads all came at once would;
        the money's rules are the write's own, checked in its transaction as before. It shares the
        adapter's connections: it is not closed."""
        view = copy.copy(self)
        view._kept = {}
        view._writes = 0
        return view

    def _forget_reads(self) -> None:
        self._writes += 1
        if self._kept is not None:
            self._kept.clear()

    async def _read(
        self, sql: str, params: tuple[Any, ...] = (),
        tells: Callable[[list[Row]], Iterable[tuple[str, tuple[Any, ...], list[Row]]]] | None = None,
    ) -> list[Row]:
        """`_query`, through a turn's kept rows when this is a turn's view; `tells`: the other
        reads (statement, parameters, rows) these rows answer, kept too. Rows are handed out as
        copies (the reads mark them, `demo.with_duplicates`). A read that a write overlapped is
        not kept."""
        kept = self._kept
        if kept is None:
            return await self._query(sql, params)
        rows = kept.get((sql, params))
        if rows is None:
            writes = self._writes
            rows = await self._query(sql, params)
            if writes == self._writes and writes % 2 == 0:
                kept[sql, params] = [dict(r) for r in rows]
                for other, other_params, other_rows in tells(rows) if tells is not None else ():
                    kept.setdefault((other, other_params), [dict(r) for r in other_rows])
            return rows
        return [dict(r) for r in rows]

    def _owners_charges(self, rows: list[Row]) -> Iterable[tuple[str, tuple[Any, ...], list[Row]]]:
        """What every charge of some owners (in `charged_on, id` order within each) tells: each
        owner's charges, and each charge with its siblings."""
        owners: dict[str, list[Row]] = {}
        for r in rows:
            owners.setdefault(r["customer_id"], []).append(r)
        for owner, charges in owners.items():
            yield self.sql.charges, (owner,), charges
            for charge in charges:
                yield self.sql.charge_with_siblings, (charge["id"],), charges

    # --- reads -------------------------------------------------------------------------------

    def today(self) -> date:
        """The demo world's today (the refund window counts from it)."""
        return demo.TODAY

    async def find_customer(self, query: str) -> Row | None:
        rows = await self._read(
            self.sql.customer_by_query, (query.strip(),), lambda found: [(self.sql.customer, (r["id"],), [r]) for r in found]
        )
        return rows[0] if rows else None

    async def get_customer(self, customer_id: str) -> Row | None:
        rows = await self._read(self.sql.customer, (customer_id,))
        return rows[0] if rows else None

    async def charges(self, customer_id: str) -> list[Row]:
        return demo.with_duplicates(await self._read(self.sql.charges, (customer_id,)))

    async def get_charge(self, charge_id: str) -> Row | None:
        rows = await self._read(self.sql.charge_with_siblings, (charge_id,), self._owners_charges)
        return next((c for c in demo.with_duplicates(rows) if c["id"] == charge_id.upper()), None)

    async def find_charges(
        self, *, customer_id: str | None = None, amount: float | None = None, dates: list[str] | None = None
    ) -> list[Row]:
        read = self.sql.charges_matching(customer_id, amount, dates)
        if read is None:
            return []
        return matching_charges(await self._read(*read, tells=self._owners_charges), amount, dates)

    async def invoices(self, customer_id: str) -> list[Row]:
        return await self._read(self.sql.invoices, (customer_id,))

    async def get_invoice(self, invoice_id: str) -> Row | None:
        rows = await self._read(self.sql.invoice, (invoice_id,))
        return rows[0] if rows else None

    async def plans(self) -> list[Row]:
        return await self._read(self.sql.plans)

    async def refunds(self, customer_id: str | None = None) -> list[Row]:
        if customer_id:
            return await self._read(self.sql.refunds, (customer_id,))
        return await self._read(self.sql.all_refunds)

    async def credits(self, customer_id: str) -> list[Row]:
        return await self._read(self.sql.credits, (customer_id,))

    async def account_events(self, customer_id: str) -> list[Row]:
        return await self._read(self.sql.account_events, (customer_id,))

    async def tickets(self, customer_id: str | None = None) -> list[Row]:
        if customer_id:
            return await self._read(self.sql.tickets, (customer_id,))
        return await self._read(self.sql.all_tickets)

    async def money_moved(self, *, session_id: str, customer_id: str, period_days: int) -> tuple[float, float]:
        return await self._run_steps(moved(self.sql, session_id, customer_id, period_days), write=False)

    # --- writes: each once per key -------------------------------------------------------------

    async def refund(
        self, *, key: str, session_id: str, charge_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        amount = round(float(amount), 2)
        demo.check_refund_amount(amount)
        act = refund_steps(self.sql, session_id, charge_id, amount, reason, agent, limits)
        return await self._write(key, "refund_charge", session_id, act)

    async def credit(
        self, *, key: str, session_id: str, customer_id: str, amount: float, reason: str, agent: str,
        limits: MoneyLimits | None = None,
    ) -> Row:
        act = credit_steps(self.sql, session_id, customer_id, amount, reason, agent, limits)
        return await self._write(key, "issue_credit", session_id, act)

    async def change_plan(
        self, *, key: str, session_id: str, customer_id: str, plan: str, billing_period: str | None, agent: str,
        when: str = "now",
    ) -> Row:
        act = change_plan_steps(self.sql, session_id, customer_id, plan, billing_period, agent, when)
        return await self._write(key, "change_plan", session_id, act)

    async def cancel(self, *, key: str, session_id: str, customer_id: str, reason: str, agent: str) -> Row:
        act = cancel_steps(self.sql, session_id, customer_id, reason, agent)
        return await self._write(key, "cancel_subscription", session_id, act)

    async def update_payment_method(self, *, key: str, session_id: str, customer_id: str, method: str, agent: str) -> Row:
        act = payment_method_steps(self.sql, session_id, customer_id, method, agent)
        return await self._write(key, "update_payment_method", session_id, act)

    async def password_reset(self, *, key: str, session_id: str, customer_id: str, agent: str) -> Row:
        act = password_reset_steps(self.sql, session_id, customer_id, agent)
        return await self._write(key, "send_password_reset", session_id, act)

    async def create_ticket(
        self, *, key: str, session_id: str, customer_id: str | None, summary: str, severity: str, agent: str
    ) -> Row:
        act = ticket_steps(self.sql, session_id, customer_id, summary, severity, agent)
        return await self._write(key, "create_ticket", session_id, act)
