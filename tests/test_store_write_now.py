"""Small appends on the caller's thread, and when they take the hop (issue 34, the
4-writer row of `benchmarks/bench_store.py`).

A one-item append spent more time in the hop to the connection's thread (two thread switches)
than in SQLite; when that thread is idle and the write lock is free, `SessionStore._write_now`
commits on the caller's thread instead: the same transaction, tried once without the busy
handler. A writer that finds the lock taken, or finds that another connection wrote since its last
try, goes the usual way (the hop, SQLite's busy handler)."""

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


async def test_an_append_that_meets_another_writers_lock_waits_for_it_and_is_stored_once(db_path: Path) -> None:
    """Another connection holds the write lock: the append's one try on the caller's thread fails,
    and it waits on the connection's thread (SQLite's busy handler) until the lock is let go; the
    holder lets go once it has seen that second try. Stored once, and the busy timeout is back."""
    async with await SessionStore.open(db_path, busy_timeout_ms=8000) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="first")])
        begins: list[str] = []
        waiting, holding = threading.Event(), threading.Event()

        def trace(sql: str) -> None:
            if sql == "BEGIN IMMEDIATE":
                begins.append(sql)
                if len(begins) >= 2:  # the try on the caller's thread, then the connection's
                    waiting.set()

        await store._run(lambda conn: conn.set_trace_callback(trace))
        now_before = store.writes_now

        def hold() -> None:
            other = sqlite3.connect(db_path, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")
                holding.set()
                waiting.wait(5)
                other.execute("COMMIT")
            finally:
                other.close()

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert await asyncio.to_thread(holding.wait, 5)
            stored = await store.append(sid, [Message(role="agent", text="second", agent="triage")])
        finally:
            waiting.set()
            await asyncio.to_thread(holder.join, 5)
        await store._run(lambda conn: conn.set_trace_callback(None))
        assert [i.seq for i in stored] == [2]
        assert begins == ["BEGIN IMMEDIATE"] * 2 and store.writes_now == now_before  # tried once, then waited
        assert await store._run(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0]) == 8000
        assert [i.text for i in await store.latest(sid, 5)] == ["first", "second"]
        assert (await store.get_session(sid)).item_count == 2  # type: ignore[union-attr]


async def test_after_another_connection_wrote_the_append_takes_the_hop(db_path: Path) -> None:
    """Writers sharing the file wait in SQLite's busy handler alike: once another connection has
    written since this one's last try, the next append goes to the connection's thread (a writer
    skipping the hop between its appends kept the lock from the others, asleep in that handler)."""
    async with await SessionStore.open(db_path) as store, await SessionStore.open(db_path) as other:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="one")])
        assert store.writes_now == 1
        await other.append(sid, [Message(role="agent", text="two", agent="triage")])
        hops = _hops(store)
        stored = await store.append(sid, [Message(role="customer", text="three")])
        assert [i.seq for i in stored] == [3] and hops == ["hop"] and store.writes_now == 1
        stored = await store.append(sid, [Message(role="customer", text="four")])  # alone again
        assert [i.seq for i in stored] == [4] and hops == ["hop"] and store.writes_now == 2
        assert [i.text for i in await other.latest(sid, 5)] == ["one", "two", "three", "four"]


async def test_back_to_back_small_appends_read_only_the_data_version_outside_the_lock(db_path: Path) -> None:
    """Between two small appends on the caller's thread nothing else used the connection: the
    sync level read at the first still holds and the busy timeout stays off, so the next append
    runs one PRAGMA (`data_version`) before BEGIN and none after COMMIT (the 4 writers' loop)."""
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="first")])
        seen: list[str] = []
        await store._run(lambda conn: conn.set_trace_callback(seen.append))
        await store.append(sid, [Message(role="agent", text="after a hop", agent="triage")])
        first = list(seen)
        seen.clear()
        for n in range(5):
            await store.append(sid, [Message(role="agent", text=f"answer {n}", agent="triage")])
        five = list(seen)
        await store._run(lambda conn: conn.set_trace_callback(None))
        assert seen[len(five) :] == ["PRAGMA busy_timeout = 10000"]  # the next hop puts it back first
        assert store.writes_now == 7
    # After a hop: the sync level read again and the timeout switched off once.
    assert [s for s in first if s.startswith("PRAGMA")] == [
        "PRAGMA synchronous", "PRAGMA data_version", "PRAGMA busy_timeout = 0"
    ]
    assert [s for s in five if s.startswith("PRAGMA")] == ["PRAGMA data_version"] * 5
    assert five.count("BEGIN IMMEDIATE") == five.count("COMMIT") == 5


async def test_a_hop_after_small_appends_waits_for_locks_again(db_path: Path) -> None:
    """The busy timeout `_write_now` left off is back before a hop runs anything: a read or a
    write on the connection's thread waits for another process's lock instead of failing at once."""
    async with await SessionStore.open(db_path, busy_timeout_ms=7000) as store:
        sid = (await store.create_session("triage")).id
        for n in range(3):
            await store.append(sid, [Message(role="customer", text=f"line {n}")])
        assert store.writes_now == 3
        assert await store._run(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0]) == 7000


async def test_a_sync_level_set_between_small_appends_is_seen_by_the_next(db_path: Path) -> None:
    """The sync level is read once for back-to-back small appends, but any hop forgets it: set to
    FULL between two appends, the next one's commit (a sync) stays off the caller's thread."""
    async with await SessionStore.open(db_path) as store:
        sid = (await store.create_session("triage")).id
        await store.append(sid, [Message(role="customer", text="one")])
        await store.append(sid, [Message(role="customer", text="two")])
        assert store.writes_now == 2
        await store._run(lambda conn: conn.execute("PRAGMA synchronous = FULL"))
        hops = _hops(store)
        stored = await store.append(sid, [Message(role="customer", text="three")])
        assert [i.seq for i in stored] == [3] and hops == ["hop"] and store.writes_now == 2
