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

import collections.abc
import dataclasses
import sys
from typing import Any

import asyncpg
import pytest

from supportdesk.items import ContextSet, Handoff, Message, ToolCall, ToolResult
from supportdesk.store import open_store
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


async def test_an_append_drops_roll_up_rows_only_when_it_left_one_empty(pg_url: str, monkeypatch: Any):
    """A session first answered moves its share out of the roll-up's rows for unanswered
    sessions. The drop of emptied rows was a statement of its own every time (issue 34: 50 of a
    `bench_serve --pg` run's ~900, one a conversation), though the rows it leaves usually still
    count other sessions. The append says whether a row it moved is now empty; only then is the
    drop sent, and the emptied row is still taken out."""
    sent: list[str] = []
    original = asyncpg.connection.Connection._do_execute

    async def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(" ".join(str(query).split()))
        return await original(self, query, *args, **kwargs)

    async with await open_store(pg_url) as store:
        first = [Message(role="customer", text="charged twice", agent="billing")]
        one = (await store.create_session("billing", first=first)).id
        two = (await store.create_session("billing", first=first)).id
        answer = [Message(role="agent", text="I found two charges.", agent="billing")]
        monkeypatch.setattr(asyncpg.connection.Connection, "_do_execute", counted)
        await store.append(one, answer)  # the rows it moved out of still hold `two`
        drops_while_held = [q for q in sent if q.startswith("DELETE FROM figure_rollup")]
        assert sent and not drops_while_held, sent
        await store.append(two, answer)  # the last session out of those rows: they are empty
        assert len([q for q in sent if q.startswith("DELETE FROM figure_rollup")]) == 1, sent
        monkeypatch.undo()
        conn = await asyncpg.connect(pg_url)
        try:
            assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n <= 0") == 0
            assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n > 0") > 0
        finally:
            await conn.close()
