"""The store contract's turn lease as a turn uses it (issue 34 item 1), on both adapters.

A turn takes its lease with its one read (`TurnLease.try_start`: one hop to SQLite's thread, one
statement on PostgreSQL) and gives it back with its last append (`Store.append(release=)`), so a
turn costs steps + 2 round trips. The protections stay: the append that gives it back is fenced
(refused, nothing written, when another holder took the session), the next holder's read holds
what the last append stored, and a lease given back is free at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from supportdesk.items import ContextSet, Message
from supportdesk.store import LeaseLost, Store, open_store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request, tmp_path: Path) -> str:
    return str(tmp_path / "desk.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")


def customer(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


def reply(text: str) -> Message:
    return Message(role="agent", text=text, agent="triage")


async def test_the_lease_taken_with_the_turn_start_reads_what_turn_start_reads(where: str):
    async with await open_store(where) as store:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        await store.append(sid, [ContextSet(key="plan", value="pro", writer="triage", agent="triage")])
        lease = store.turn(sid)
        start = await lease.try_start(10)
        assert start is not None and lease.token is not None
        plain = await store.turn_start(sid, 10)
        assert (start.session, start.items, start.context, start.holder) == (plain.session, plain.items, plain.context, plain.holder)
        assert [i.seq for i in start.items] == [1, 2] and start.context["plan"].value == "pro"
        other = store.turn(sid)
        assert await other.try_start(10) is None and other.token is None, "one holder at a time"
        held = await lease.try_start(1)  # a lease already held just reads
        assert held is not None and [i.seq for i in held.items] == [2]
        await lease.release()
        again = await other.start(10)
        assert other.token is not None and [i.seq for i in again.items] == [1, 2]
        await other.release()

        nobody = store.turn("no-such-session")
        missing = await nobody.try_start(5)
        assert missing is not None and missing.session is None and missing.items == []
        await nobody.release()


async def test_try_start_is_one_round_trip(where: str):
    """One write transaction in one hop to SQLite's thread; one statement on PostgreSQL (its
    lock connection's owner lock is taken once per store, before)."""
    async with await open_store(where) as store:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        calls: list[str] = []
        if where.startswith("postgresql"):
            await store._owner()  # type: ignore[attr-defined]
            pool = store._pool  # type: ignore[attr-defined]
            store._pool = _Counting(pool, calls)  # type: ignore[attr-defined]
            lease_conn = store._lease_conn  # type: ignore[attr-defined]
            store._lease_conn = _Counting(lease_conn, calls)  # type: ignore[attr-defined]
        else:
            real = store._run  # type: ignore[attr-defined]

            async def counted(*args: Any, **kwargs: Any) -> Any:
                calls.append("hop")
                return await real(*args, **kwargs)

            store._run = counted  # type: ignore[attr-defined]
        lease = store.turn(sid)
        start = await lease.try_start(10)
        assert start is not None and [i.seq for i in start.items] == [1]
        assert len(calls) == 1, calls
        calls.clear()
        now_before = getattr(store, "writes_now", 0)
        [answer] = await store.append(sid, [reply("hello")], release=lease)
        assert lease.token is None and answer.seq == 2
        if not where.startswith("postgresql"):
            # The answer and the lease's release: one transaction, in one hop or none (committed
            # on the caller's thread: `SessionStore._write_now`).
            assert len(calls) + store.writes_now - now_before == 1, calls


class _Counting:
    def __init__(self, inner: Any, calls: list[str]):
        self._inner, self._calls = inner, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name in ("fetch", "fetchval", "fetchrow", "execute", "acquire"):
            self._calls.append(name)
        return attr

    def is_closed(self) -> bool:
        return bool(self._inner.is_closed())


async def test_the_last_append_gives_the_lease_back_in_its_own_transaction(where: str):
    async with await open_store(where) as store:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        lease = store.turn(sid)
        assert await lease.try_start(10) is not None
        token = lease.token
        stored = await store.append(sid, [reply("hello")], release=lease)
        assert [i.seq for i in stored] == [2] and lease.token is None
        follower = store.turn(sid)
        start = await follower.try_start(10)  # free at once, and the read holds the last append
        assert start is not None and [i.seq for i in start.items] == [1, 2]
        with pytest.raises(LeaseLost):  # the token the release gave up fences nothing any more
            await store.append(sid, [reply("late")], fence=token)
        with pytest.raises(LeaseLost):  # nor can a lease no longer held be given back again
            await store.append(sid, [reply("late")], release=lease)
        assert await store.last_seq(sid) == 2
        await follower.release()


