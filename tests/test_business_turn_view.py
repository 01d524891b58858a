"""One turn's reads of the business data, each made once (issue 34: a served money turn read the
same rows six times, 2.3 statements a message on PostgreSQL).

A turn's tools read through `BusinessCore.for_turn`: a read's rows are given again, with what they
tell of other reads (the customer a search found by id; the owners' charges a charge search or a
charge's siblings read whole), until a write through the view. The adapter every turn shares keeps
nothing. The statements are counted at the adapter's `_query`, one statement each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from supportdesk.business import open_business
from supportdesk.business.core import BusinessCore
from supportdesk.config import load_desk
from supportdesk.wiring import open_desk
from tests.conftest import REPO
from tests.test_turn_round_trips import SEED


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def counted(business: Any) -> list[str]:
    """The statements `business` (and every view made of it after this) sends, recorded."""
    sent: list[str] = []
    query = business._query

    async def counting(sql: str, params: tuple[Any, ...] = ()) -> Any:
        sent.append(sql)
        return await query(sql, params)

    business._query = counting
    return sent


async def money_reads(business: BusinessCore) -> list[Any]:
    """The reads a money turn makes: find_charges, then the refund's offer check."""
    customer = await business.find_customer("dana@example.com")
    assert customer is not None
    found = await business.find_charges(customer_id=customer["id"])
    duplicate = next(c for c in found if c.get("duplicate_of"))
    return [
        customer, found,
        await business.get_charge(duplicate["id"]),
        await business.get_customer(customer["id"]),
        await business.get_charge(duplicate["id"]),
        await business.charges(customer["id"]),
    ]


async def test_a_turns_view_reads_a_money_turns_rows_twice_not_six_times(where: str):
    business = await open_business(where)
    assert isinstance(business, BusinessCore)
    try:
        sent = counted(business)
        direct = await money_reads(business)
        assert len(sent) == 6  # the adapter itself keeps nothing
        sent.clear()
        view = business.for_turn()
        assert await money_reads(view) == direct
        assert len(sent) == 2, sent  # the customer search and the charge search
        # What a read hands out is a copy: marking it changes nothing kept.
        charge = await view.get_charge(direct[2]["id"])
        assert charge is not None
        charge["amount"] = 0.0
        assert await view.get_charge(direct[2]["id"]) == direct[2]
        assert len(sent) == 2
    finally:
        await business.close()


async def test_a_write_through_the_view_has_everything_read_again(where: str):
    business = await open_business(where)
    assert isinstance(business, BusinessCore)
    try:
        sent = counted(business)
        view = business.for_turn()
        reads = await money_reads(view)
        charge = reads[2]
        await view.refund(
            key="turn-view-test", session_id="S-view", charge_id=charge["id"], amount=charge["refundable"],
            reason="duplicate", agent="billing",
        )
        sent.clear()
        after = await view.get_charge(charge["id"])
        assert after is not None and after["refunded_amount"] == charge["refundable"]
        assert len(sent) == 1  # read again: the refund moved it
        assert await view.get_customer(reads[0]["id"]) == reads[0]
        assert len(sent) == 2
    finally:
        await business.close()


async def test_a_served_money_turns_tools_read_through_one_view(where: str):
    """The seed turn (find_charges, then the refund's offer checked): its tools' reads, counted at
    the desk's business data."""
    desk = await open_desk(where, load_desk(REPO / "agents.toml"))
    try:
        assert desk.runner.services is not None
        await desk.runner.services.ready()
        sent = counted(desk.runner.services.customers)
        events = [e async for e in desk.runner.send(None, SEED)]
        assert any(getattr(e, "outcome", None) == "answered" for e in events)
        assert len(sent) == 2, sent
    finally:
        await desk.close()


async def test_a_read_a_write_overlapped_is_not_kept(where: str):
    """A read whose rows came back while a write through the view ran (a step's tools at once)
    may be from before it: given to its caller, not kept for the turn's next read."""
    import asyncio

    business = await open_business(where)
    assert isinstance(business, BusinessCore)
    try:
        view = business.for_turn()
        customer = await view.find_customer("dana@example.com")
        assert customer is not None
        charge = next(c for c in await business.charges(customer["id"]) if c.get("duplicate_of"))
        read, written = asyncio.Event(), asyncio.Event()
        query = view._query

        async def slow(sql: str, params: tuple[Any, ...] = ()) -> Any:
            rows = await query(sql, params)
            if sql == business.sql.charge_with_siblings:
                read.set()
                await written.wait()  # (the rows read before the write, handed back after it)
            return rows

        view._query = slow  # type: ignore[method-assign]
        reading = asyncio.create_task(view.get_charge(charge["id"]))
        async with asyncio.timeout(10):  # fails, never hangs
            await read.wait()
        await view.refund(
            key="turn-view-overlap", session_id="S-view", charge_id=charge["id"], amount=charge["refundable"],
            reason="duplicate", agent="billing",
        )
        written.set()
        before = await reading
        assert before is not None and before["refunded_amount"] == charge["refunded_amount"]
        view._query = query  # type: ignore[method-assign]
        after = await view.get_charge(charge["id"])
        assert after is not None and after["refunded_amount"] == charge["refundable"]
    finally:
        await business.close()
