"""The PostgreSQL business adapter's pool on the turn path (issue 34: a worker's CPU a message).

asyncpg's default pool reset sends a statement on every release (unlock all advisory locks,
close cursors, unlisten, reset settings): a round trip more after every tool's read. The
adapter's connections take no such state (its money locks are transaction-scoped, its settings
are set at connect, nothing listens), so a connection given back only has a transaction left
open by a failed or cancelled caller rolled back. Read from the server: the last statement each
of the pool's connections ran is the adapter's own.
"""

from __future__ import annotations

import asyncpg
import pytest

from supportdesk.business.postgres import PostgresBusiness
from supportdesk.store.location import parse_location

pytestmark = pytest.mark.postgres

_LAST = "SELECT query, state FROM pg_stat_activity WHERE application_name = 'supportdesk-business' AND datname = current_database()"


async def test_a_connection_given_back_sends_nothing_and_a_left_transaction_is_rolled_back(pg_url: str):
    business = await PostgresBusiness.open(parse_location(pg_url))
    watch = await asyncpg.connect(pg_url)
    try:
        assert (await business.find_customer("dana@example.com")) is not None
        await business.charges("CUS-1001")
        rows = await watch.fetch(_LAST)
        assert rows and all("RESET ALL" not in r["query"] and "pg_advisory_unlock_all" not in r["query"] for r in rows), rows
        assert any("demo_charges" in r["query"] for r in rows), rows
        # A caller that left a transaction open: the connection comes back without it.
        pool = business._pool
        async with pool.acquire() as conn:
            await conn.execute("BEGIN; CREATE TEMP TABLE left_open (x int)")
            assert conn.is_in_transaction()
        async with pool.acquire() as conn:
            assert not conn.is_in_transaction()
            assert await conn.fetchval("SELECT to_regclass('pg_temp.left_open')") is None  # rolled back
    finally:
        await watch.close()
        await business.close()


async def test_every_pooled_connection_is_open_with_a_served_turns_reads_prepared(pg_url: str):
    """Opened, the business data has all its connections and each has parsed the reads a served
    turn's tools make (issue 34: `bench_serve --pg` opened 3 of each worker's 4 during its load,
    and every one parsed these the first time there)."""
    from supportdesk.business import postgres as bp

    business = await PostgresBusiness.open(parse_location(pg_url))
    try:
        pool = business._pool
        assert pool.get_size() == 4
        conns = [await pool.acquire() for _ in range(4)]
        try:
            for conn in conns:
                prepared = {" ".join(r[0].split()) for r in await conn.fetch("SELECT statement FROM pg_prepared_statements")}
                assert prepared >= {" ".join(sql.split()) for sql in bp.SERVED_READS}
        finally:
            for conn in conns:
                await pool.release(conn)
    finally:
        await business.close()
