"""The PostgreSQL append as one statement (issue 34, worker CPU a message on PostgreSQL).

A store remembers where its own last append left each session and appends the next items with
one statement on its own (no BEGIN, no locked read, no COMMIT: four round trips became one),
guarded by what it remembers: the statement writes only if the session's row still holds exactly
that, and a turn's append only while the turn's lease is its own. Anything else (another worker
appended, a status moved the session's share, the lease was taken) and it writes nothing and the
append runs as the transaction that reads the row first. These tests move the row under a store
from a second store (its own pool: what another worker is) and check that what is kept is what
a fold of the whole log says, and that a lease taken away still fences.
"""

from __future__ import annotations

import asyncpg
import pytest

from supportdesk.items import Handoff, Message
from supportdesk.store import LeaseLost, StoreError, open_store
from supportdesk.store.core import fold_whole_log
from supportdesk.store.figure_summary import rollup_delta

pytestmark = pytest.mark.postgres


def customer(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


def reply(text: str, agent: str = "triage") -> Message:
    return Message(role="agent", text=text, agent=agent)


async def assert_kept_is_the_fold(url: str, sid: str) -> None:
    """The session's kept summaries and the roll-up (the only session's share) as a fold of its log."""
    async with await open_store(url) as fresh:
        info = await fresh.get_session(sid)
        assert info is not None
        items = await fresh.range(sid, 1, info.item_count)
    assert [i.seq for i in items] == list(range(1, info.item_count + 1))
    state, share, progress = fold_whole_log(info.entry_agent, info.created_at, info.status, 0, items)
    conn = await asyncpg.connect(url)
    try:
        row = await conn.fetchrow("SELECT desk_summary, figure_summary, sla_summary FROM sessions WHERE id = $1", sid)
        rollup = sorted(tuple(r) for r in await conn.fetch(
            "SELECT grain, lo, hi, what, a, b, c, n, x, y, z FROM figure_rollup WHERE n <> 0 OR x <> 0 OR y <> 0 OR z <> 0"))
    finally:
        await conn.close()
    assert row["desk_summary"] == state.to_json()
    assert row["figure_summary"] == share.to_json()
    assert row["sla_summary"] == progress.to_json()
    assert rollup == sorted(tuple(r) for r in rollup_delta(None, share))


async def test_an_append_after_another_worker_moved_the_session_folds_from_the_row(pg_url: str):
    async with await open_store(pg_url) as ours, await open_store(pg_url) as other:
        sid = (await ours.create_session("triage", first=[customer("I was charged twice")])).id
        await ours.append(sid, [reply("Let me look.")])
        await ours.append(sid, [reply("Still looking.")])
        await other.append(sid, [reply("From the other worker.")])  # ours now remembers a head behind
        assert ours._kept[sid].count == 3
        await ours.append(sid, [reply("Found it.")])
        await assert_kept_is_the_fold(pg_url, sid)
        await other.append(sid, [customer("and the other charge?")])
        await ours.append(sid, [reply("That one too.")])
        await assert_kept_is_the_fold(pg_url, sid)
        await other.set_status(sid, "waiting")  # the row's status and share move, not its head
        await ours.append(sid, [customer("ok")])
        await assert_kept_is_the_fold(pg_url, sid)
        await ours.append(sid, [reply("Done.")])  # (through the one statement)
        await assert_kept_is_the_fold(pg_url, sid)
        await other.set_status(sid, "resolved")
        await ours.append(sid, [Handoff(from_agent="triage", to_agent="billing", reason="money", agent="triage")])
        await ours.append(sid, [reply("You're welcome.", "billing")])
        await assert_kept_is_the_fold(pg_url, sid)


async def test_a_turn_whose_lease_was_taken_writes_nothing_through_the_one_statement(pg_url: str):
    async with await open_store(pg_url) as ours, await open_store(pg_url) as other:
        sid = (await ours.create_session("triage", first=[customer("hi")])).id
        lease = ours.turn(sid)
        assert await lease.try_start(10) is not None
        await ours.append(sid, [reply("one")], fence=lease.token)
        token = lease.token
        # The lease's row expires (its holder paused past it) and another worker's turn claims it.
        conn = await asyncpg.connect(pg_url)
        try:
            await conn.execute("UPDATE turn_leases SET expires_at = clock_timestamp() - interval '1 s'")
        finally:
            await conn.close()
        theirs = other.turn(sid)
        assert await theirs.try_start(10) is not None
        assert ours._kept[sid].count == 2  # what ours remembers still stands: only the lease moved
        with pytest.raises(LeaseLost):
            await ours.append(sid, [reply("two")], fence=token)
        with pytest.raises(LeaseLost):
            await ours.append(sid, [reply("two, giving it back")], release=lease)
        await other.append(sid, [reply("theirs")], release=theirs)
        assert [i.text for i in await other.latest(sid, 10)] == ["hi", "one", "theirs"]
        await assert_kept_is_the_fold(pg_url, sid)


async def test_the_turn_taken_with_its_start_reads_what_turn_start_reads(pg_url: str):
    """The lease's claim runs the turn's read as a static query of a function of its own
    (migration 11, a plan the connection keeps instead of one made each turn): the same read as
    `turn_start`, for any n, with a take-over held, context keys, and no such session."""
    from supportdesk.items import ContextSet, Takeover

    async with await open_store(pg_url) as store:
        sid = (await store.create_session("triage", first=[customer("hi")])).id
        await store.append(sid, [ContextSet(key="customer_id", value="CUS-1", writer="triage", agent="triage")])
        await store.append(sid, [reply(f"line {n}") for n in range(5)])
        await store.append(sid, [Takeover(person="sam", agent="staff")])
        await store.append(sid, [ContextSet(key="plan", value={"code": "pro"}, writer="triage", agent="triage")])
        for n in (0, 1, 3, 50):
            lease = store.turn(sid)
            taken = await lease.try_start(n)
            assert taken is not None
            read = await store.turn_start(sid, n)
            assert taken.session == read.session and taken.holder == read.holder == "sam"
            assert [i.seq for i in taken.items] == [i.seq for i in read.items] and len(read.items) == min(n, 9)
            assert [i.text if isinstance(i, Message) else i.kind for i in taken.items] == [
                i.text if isinstance(i, Message) else i.kind for i in read.items]
            assert taken.context == read.context and set(read.context) == {"customer_id", "plan"}
            await lease.release()
        missing = await store.turn("no-such-session").try_start(10)
        assert missing is not None and missing.session is None and missing.items == []


async def test_an_append_that_empties_a_rollup_row_is_the_one_statement_and_the_drop(pg_url: str):
    """A conversation's first answer moves its share out of a roll-up row it alone filled: the
    append is still the one guarded statement, and the emptied row goes in one statement after it
    (no BEGIN, no locked read, no COMMIT: five round trips were two fewer than that, issue 34).
    No empty row is left, and the roll-up is the fold's."""
    from tests.test_store_turn_lease import _CountingPool

    async with await open_store(pg_url) as store:
        sid = (await store.create_session("triage", first=[customer("I was charged twice")])).id
        calls: list[str] = []
        store._pool = _CountingPool(store._pool, calls)  # type: ignore[attr-defined]
        store._write_pool = _CountingPool(store._write_pool, calls)  # type: ignore[attr-defined]
        kept = store._kept[sid]
        assert kept.folds() is not None
        _, emptied, _ = kept.advanced(kept.folds(), [reply("Let me look.")], store.clock())
        assert emptied, "the first answer empties a roll-up row (else this test proves nothing)"
        await store.append(sid, [reply("Let me look.")])
        assert calls == ["fetch", "execute"], calls
        conn = await asyncpg.connect(pg_url)
        try:
            assert await conn.fetchval("SELECT count(*) FROM figure_rollup WHERE n = 0") == 0
        finally:
            await conn.close()
        await assert_kept_is_the_fold(pg_url, sid)


async def test_a_new_session_is_one_statement_with_its_share_of_the_figures(pg_url: str):
    """A served conversation starts with `create_session` (no items): the row, its share of the
    figures and the roll-up rows that share adds go in one statement (no BEGIN, no COMMIT: five
    round trips were four fewer, issue 34), what is kept is the fold's, and an id taken already
    writes nothing (not the roll-up's share either: the statement is atomic)."""
    from tests.test_store_turn_lease import _CountingPool

    async with await open_store(pg_url) as store:
        calls: list[str] = []
        store._pool = _CountingPool(store._pool, calls)  # type: ignore[attr-defined]
        sid = (await store.create_session("triage", session_id="one-statement")).id
        assert calls == ["fetch"], calls
        await store.append(sid, [customer("I was charged twice")])
        await assert_kept_is_the_fold(pg_url, sid)
        conn = await asyncpg.connect(pg_url)
        try:
            rollup = "SELECT grain, lo, hi, what, a, b, c, n, x, y, z FROM figure_rollup ORDER BY 1, 2, 3, 4, 5, 6, 7"
            before = await conn.fetch(rollup)
            with pytest.raises(StoreError, match="already exists"):
                await store.create_session("triage", session_id="one-statement")
            assert await conn.fetch(rollup) == before
        finally:
            await conn.close()
