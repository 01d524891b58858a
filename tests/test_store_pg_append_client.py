"""What a PostgreSQL append costs its worker before the statement leaves (issue 34, the
per-append client work on the event loop).

Two costs are kept off it, each tested here on a real database:

- asyncpg checks every element of an array parameter against three abstract base classes before
  encoding it (about 90 checks an append of three items). A column of the append's unnest that
  would hold only NULLs (metas, context keys, search words, the token usage, the roll-up rows of
  an append that moves none: most appends) is sent as one NULL, which unnest pads like an array
  of NULLs; the items and figures stored are the same.
- The fold stamps the items (session, seq, time) to advance the kept summaries; the append
  returns those very items when its statement lands on the head the fold started from, instead
  of stamping them a second time.
"""

from __future__ import annotations

import asyncio
import collections.abc
import dataclasses
import sys
from typing import Any

import asyncpg
import pytest

from supportdesk.items import ContextSet, Handoff, Message, ToolCall, ToolResult
from supportdesk.store import StoreError, open_store
from supportdesk.store import postgres

pytestmark = pytest.mark.postgres


def _counting_checks(monkeypatch: Any) -> list[int]:
    """asyncpg's checks of a parameter against collections.abc's Iterable (made while it encodes
    a statement's parameters, under its `_do_execute`), counted."""
    seen = [0]
    abc_type = type(collections.abc.Iterable)
    original = abc_type.__instancecheck__

    def counted(cls: Any, instance: Any) -> bool:
        if cls is collections.abc.Iterable and "asyncpg" in sys._getframe(1).f_code.co_filename:
            seen[0] += 1
        return original(cls, instance)

    monkeypatch.setattr(abc_type, "__instancecheck__", counted)
    return seen


async def test_an_append_sends_a_column_of_nothing_but_nulls_as_one_null_and_stores_the_same(pg_url: str, monkeypatch: Any):
    async with await open_store(pg_url) as store:
        assert isinstance(store, postgres.PostgresStore)
        info = await store.create_session("billing", first=[Message(role="customer", text="charged twice", agent="billing")])
        sid = info.id
        plain = [
            ToolCall(call_id="c1", name="find_charges", arguments={"email": "dana@example.com"}, agent="billing"),
            ToolResult(call_id="c1", name="find_charges", output="two charges", agent="billing"),
        ]
        args = store._append_args(sid, plain, store.clock())
        # metas, keys, words, and the 4 usage columns: all NULL for these items
        assert args[9:16] == (None,) * 7, args[9:16]
        answer = Message(role="agent", text="I found two charges.", agent="billing")
        await store.append(sid, [*plain, answer])  # (answered: the session's share moves in the roll-up)
        checks = _counting_checks(monkeypatch)
        # The same again: the guarded statement (the kept state is the store's), no roll-up row moves.
        await store.append(sid, [*plain, answer])
        # kinds, agents, bodies and the message's words: 4 arrays, 3 elements each; with every
        # column sent as an array (10 for the items and usage, 11 for the roll-up) it was 45
        assert checks[0] <= 16, checks[0]
        monkeypatch.undo()
        # Columns that hold something still go as arrays, next to NULL ones, and line up by item.
        usage = {"usage": {"input_tokens": 7, "output_tokens": 3}}
        stored = await store.append(sid, [
            Handoff(from_agent="billing", to_agent="account", reason="login", agent="billing", meta=usage),
            ContextSet(key="plan", value="pro", writer="account", agent="account"),
            Message(role="agent", text="Over to account.", agent="account"),
        ])
        back = await store.range(sid, 1, stored[-1].seq)
        assert [i.kind for i in back] == ["message", *(["tool_call", "tool_result", "message"] * 2),
                                         "handoff", "context_set", "message"]
        assert back[7].meta == usage and back[8].meta == {} and back[9].meta == {}
        assert {k: e.value for k, e in (await store.context_at(sid)).items()} == {"plan": "pro"}
        assert [h.seq for h in await store.search("Over to account")] == [10]
        assert (await store.get_session(sid)).active_agent == "account"
    conn = await asyncpg.connect(pg_url)
    try:
        assert tuple(await conn.fetchrow(
            "SELECT input_tokens, output_tokens FROM usage_totals WHERE session_id = $1 AND agent = 'billing'", sid
        )) == (7, 3)
        assert await conn.fetchval("SELECT count(*) FROM context_keys WHERE session_id = $1", sid) == 1
        assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n < 0") == 0
    finally:
        await conn.close()