async def test_an_append_that_gives_back_a_lease_another_holder_took_is_refused(where: str):
    """The release is fenced: a holder that paused past its lease neither writes its last
    append nor removes the lease of the holder that took the session meanwhile."""
    async with await open_store(where) as first_store, await open_store(where) as second_store:
        first_store.lease_ttl = second_store.lease_ttl = 0.5  # type: ignore[attr-defined]
        sid = (await first_store.create_session("triage", first=[customer("hi")])).id
        first = first_store.turn(sid)
        assert await first.try_start(10) is not None
        first._renewing.cancel()  # type: ignore[attr-defined]  # the holder froze: no more renewals
        second = second_store.turn(sid)
        start = await second.start(10)
        assert second.waited > 0 and [i.seq for i in start.items] == [1]
        with pytest.raises(LeaseLost):
            await first_store.append(sid, [reply("late")], release=first)
        assert await first_store.last_seq(sid) == 1, "nothing of the refused append was written"
        assert await second_store.append(sid, [reply("mine")], fence=second.token)  # still the second's lease
        await first.release()  # (the runner's turn ends so: it removes no other holder's lease)
        third = first_store.turn(sid)
        assert await third.try_start(10) is None, "the refused release left the second holder's lease"
        await second_store.append(sid, [reply("done")], release=second)
        assert await third.try_start(10) is not None
        await third.release()


@pytest.mark.postgres
async def test_a_postgresql_turn_taken_as_the_last_holder_gives_it_back_reads_its_last_append(pg_url: str):
    """The next holder's claim waits for the transaction that gives the lease back, and its read
    runs after the claim (migration 9's function), so it sees that transaction's items: a read
    in the claim's own statement would see the log as of before it waited."""
    import asyncpg

    async with await open_store(pg_url) as store, await open_store(pg_url) as other:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        lease = store.turn(sid)
        assert await lease.try_start(10) is not None
        holder = lease.token
        # The last append, held open: the lease row deleted and the session moved, not committed.
        last = await asyncpg.connect(pg_url)
        watch = await asyncpg.connect(pg_url)
        try:
            tx = last.transaction()
            await tx.start()
            await last.execute("DELETE FROM turn_leases WHERE session_id = $1 AND holder = $2", sid, holder)
            await last.execute("UPDATE sessions SET title = 'stored by the last append' WHERE id = $1", sid)
            follower = other.turn(sid)  # (another process, as far as the lease knows)
            taking = asyncio.create_task(follower.try_start(10))
            async with asyncio.timeout(10):  # the claim waits for the open transaction's row lock
                while not await watch.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                ):
                    assert not taking.done(), "the claim did not wait for the transaction giving the lease back"
                    await asyncio.sleep(0.01)
            await tx.commit()
            start = await asyncio.wait_for(taking, 10)
            assert start is not None and start.session is not None
            assert start.session.title == "stored by the last append"
            await follower.release()
        finally:
            await last.close()
            await watch.close()
        lease.let_go()


class _CountingPool:
    """A pool whose connections count the statements sent on them."""

    def __init__(self, pool: Any, calls: list[str]):
        self._pool, self._calls = pool, calls

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def acquire(self) -> Any:
        pool, calls = self._pool, self._calls

        class Acquired:
            async def __aenter__(self) -> Any:
                self._cm = pool.acquire()
                return _Counting(await self._cm.__aenter__(), calls)

            async def __aexit__(self, *exc: Any) -> Any:
                return await self._cm.__aexit__(*exc)

        return Acquired()


@pytest.mark.postgres
async def test_a_postgresql_append_is_one_statement_fenced_or_not(pg_url: str):
    """The process that made the last append knows where the session stands: the next append is
    one statement on its own (no BEGIN, no read, no COMMIT) that checks that and the lease and
    writes the items, the session's row with its share of the figures and the roll-up rows that
    share moves. Every step of every turn appends, so each of those was a round trip a step.
    When the row moved (another process appended), the append reads it first, in a transaction."""
    async with await open_store(pg_url) as store, await open_store(pg_url) as other:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        calls: list[str] = []
        store._pool = _CountingPool(store._pool, calls)  # type: ignore[attr-defined]
        store._write_pool = _CountingPool(store._write_pool, calls)  # type: ignore[attr-defined]
        await store.append(sid, [reply("warm")])  # (the figures' first rows for this session)
        calls.clear()
        await store.append(sid, [reply("unfenced")])
        unfenced = list(calls)
        assert unfenced == ["fetch"], unfenced
        lease = store.turn(sid)
        assert await lease.try_start(10) is not None
        calls.clear()
        await store.append(sid, [reply("fenced")], fence=lease.token)
        assert calls == unfenced, (calls, unfenced)
        await other.append(sid, [customer("meanwhile, from another worker")])
        calls.clear()
        await store.append(sid, [reply("after the other")], fence=lease.token)
        # the guarded statement wrote nothing; then (in a transaction) the locked read, the append
        assert calls == ["fetch", "fetchrow", "fetch"], calls
        calls.clear()
        await store.append(sid, [reply("last")], release=lease)
        assert calls == unfenced and lease.token is None, (calls, unfenced)
        assert [i.text for i in await store.latest(sid, 5)] == [
            "unfenced", "fenced", "meanwhile, from another worker", "after the other", "last"
        ]
        assert [i.seq for i in await store.latest(sid, 7)] == list(range(1, 8))
