"""Group commit (issue 34 item 2): appends from many turns at once, several in one transaction.

A write that arrives while another is being committed joins the next group: one hop to
SQLite's thread and one commit for several sessions' appends. What callers are told does not
weaken: each append returns once its own items are committed, one session's items are never
reordered, and an append that fails (a lost lease, a copy already stored) fails alone, never
the group. PostgreSQL commits each append on its own (several connections of a pool); the
same contract holds there, so these run on both backends; the grouping itself is counted on
SQLite. The crash and SIGKILL tests in test_store_turns.py run over the same writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from supportdesk.items import Message
from supportdesk.store import LeaseLost, StoreError, open_store

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def grouped(store) -> int:
    """How many groups of two or more writes the store committed (SQLite; PostgreSQL: none)."""
    return getattr(store, "groups_committed", 0)


@contextlib.asynccontextmanager
async def writes_held(store) -> AsyncIterator[None]:
    """On SQLite: the connection's thread kept busy, so the writes made meanwhile queue up and
    are committed as one group when it lets go (on PostgreSQL: nothing held)."""
    if not hasattr(store, "groups_committed"):
        yield
        return
    started, go = threading.Event(), threading.Event()

    def hold(conn) -> None:
        started.set()
        go.wait(30)

    holder = asyncio.ensure_future(store._run(hold))
    await asyncio.to_thread(started.wait, 30)
    try:
        yield
    finally:
        go.set()
        await holder


async def queued(store, writes: list) -> list[asyncio.Task]:
    """Start the writes; each runs up to its hop to the store (its write queued on SQLite)."""
    tasks = [asyncio.ensure_future(w) for w in writes]
    await asyncio.sleep(0)  # one pass of the loop: every task runs to its first wait
    if hasattr(store, "groups_committed"):
        assert len(store._queued) == len(tasks)
    return tasks


async def test_many_sessions_appending_at_once_keep_each_sessions_order_and_lose_nothing(where: str):
    sessions, turns = 24, 8
    async with await open_store(where) as store:
        sids = [(await store.create_session("triage")).id for _ in range(sessions)]

        async def conversation(sid: str) -> list[int]:
            seqs = []
            for n in range(turns):
                # One append after the other, as a turn makes them; each awaited before the next.
                stored = await store.append(sid, [
                    Message(role="customer", text=f"{sid} asks {n}"),
                    Message(role="agent", text=f"{sid} answers {n}", agent="triage"),
                ])
                seqs += [item.seq for item in stored]
            return seqs

        told = await asyncio.gather(*(conversation(sid) for sid in sids))  # whatever groups form
        for sid, seqs in zip(sids, told):
            assert seqs == list(range(1, 2 * turns + 1))  # what each caller was told
            log = await store.range(sid, 1, 2 * turns)
            assert [i.text for i in log] == [t for n in range(turns) for t in (f"{sid} asks {n}", f"{sid} answers {n}")]
            assert [i.seq for i in log] == seqs
            info = await store.get_session(sid)
            assert info is not None and info.item_count == 2 * turns
    async with await open_store(where) as again:  # committed: another connection reads it all
        for sid in sids:
            assert len(await again.range(sid, 1, 2 * turns)) == 2 * turns


async def test_an_append_that_fails_in_a_group_fails_alone(where: str):
    """A fenced append whose lease is gone and a duplicate delivery, queued among good appends
    to other sessions: those two raise, nothing of theirs is stored, and every other append of
    the same moment is stored and told so."""
    async with await open_store(where) as store:
        sids = [(await store.create_session("triage")).id for _ in range(6)]
        fenced, duplicated = sids[2], sids[4]
        await store.append(duplicated, [Message(role="customer", text="first copy", meta={"external_id": "m-1"})])

        def good(sid: str):
            return store.append(sid, [Message(role="customer", text=f"hello from {sid}")])

        async with writes_held(store):
            tasks = await queued(store, [
                good(sids[0]),
                good(sids[1]),
                store.append(fenced, [Message(role="agent", text="late", agent="triage")], fence="a-lease-long-gone"),
                good(sids[3]),
                store.append(duplicated, [Message(role="customer", text="second copy", meta={"external_id": "m-1"})]),
                good(sids[5]),
            ])
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(outcomes[2], LeaseLost)
        assert isinstance(outcomes[4], StoreError) and not isinstance(outcomes[4], LeaseLost)
        for n in (0, 1, 3, 5):
            assert not isinstance(outcomes[n], BaseException), outcomes[n]
            assert [i.text for i in outcomes[n]] == [f"hello from {sids[n]}"]
            assert [i.text for i in await store.latest(sids[n], 5)] == [f"hello from {sids[n]}"]
        assert await store.latest(fenced, 5) == []
        assert [i.text for i in await store.latest(duplicated, 5)] == ["first copy"]
        if "postgres" not in where:
            assert grouped(store) == 1  # all six were one transaction
        # The store goes on: the next appends to the same sessions are stored in order.
        assert (await store.append(fenced, [Message(role="customer", text="again")]))[0].seq == 1
        assert (await store.append(sids[0], [Message(role="customer", text="again")]))[0].seq == 2


async def test_a_group_commits_once_for_all_its_appends(tmp_path: Path):
    """The point of grouping: appends queued while the connection's thread is busy are
    committed in one transaction, not one each."""
    async with await open_store(tmp_path / "desk.db") as store:
        sids = [(await store.create_session("triage")).id for _ in range(10)]
        commits: list[str] = []
        await store._run(lambda conn: conn.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None))
        async with writes_held(store):
            tasks = await queued(store, [store.append(sid, [Message(role="customer", text="hi")]) for sid in sids])
        told = await asyncio.gather(*tasks)
        await store._run(lambda conn: conn.set_trace_callback(None))
        assert len(commits) == 1, commits  # ten appends, one transaction
        assert store.groups_committed == 1
        assert [[i.seq for i in stored] for stored in told] == [[1]] * len(sids)
        assert [len(await store.latest(sid, 5)) for sid in sids] == [1] * len(sids)
        # Alone, a write still commits alone.
        await store.append(sids[0], [Message(role="customer", text="again")])
        assert store.groups_committed == 1
