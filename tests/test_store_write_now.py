"""Small appends on the caller's thread, and the write lock waited for by polling (issue 34, the
4-writer row of `benchmarks/bench_store.py`).

A one-item append spent more time in the hop to the connection's thread (two thread switches)
than in SQLite; when that thread is idle and the write lock is free, `SessionStore._write_now`
commits on the caller's thread instead: the same transaction, tried once without the busy
handler. A writer that finds the lock taken goes the usual way, where `_begin_immediate` tries
again every `LOCK_POLL_S` instead of sleeping SQLite's 1, 2, 5, 10 ... ms steps."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

from supportdesk.items import Message
from supportdesk.store.sessions import APPEND_NOW_MOST, SessionStore


def _hops(store: SessionStore) -> list[str]:
    """Count the store's hops to its connection's thread from now on."""
    calls: list[str] = []
    real = store._run

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append("hop")
        return await real(*args, **kwargs)

    store._run = counted  # type: ignore[method-assign]
    return calls


async def test_a_small_append_commits_without_a_hop_and_a_big_one_takes_it(db_path: Path) -> None:
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        hops = _hops(store)
        stored = await store.append(sid, [Message(role="customer", text="my card was charged twice")])
        assert [i.seq for i in stored] == [1]
        assert hops == [] and store.writes_now == 1  # committed on this thread
        big = [Message(role="agent", text=f"line {n}", agent="triage") for n in range(APPEND_NOW_MOST + 1)]
        stored = await store.append(sid, big)
        assert [i.seq for i in stored] == list(range(2, APPEND_NOW_MOST + 3))
        assert hops == ["hop"] and store.writes_now == 1  # a big append never holds the event loop
    # Committed: another connection reads every item, once, in order.
    with sqlite3.connect(db_path) as other:
        seqs = [r[0] for r in other.execute("SELECT seq FROM items WHERE session_id = ? ORDER BY seq", (sid,))]
        (count,) = other.execute("SELECT item_count FROM sessions WHERE id = ?", (sid,)).fetchone()
    assert seqs == list(range(1, APPEND_NOW_MOST + 3)) and count == len(seqs)


async def test_a_commit_that_syncs_never_runs_on_the_callers_thread(db_path: Path) -> None:
    """At synchronous=FULL every commit waits for the disk: that wait stays off the event loop."""
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        await store._run(lambda conn: conn.execute("PRAGMA synchronous = FULL"))
        hops = _hops(store)
        stored = await store.append(sid, [Message(role="customer", text="hello")])
        assert [i.seq for i in stored] == [1]
        assert hops == ["hop"] and store.writes_now == 0


async def test_an_append_that_meets_another_writers_lock_polls_for_it_and_is_stored_once(db_path: Path) -> None:
    """Another connection holds the write lock: the append's one try on the caller's thread fails,
    it goes to the connection's thread and tries again there until the lock is let go (traced as
    a BEGIN IMMEDIATE per try: SQLite's own busy handler retries inside one). The holder lets go
    only once it has seen that second try on the connection's thread, so without the polling it
    would wait its 5 s out and the count below fails."""
    async with await SessionStore.open(db_path, busy_timeout_ms=8000) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="first")])
        begins: list[str] = []
        polled, holding = threading.Event(), threading.Event()

        def trace(sql: str) -> None:
            if sql == "BEGIN IMMEDIATE":
                begins.append(sql)
                if len(begins) >= 3:  # the try on the caller's thread, then two on the connection's
                    polled.set()

        await store._run(lambda conn: conn.set_trace_callback(trace))

        def hold() -> None:
            other = sqlite3.connect(db_path, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")
                holding.set()
                polled.wait(5)
                other.execute("COMMIT")
            finally:
                other.close()

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert await asyncio.to_thread(holding.wait, 5)
            stored = await store.append(sid, [Message(role="agent", text="second", agent="triage")])
        finally:
            polled.set()
            await asyncio.to_thread(holder.join, 5)
        await store._run(lambda conn: conn.set_trace_callback(None))
        assert [i.seq for i in stored] == [2]
        assert len(begins) >= 3, begins  # polled: not one long sleep in SQLite's busy handler
        assert await store._run(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0]) == 8000
        assert [i.text for i in await store.latest(sid, 5)] == ["first", "second"]
        assert (await store.get_session(sid)).item_count == 2  # type: ignore[union-attr]
