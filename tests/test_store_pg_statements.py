"""What a new PostgreSQL connection costs before a served turn's statements run (issue 34).

asyncpg knows text[] without asking the server, but any other array type (bigint[], integer[])
it looks up with a recursive catalog query, with the server's JIT switched off and back on
around it, on every new connection before the first statement that uses it: 12-16 ms of server
CPU per pooled connection, about 2 ms a message of the server's ~7 in `bench_serve --pg`. The
store sends every array as text[] and casts it in SQL; this test runs the statements of a served
turn (the appends with token usage and roll-up moves, a status change that empties a roll-up row,
the turn's lease and read, items by seq) on a fresh store and fails if any of them made asyncpg
look a type up.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from supportdesk.items import Handoff, Message, ToolCall, ToolResult
from supportdesk.store import open_store

pytestmark = pytest.mark.postgres


async def test_a_served_turns_statements_need_no_type_lookup_on_a_new_connection(pg_url: str, monkeypatch: Any):
    looked_up: list[list[int]] = []
    original = asyncpg.Connection._introspect_types

    async def spy(self: asyncpg.Connection, oids: Any, timeout: Any) -> Any:
        looked_up.append(list(oids))
        return await original(self, oids, timeout)

    monkeypatch.setattr(asyncpg.Connection, "_introspect_types", spy)
    async with await open_store(pg_url) as store:
        info = await store.create_session("triage", first=[Message(role="customer", text="charged twice", agent="triage")])
        sid = info.id
        usage = {"usage": {"input_tokens": 120, "output_tokens": 30}}
        await store.append(sid, [Handoff(from_agent="triage", to_agent="billing", reason="billing", agent="triage", meta=usage)])
        lease = store.turn(sid)
        start = await lease.try_start(20)
        assert start is not None
        await store.append(sid, [
            ToolCall(call_id="c1", name="find_charges", arguments={"email": "dana@example.com"}, agent="billing", meta=usage),
            ToolResult(call_id="c1", name="find_charges", output="no charges", agent="billing"),
        ], fence=lease.token)
        await store.append(sid, [Message(role="agent", text="I found two charges.", agent="billing", meta=usage)], release=lease)
        await store.set_status(sid, "resolved")  # the session's share moves: roll-up rows emptied and dropped
        await store.append(sid, [Message(role="customer", text="one more thing", agent="billing")])
        assert [i.seq for i in await store.items_at(sid, [2, 4, 99])] == [2, 4]
    assert looked_up == [], f"asyncpg looked up types {looked_up}: an array parameter that is not text[]"
    # What the casts carried arrived as numbers: the usage totals, the roll-up's tallies.
    conn = await asyncpg.connect(pg_url)
    try:
        assert tuple(await conn.fetchrow(
            "SELECT agent, input_tokens, output_tokens FROM usage_totals WHERE session_id = $1 AND agent = 'billing'", sid
        )) == ("billing", 240, 60)
        assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n < 0") == 0
        assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n > 0") > 0
    finally:
        await conn.close()


async def test_the_notify_carries_the_documents_a_read_of_the_log_gives(pg_url: str):
    """The append's NOTIFY documents are made by the writer, not by the server (issue 34: building
    them in SQL was most of the server's time executing an append). They must be the very text a
    read of the log gives (the follower keeps its parse of each for its own reads): quotes,
    control characters, non-ASCII, meta or none, a time with trailing zeros in its fraction or
    none, and over the size limit no documents at all."""
    from datetime import datetime, timezone

    from supportdesk.store import postgres as pg

    # No document is built by the statement any more: the payload is the writer's parameter.
    for sql in (pg.SQL_APPEND, pg.SQL_APPEND_KEPT, pg.SQL_APPEND_KEPT_FENCED, pg.SQL_APPEND_KEPT_RELEASE):
        assert "to_json" not in sql and "string_agg" not in sql

    heard: asyncio.Queue[str] = asyncio.Queue()
    listener = await asyncpg.connect(pg_url)
    await listener.add_listener(pg.CHANNEL, lambda *args: heard.put_nowait(args[3]))
    try:
        async with await open_store(pg_url) as store:
            sid = (await store.create_session("triage")).id
            times = iter([
                datetime(2026, 3, 1, 9, 30, 5, 56600, tzinfo=timezone.utc),
                datetime(2026, 3, 1, 9, 30, 6, tzinfo=timezone.utc),
                datetime(2026, 3, 1, 9, 30, 7, 1, tzinfo=timezone.utc),
                datetime(2026, 3, 1, 9, 30, 8, 120000, tzinfo=timezone.utc),
            ])
            store.clock = lambda: next(times)
            await store.append(sid, [
                Message(role="customer", text='a "quote", a \\ back\\slash, \x01\x7f é ü 中文 / tab\there\nnew line', agent="triage"),
                Message(role="agent", text="noted", agent="triage", meta={"usage": {"input_tokens": 3}, "ünï": "cödé"}),
            ])
            await store.append(sid, [Handoff(from_agent="triage", to_agent="billing", reason="", agent="triage")])
            await store.append(sid, [ToolCall(call_id="c", name="find_charges", arguments={"e": "x\u2028y"}, agent="billing")])
            await store.append(sid, [Message(role="agent", text="x" * 8000, agent="billing")])  # over the limit
            conn = await asyncpg.connect(pg_url)
            try:
                await conn.execute("SET timezone = 'UTC'")
                stored = [r[0] for r in await conn.fetch(pg.SQL_RANGE, sid, 1, 99)]
            finally:
                await conn.close()
        said = [await asyncio.wait_for(heard.get(), 10) for _ in range(5)]  # the create's, then an append's each
        mine = [p for p in said if p.split("\n", 1)[0].split(" ", 2)[2] == sid and not p.startswith("0 ")]
        docs = [doc for payload in mine for doc in payload.split("\n")[1:]]
        assert [p.split("\n", 1)[0] for p in mine] == [f"2 0 {sid}", f"3 0 {sid}", f"4 0 {sid}", f"5 0 {sid}"]
        assert docs == stored[:4]  # textually, byte for byte
        assert "\n" not in mine[-1]  # the large item: the head alone, the follower reads it
    finally:
        await listener.close()


async def test_the_appends_connections_are_prepared_at_open_and_planned_generically_from_the_first_run(pg_url: str):
    """A worker pays a connection's start-up before it serves (issue 34): `bench_serve --pg`
    opened ~20 pooled connections during its load, each parsing the appends the first time
    (2-6 ms of server CPU) and planning each append afresh for its first five runs (0.85 ms)
    before keeping a generic plan (0.09 ms). The store's write connections are all open when
    `open_store` returns, every append statement already prepared on each, and say
    force_generic_plan, so the very first append runs a generic plan; the main pool's reads
    (the inbox's pages) are still planned for their parameters."""
    from supportdesk.store import postgres as pg

    async def on_every_write_connection(store: Any, sql: str, *args: Any) -> list[list[Any]]:
        pool = store._write_pool
        conns = [await pool.acquire() for _ in range(pg.WRITE_CONNECTIONS)]
        try:
            return [[tuple(r) for r in await conn.fetch(sql, *args)] for conn in conns]
        finally:
            for conn in conns:
                await pool.release(conn)

    texts = " ".join(" ".join(sql.split()) for sql in pg.WRITE_STATEMENTS)
    assert "LIMIT $" not in texts and "OFFSET" not in texts  # nothing a parameter's value should plan
    async with await open_store(pg_url) as store:
        assert store._write_pool.get_size() == pg.WRITE_CONNECTIONS  # all opened by open_store, none later
        prepared_at_open = await on_every_write_connection(store, "SELECT statement FROM pg_prepared_statements")
        assert len(prepared_at_open) == pg.WRITE_CONNECTIONS
        for rows in prepared_at_open:
            assert {" ".join(r[0].split()) for r in rows} >= {" ".join(sql.split()) for sql in pg.WRITE_STATEMENTS}
        modes = await on_every_write_connection(store, "SHOW plan_cache_mode")
        assert modes == [[("force_generic_plan",)]] * pg.WRITE_CONNECTIONS
        async with store._pool.acquire() as conn:
            assert await conn.fetchval("SHOW plan_cache_mode") == "auto"

        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="charged twice", agent="triage")])
        plans = await on_every_write_connection(
            store, "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", pg.SQL_APPEND_KEPT
        )
        assert sorted(p for rows in plans for p in rows) == [(0, 0)] * (pg.WRITE_CONNECTIONS - 1) + [(1, 0)], plans


