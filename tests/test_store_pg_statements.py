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