async def test_an_append_returns_the_items_its_fold_stamped_not_a_second_stamping(pg_url: str, monkeypatch: Any):
    replaced: list[object] = []
    original = dataclasses.replace

    def counting(obj: Any, /, **changes: Any) -> Any:
        replaced.append(obj)
        return original(obj, **changes)

    monkeypatch.setattr(postgres, "replace", counting)
    async with await open_store(pg_url) as store:
        info = await store.create_session("billing", first=[Message(role="customer", text="charged twice", agent="billing")])
        items = [
            ToolCall(call_id="c1", name="find_charges", arguments={"email": "dana@example.com"}, agent="billing"),
            ToolResult(call_id="c1", name="find_charges", output="two charges", agent="billing"),
            Message(role="agent", text="I found two charges.", agent="billing"),
        ]
        for path in ("guarded", "locked"):
            if path == "locked":
                store._kept.clear()  # the transaction that reads the row first
            replaced.clear()
            stored = await store.append(info.id, items)
            assert len(replaced) == len(items), (path, len(replaced))
            head = 1 if path == "guarded" else 4
            assert [(i.session_id, i.seq) for i in stored] == [(info.id, head + n) for n in (1, 2, 3)]
            assert len({i.created_at for i in stored}) == 1
            assert [i.text for i in await store.range(info.id, head + 1, head + 3) if i.kind == "message"] == ["I found two charges."]


async def test_appends_keep_their_connection_between_them_and_never_starve_a_waiting_append(pg_url: str, monkeypatch: Any):
    """Lever (c) of issue 34's profile: an append takes a connection this store kept from its last
    clean append, not the pool's acquire and release each time; more appends at once than the
    appends' pool holds all finish (a waiter is woken by a connection given back to the pool);
    a failed append's connection goes back to the pool; closing the store returns the kept ones."""
    store = await open_store(pg_url)
    assert isinstance(store, postgres.PostgresStore)
    try:
        acquired = [0]
        original = asyncpg.pool.Pool.acquire
        appends_pool = store._write_pool

        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            acquired[0] += self is appends_pool
            return original(self, *args, **kwargs)

        monkeypatch.setattr(asyncpg.pool.Pool, "acquire", counting)
        sessions = [
            (await store.create_session("billing", first=[Message(role="customer", text=f"hi {n}", agent="billing")])).id
            for n in range(3 * postgres.WRITE_CONNECTIONS)
        ]
        await store.append(sessions[0], [Message(role="agent", text="hello", agent="billing")])
        before = acquired[0]
        for n in range(5):
            await store.append(sessions[0], [Message(role="agent", text=f"again {n}", agent="billing")])
        assert acquired[0] == before, "each append acquired a connection from the pool"
        # All at once: more than the pool's connections; every one stored, none left waiting.
        stored = await asyncio.wait_for(asyncio.gather(*(
            store.append(sid, [Message(role="agent", text="at once", agent="billing")]) for sid in sessions
        )), 20)
        assert [s[0].seq for s in stored] == [8] + [2] * (len(sessions) - 1)
        assert 1 <= len(store._writers_idle) <= postgres.WRITE_CONNECTIONS
        assert store._writers_waiting == 0
        # A failed append (no such session) gives its connection back to the pool, not to the kept ones.
        kept = len(store._writers_idle)
        with pytest.raises(StoreError):
            await store.append("no-such-session", [Message(role="agent", text="lost", agent="billing")])
        assert len(store._writers_idle) == kept - 1
        await store.append(sessions[1], [Message(role="agent", text="after the failure", agent="billing")])
        assert [i.text for i in await store.latest(sessions[1], 1)] == ["after the failure"]
    finally:
        await asyncio.wait_for(store.close(), 10)  # (a kept connection not given back: the pool's close waits for it)
    assert store._writers_idle == []