async def test_warm_opens_the_main_pool_with_a_served_turns_reads_prepared_and_the_lease_connection(pg_url: str):
    """What `serve` calls before its first customer (issue 34): the main pool's SERVE_CONNECTIONS
    opened, each with the turn's reads (its start, the session, the head, windows, ranges)
    already parsed, and the turn lease's lock connection with its owner lock."""
    from supportdesk.store import postgres as pg

    async with await open_store(pg_url) as store:
        assert store._pool.get_size() < pg.SERVE_CONNECTIONS and store._lease_conn is None  # (a TUI opens few)
        await store.warm()
        assert store._pool.get_size() == pg.SERVE_CONNECTIONS
        assert store._lease_conn is not None and not store._lease_conn.is_closed()
        conns = [await store._pool.acquire() for _ in range(pg.SERVE_CONNECTIONS)]
        try:
            for conn in conns:
                prepared = {" ".join(r[0].split()) for r in await conn.fetch("SELECT statement FROM pg_prepared_statements")}
                assert prepared >= {" ".join(sql.split()) for sql in pg.READ_STATEMENTS}
                # The turn start's function already called once on this backend (compiled, planned).
                runs = await conn.fetchval(
                    "SELECT generic_plans + custom_plans FROM pg_prepared_statements WHERE statement = $1", pg.SQL_TAKE_TURN_START
                )
                assert runs == 1, runs
        finally:
            for conn in conns:
                await store._pool.release(conn)
        # Its claim was rolled back: no lease row left for anyone to wait on.
        async with store._pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM turn_leases") == 0
        # And no idle connection was left inside a transaction by its statements' parse (it
        # would hold its snapshot and table locks, and a transaction with an isolation level
        # could not begin on it).
        outside = await asyncpg.connect(pg_url)
        try:
            stuck = await outside.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'"
            )
        finally:
            await outside.close()
        assert stuck == 0
        for pool in (store._pool, store._write_pool):
            async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
                await conn.fetchval("SELECT 1")
