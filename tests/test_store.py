"""The store contract: one suite over both adapters (a real SQLite file, a real PostgreSQL database).

Every test taking `store` runs on both, unless it also takes `db_path` or is marked
`sqlite_only` (it looks inside the SQLite file itself). PostgreSQL runs are marked `postgres`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import asdict, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from supportdesk import records
from supportdesk.items import ContextSet, Handoff, Message, Notice, ToolCall, ToolResult
from supportdesk.store import EXTERNAL_ID, MATCH_END, MATCH_START, DuplicateItem, SessionStore, Store, StoreError, open_store
from supportdesk.store.protocol import SearchHit
from supportdesk.store import sessions as store_sql
from supportdesk.store.postgres import PostgresStore

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
sqlite_only = pytest.mark.sqlite_only


def pytest_generate_tests(metafunc):
    """Run each contract test on both adapters; tests that open the SQLite file run on SQLite only."""
    if "backend" not in metafunc.fixturenames:
        return
    if "db_path" in metafunc.fixturenames or metafunc.definition.get_closest_marker("sqlite_only"):
        metafunc.parametrize("backend", ["sqlite"])
    else:
        metafunc.parametrize("backend", BACKENDS)


class StepClock:
    """A clock that moves one second per call, so 'last activity' order is certain."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def where(backend: str, tmp_path: Path, request) -> Path | str:
    """The database the contract test runs on (resolved outside the event loop: pg_url runs one)."""
    return tmp_path / "desk.db" if backend == "sqlite" else request.getfixturevalue("pg_url")


@pytest.fixture
async def store(backend: str, where: Path | str):
    s = await open_store(where)
    assert isinstance(s, Store)
    assert isinstance(s, PostgresStore if backend == "postgres" else SessionStore)
    s.clock = StepClock()
    yield s
    await s.close()


def customer(text: str) -> Message:
    return Message(role="customer", text=text, agent="triage")


def reply(agent: str, text: str) -> Message:
    return Message(role="agent", text=text, agent=agent)


def handoff(src: str, dst: str, reason: str = "") -> Handoff:
    return Handoff(from_agent=src, to_agent=dst, reason=reason, agent=src)


def ctx(key: str, value, writer: str = "triage") -> ContextSet:
    return ContextSet(key=key, value=value, writer=writer, agent=writer)


async def fill(store: Store, sid: str, n: int, batch: int = 100) -> None:
    for start in range(0, n, batch):
        await store.append(sid, [reply("triage", f"line {i + 1}") for i in range(start, min(n, start + batch))])


# --- append and the simple reads ----------------------------------------------------------


async def test_append_stamps_consecutive_seqs_and_session_fields(store: Store):
    info = await store.create_session("triage")
    assert (info.item_count, info.active_agent, info.title) == (0, "triage", "")
    first = await store.append(info.id, [customer("My card was charged twice"), reply("triage", "Let me look")])
    second = await store.append(info.id, [handoff("triage", "billing", "money")])
    assert [i.seq for i in first + second] == [1, 2, 3]
    assert all(i.session_id == info.id for i in first + second)
    # one transaction, one timestamp; the next append is later
    assert first[0].created_at == first[1].created_at < second[0].created_at
    after = await store.get_session(info.id)
    assert after.item_count == 3
    assert after.handoff_count == 1
    assert after.active_agent == "billing"
    assert after.updated_at == second[0].created_at
    assert await store.last_seq(info.id) == 3
    assert await store.append(info.id, []) == []
    assert await store.last_seq(info.id) == 3


async def test_append_to_missing_session_is_a_store_error_and_writes_nothing(store: Store):
    with pytest.raises(StoreError, match="no session"):
        await store.append("nope", [customer("hi")])
    info = await store.create_session("triage")
    await store.append(info.id, [customer("hi")])
    assert await store.last_seq(info.id) == 1


async def test_items_round_trip_every_kind_with_meta(store: Store):
    info = await store.create_session("triage")
    items = [
        customer("hello"),
        ToolCall(call_id="c1", name="lookup", arguments={"email": "a@b.c", "n": 2}, agent="billing"),
        ToolResult(call_id="c1", name="lookup", output="found", is_error=False, agent="billing"),
        handoff("triage", "billing"),
        ctx("plan", {"code": "pro", "seats": 3}),
        Notice(notice_kind="limit", text="too many handoffs", data={"limit": 3}, agent="triage"),
        Message(role="agent", text="done", agent="billing", meta={"usage": {"input_tokens": 5, "output_tokens": 7}}),
    ]
    stamped = await store.append(info.id, items)
    read = await store.range(info.id, 1, len(items))
    assert read == stamped
    assert [i.kind for i in read] == ["message", "tool_call", "tool_result", "handoff", "context_set", "notice", "message"]
    assert read[1].arguments == {"email": "a@b.c", "n": 2}
    assert read[6].meta == {"usage": {"input_tokens": 5, "output_tokens": 7}}


async def test_latest_range_and_item(store: Store):
    info = await store.create_session("triage")
    other = await store.create_session("triage")
    await fill(store, info.id, 250)
    await fill(store, other.id, 30)
    latest = await store.latest(info.id, 50)
    assert [i.seq for i in latest] == list(range(201, 251))
    assert latest[-1].text == "line 250"
    assert [i.seq for i in await store.latest(other.id, 50)] == list(range(1, 31))
    assert await store.latest(info.id, 0) == []
    assert [i.seq for i in await store.range(info.id, 10, 14)] == [10, 11, 12, 13, 14]
    assert [i.seq for i in await store.range(info.id, 249, 400)] == [249, 250]
    assert await store.range(info.id, 300, 400) == []
    item = await store.item(info.id, 7)
    assert item.seq == 7 and item.text == "line 7" and item.session_id == info.id
    assert await store.item(info.id, 251) is None
    assert await store.item(info.id, 0) is None
    assert await store.item("missing", 1) is None


async def test_a_seq_past_what_the_database_holds_reads_as_no_bound(store: Store):
    # The keyed reads (store/core.py) clamp a seq to the dialect's bound on both backends: a
    # number too large for the column (or for SQLite's 64-bit integers) is "no upper bound",
    # never a driver's overflow error.
    info = await store.create_session("triage")
    await store.append(info.id, [customer("hi"), ctx("plan", "pro"), handoff("triage", "billing")])
    huge = 2**70
    assert [i.seq for i in await store.range(info.id, -huge, huge)] == [1, 2, 3]
    assert await store.item(info.id, huge) is None and await store.item(info.id, -huge) is None
    assert await store.agent_at(info.id, huge) == "billing"
    assert (await store.context_at(info.id, huge))["plan"].value == "pro"


async def test_items_at_reads_many_seqs_in_seq_order_skipping_missing(store: Store):
    info = await store.create_session("triage")
    other = await store.create_session("triage")
    await fill(store, info.id, 250)
    await fill(store, other.id, 20)
    wanted = [200, 3, 77, 3, 1, 250, 251, 0, -4, 10_000, 120]
    got = await store.items_at(info.id, wanted)
    present = sorted({seq for seq in wanted if 1 <= seq <= 250})
    assert [i.seq for i in got] == present
    assert got == [await store.item(info.id, seq) for seq in present]
    assert all(i.session_id == info.id for i in got)  # never another session's item at that seq
    assert await store.items_at(info.id, []) == []
    assert await store.items_at(info.id, [251, 999]) == []
    assert await store.items_at("missing", [1, 2]) == []
    every = await store.items_at(info.id, range(250, 0, -1))
    assert every == await store.range(info.id, 1, 250)


@sqlite_only
async def test_items_at_is_one_statement(store: Store):
    info = await store.create_session("triage")
    await fill(store, info.id, 60)
    seen: list[str] = []
    await store._db._execute(store._db._conn.set_trace_callback, seen.append)
    try:
        got = await store.items_at(info.id, list(range(1, 61, 3)))
    finally:
        await store._db._execute(store._db._conn.set_trace_callback, None)
    assert len(got) == 20
    assert len(seen) == 1, seen


@sqlite_only
async def test_read_handoffs_reads_a_page_at_once_and_keeps_the_cache(store: Store):
    from supportdesk.tui.projection import read_handoffs

    info = await store.create_session("triage")
    for n in range(25):
        await store.append(info.id, [customer(f"q{n}"), handoff("triage", f"agent{n}", reason=f"r{n}")])
    stops = await store.kind_seqs(info.id, "handoff")
    page = stops[-20:]
    seen: list[str] = []
    await store._db._execute(store._db._conn.set_trace_callback, seen.append)
    try:
        cache: dict = {}
        got = await read_handoffs(store, info.id, page, cache)
        assert [h.seq for h in got] == page
        assert [h.to_agent for h in got] == [f"agent{n}" for n in range(5, 25)]
        assert len(seen) == 1, seen  # the page is one read, not 20
        assert sorted(cache) == page
        # everything cached: no read at all; the result follows the order asked for
        seen.clear()
        again = await read_handoffs(store, info.id, list(reversed(page)), cache)
        assert [h.seq for h in again] == list(reversed(page))
        assert seen == []
        # a page overlapping the cache reads only the seqs it lacks; non-handoff and missing seqs are skipped
        seen.clear()
        mixed = [stops[0], 1, stops[10], 9_999, stops[1]]
        got = await read_handoffs(store, info.id, mixed, cache)
        assert [h.seq for h in got] == [stops[0], stops[10], stops[1]]
        assert len(seen) == 1
        assert 1 not in cache and 9_999 not in cache
    finally:
        await store._db._execute(store._db._conn.set_trace_callback, None)
    # without a cache it still answers
    assert [h.seq for h in await read_handoffs(store, info.id, stops[:3])] == stops[:3]


async def test_handoffs_agent_at_of_kind_and_kind_seqs(store: Store):
    info = await store.create_session("triage")
    await store.append(info.id, [customer("refund please")])  # 1
    await store.append(info.id, [handoff("triage", "billing", "money")])  # 2
    await store.append(info.id, [reply("billing", "checking")])  # 3
    await store.append(info.id, [handoff("billing", "senior", "too big")])  # 4
    await store.append(info.id, [reply("senior", "refunded"), handoff("senior", "triage", "done")])  # 5, 6
    hs = await store.handoffs(info.id)
    assert [(h.seq, h.from_agent, h.to_agent) for h in hs] == [(2, "triage", "billing"), (4, "billing", "senior"), (6, "senior", "triage")]
    assert [h.seq for h in await store.handoffs(info.id, upto=4)] == [2, 4]
    assert [h.seq for h in await store.handoffs(info.id, upto=3)] == [2]
    assert await store.handoffs(info.id, upto=1) == []
    assert [await store.agent_at(info.id, k) for k in range(0, 7)] == [
        "triage", "triage", "billing", "billing", "senior", "senior", "triage"
    ]
    assert await store.agent_at("missing", 3) == ""
    assert await store.kind_seqs(info.id, "handoff") == [2, 4, 6]
    assert await store.kind_seqs(info.id, "message") == [1, 3, 5]
    assert [m.text for m in await store.of_kind(info.id, "message", upto=3)] == ["refund please", "checking"]
    # `after` reads only what came since (the runner's customer words read no message twice)
    assert [m.seq for m in await store.of_kind(info.id, "message", after=1)] == [3, 5]
    assert [m.seq for m in await store.of_kind(info.id, "message", after=3, upto=5)] == [5]
    assert [h.seq for h in await store.of_kind(info.id, "handoff", after=2)] == [4, 6]
    assert await store.of_kind(info.id, "message", after=5) == []
    assert await store.kind_seqs(info.id, "notice") == []


async def test_context_at_folds_writes_at_different_seqs_and_clears(store: Store):
    info = await store.create_session("triage")
    await store.append(info.id, [customer("hi")])  # 1
    await store.append(info.id, [ctx("customer", "c-17")])  # 2
    await store.append(info.id, [ctx("plan", "basic", "billing")])  # 3
    await store.append(info.id, [reply("triage", "ok")])  # 4
    await store.append(info.id, [ctx("plan", "pro", "billing"), ctx("issue", {"kind": "charge"})])  # 5, 6
    await store.append(info.id, [ctx("customer", None, "senior")])  # 7 clears it
    await store.append(info.id, [ctx("customer", "c-99", "senior")])  # 8 sets again

    def view(entries):
        return {k: (e.value, e.writer, e.seq) for k, e in entries.items()}

    assert view(await store.context_at(info.id, 1)) == {}
    assert view(await store.context_at(info.id, 2)) == {"customer": ("c-17", "triage", 2)}
    assert view(await store.context_at(info.id, 4)) == {"customer": ("c-17", "triage", 2), "plan": ("basic", "billing", 3)}
    assert view(await store.context_at(info.id, 6)) == {
        "customer": ("c-17", "triage", 2),
        "issue": ({"kind": "charge"}, "triage", 6),
        "plan": ("pro", "billing", 5),
    }
    assert view(await store.context_at(info.id, 7)) == {"issue": ({"kind": "charge"}, "triage", 6), "plan": ("pro", "billing", 5)}
    now = view(await store.context_at(info.id))
    assert now == view(await store.context_at(info.id, 8))
    assert now["customer"] == ("c-99", "senior", 8)
    # keys come back sorted, and another session's context does not leak in
    assert list(await store.context_at(info.id)) == ["customer", "issue", "plan"]
    other = await store.create_session("triage")
    await store.append(other.id, [ctx("other", 1)])
    assert list(await store.context_at(info.id)) == ["customer", "issue", "plan"]
    assert list(await store.context_at(other.id)) == ["other"]


async def test_turn_start_reads_what_the_separate_reads_read(store: Store):
    """`turn_start` answers as get_session, latest(n), context_at and the last take-over or
    release do, at every point of a session's life; an unknown session is an empty answer."""
    from supportdesk.items import Release, Takeover

    async def check(sid: str, n: int) -> None:
        got = await store.turn_start(sid, n)
        assert got.session == await store.get_session(sid)
        assert got.items == await store.latest(sid, n)
        assert got.context == await store.context_at(sid)
        assert got.whole_log == (len(got.items) < n or (bool(got.items) and got.items[0].seq == 1))
        return got

    info = await store.create_session("triage")
    empty = await check(info.id, 5)
    assert empty.items == [] and empty.context == {} and empty.holder is None and empty.whole_log
    await store.append(info.id, [customer("hi"), ctx("customer", "c-17"), handoff("triage", "billing")])
    await store.append(info.id, [ctx("plan", "pro", "billing"), reply("billing", "ok")])
    start = await check(info.id, 3)
    assert [i.seq for i in start.items] == [3, 4, 5] and not start.whole_log
    assert {k: e.value for k, e in start.context.items()} == {"customer": "c-17", "plan": "pro"}
    assert start.session is not None and start.session.active_agent == "billing" and start.holder is None
    whole = await check(info.id, 50)
    assert [i.seq for i in whole.items] == [1, 2, 3, 4, 5] and whole.whole_log
    await store.append(info.id, [Takeover(person="ana", origin="tui", agent="billing")])
    assert (await check(info.id, 50)).holder == "ana"
    await store.append(info.id, [ctx("customer", None, "billing")])  # cleared: not in the context
    assert "customer" not in (await check(info.id, 50)).context
    await store.append(info.id, [Release(person="ana", origin="tui", to_agent="billing", agent="billing")])
    assert (await check(info.id, 50)).holder is None
    await store.append(info.id, [Takeover(person="bo", origin="api", agent="billing")])
    assert (await check(info.id, 2)).holder == "bo"
    missing = await store.turn_start("no-such-session", 10)
    assert missing.session is None and missing.items == [] and missing.context == {} and missing.holder is None


async def test_turn_start_is_one_round_trip(store: Store, backend: str):
    """One hop to SQLite's thread (one read transaction); one statement on PostgreSQL."""
    info = await store.create_session("triage")
    await store.append(info.id, [customer("hi"), ctx("customer", "c-17"), handoff("triage", "billing")])
    name = "_run" if backend == "sqlite" else "_fetch"
    real = getattr(store, name)
    calls: list[object] = []

    async def counted(*args, **kwargs):
        calls.append(args[0])
        return await real(*args, **kwargs)

    setattr(store, name, counted)
    try:
        start = await store.turn_start(info.id, 10)
    finally:
        delattr(store, name)
    assert len(start.items) == 3 and start.context["customer"].value == "c-17"
    assert len(calls) == 1, calls


async def test_usage_totals_sum_per_agent(store: Store):
    info = await store.create_session("triage")
    await store.append(
        info.id,
        [
            Message(role="agent", text="a", agent="triage", meta={"usage": {"input_tokens": 10, "output_tokens": 3}}),
            Message(role="agent", text="b", agent="billing", meta={"usage": {"input_tokens": 4, "output_tokens": 1}}),
            Message(role="agent", text="c", agent="triage", meta={"usage": {"input_tokens": 1, "output_tokens": 2}}),
            Message(role="agent", text="d", agent="billing", meta={"usage": {"input_tokens": 1, "output_tokens": 1, "reported": 0}}),
            Message(role="agent", text="e", agent="senior", meta={"request_id": "x"}),  # no usage: not counted
            customer("no meta"),
        ],
    )
    assert await store.usage_totals(info.id) == {
        "billing": {"input_tokens": 5, "output_tokens": 2, "reported": 0},
        "triage": {"input_tokens": 11, "output_tokens": 5, "reported": 1},
    }
    empty = await store.create_session("triage")
    assert await store.usage_totals(empty.id) == {}


# What usage_totals computed before the totals were kept by the appends: a pass over every
# item of the session. The kept totals must always equal it.
OLD_USAGE_SCAN = """
    SELECT agent,
           sum(coalesce(json_extract(meta, '$.usage.input_tokens'), 0)),
           sum(coalesce(json_extract(meta, '$.usage.output_tokens'), 0)),
           min(coalesce(json_extract(meta, '$.usage.reported'), 1))
    FROM items WHERE session_id = ? AND meta IS NOT NULL AND json_extract(meta, '$.usage') IS NOT NULL
    GROUP BY agent ORDER BY agent
"""


def old_usage_scan(db_path: Path, session_id: str) -> dict[str, dict[str, int]]:
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute(OLD_USAGE_SCAN, (session_id,)).fetchall()
    return {a: {"input_tokens": i, "output_tokens": o, "reported": int(r)} for a, i, o, r in rows}


def expected_usage(items) -> dict[str, dict[str, int]]:
    """The totals summed in Python from the items a test appended."""
    out: dict[str, dict[str, int]] = {}
    for item in items:
        usage = item.meta.get("usage")
        if usage is None:
            continue
        sums = out.setdefault(item.agent, {"input_tokens": 0, "output_tokens": 0, "reported": 1})
        sums["input_tokens"] += usage.get("input_tokens", 0)
        sums["output_tokens"] += usage.get("output_tokens", 0)
        sums["reported"] = min(sums["reported"], int(usage.get("reported", True)))
    return dict(sorted(out.items()))


def used(n: int, reported: bool | None = True) -> dict:
    usage = {"input_tokens": 100 + 7 * n, "output_tokens": 3 + n % 11}
    if reported is not None:
        usage["reported"] = reported
    return {"model": "small", "usage": usage}


def mixed_step(n: int) -> list:
    """One step's worth of items of every kind, some carrying usage and some not."""
    agent = ("triage", "billing", "senior")[n % 3]
    return [
        customer(f"question {n}"),
        ToolCall(call_id=f"c{n}", name="lookup", arguments={"n": n}, agent=agent, meta=used(n, reported=None)),
        ToolResult(call_id=f"c{n}", name="lookup", output="ok", agent=agent),
        ctx(f"k{n % 4}", n, agent),
        Notice(notice_kind="info", text="note", agent=agent, meta={"request_id": f"r{n}"}),
        handoff(agent, "billing"),
        Message(role="agent", text=f"answer {n}", agent=agent, meta=used(n, reported=n % 5 != 0)),
    ]


async def test_kept_usage_totals_equal_the_old_scan_on_mixed_items(store: Store, db_path: Path):
    info = await store.create_session("triage")
    other = await store.create_session("triage")
    appended = []
    for n in range(12):
        step = mixed_step(n)
        appended += step
        await store.append(info.id, step)
        await store.append(other.id, mixed_step(n + 100))  # another session's usage stays its own
        totals = await store.usage_totals(info.id)
        assert totals == expected_usage(appended) == old_usage_scan(db_path, info.id)
    assert set(totals) == {"triage", "billing", "senior"}
    assert totals["triage"]["reported"] == 0  # step 0's answer was estimated
    assert await store.usage_totals(other.id) == old_usage_scan(db_path, other.id)
    # the totals survive reopening, and a second connection reads the same
    async with await SessionStore.open(db_path) as again:
        assert await again.usage_totals(info.id) == totals


async def test_fork_at_k_counts_only_the_usage_of_items_up_to_k(store: Store, db_path: Path):
    src = await store.create_session("triage")
    appended = []
    for n in range(6):
        appended += await store.append(src.id, mixed_step(n))
    source_totals = await store.usage_totals(src.id)
    for k in (0, 1, 2, 9, 21, 22, len(appended), len(appended) + 5):
        fork = await store.fork(src.id, k)
        expected = expected_usage(appended[:k])
        assert await store.usage_totals(fork.id) == expected == old_usage_scan(db_path, fork.id), k
    assert await store.usage_totals(src.id) == source_totals  # the source is untouched
    # a fork's own appends add to the copied totals
    fork = await store.fork(src.id, 9)
    more = [Message(role="agent", text="more", agent="billing", meta=used(50, reported=False))]
    await store.append(fork.id, more)
    assert await store.usage_totals(fork.id) == expected_usage(appended[:9] + more)
    assert await store.usage_totals(src.id) == source_totals


async def test_delete_removes_the_sessions_usage_totals(store: Store, db_path: Path):
    gone = await store.create_session("triage")
    kept = await store.create_session("triage")
    await store.append(gone.id, mixed_step(1))
    kept_items = await store.append(kept.id, mixed_step(2))
    await store.delete_session(gone.id)
    assert await store.usage_totals(gone.id) == {}
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM usage_totals WHERE session_id = ?", (gone.id,)).fetchone()[0] == 0
    assert await store.usage_totals(kept.id) == expected_usage(kept_items)


# A separate OS process appending items with usage: several of them write one session at once.
USAGE_WRITER = """
import asyncio, sys, time
from pathlib import Path
from supportdesk.items import Message
from supportdesk.store import SessionStore

db, sid, writer, batches, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])

async def main():
    async with await SessionStore.open(db) as store:
        print("ready", flush=True)
        while not start.exists():
            time.sleep(0.001)
        for batch in range(batches):
            items = [
                Message(role="agent", text=f"w{writer} b{batch} p{part}", agent=f"agent{(batch + part) % 3}",
                        meta={"usage": {"input_tokens": writer * 1000 + batch, "output_tokens": part + 1,
                                        "reported": (writer + batch) % 7 != 0}})
                for part in range(1 + batch % 3)
            ]
            await store.append(sid, items)
            # A breath between batches: SQLite's busy handler backs off in sleeps, and a writer
            # that takes the lock straight back can keep the other out until it has finished.
            time.sleep(0.002)

asyncio.run(main())
"""


def usage_writer_items(writer: int, batches: int) -> list[Message]:
    """What USAGE_WRITER appends, built the same way here, for the expected totals."""
    return [
        Message(role="agent", text="", agent=f"agent{(batch + part) % 3}",
                meta={"usage": {"input_tokens": writer * 1000 + batch, "output_tokens": part + 1,
                                "reported": (writer + batch) % 7 != 0}})
        for batch in range(batches)
        for part in range(1 + batch % 3)
    ]


def test_appends_from_two_processes_keep_usage_totals_right(tmp_path: Path):
    import asyncio
    import subprocess
    import sys

    db = tmp_path / "usage.db"

    async def new_session() -> str:
        async with await SessionStore.open(db) as s:
            return (await s.create_session("triage")).id

    sid = asyncio.run(new_session())
    go = tmp_path / "go"
    batches = 300
    repo = Path(__file__).resolve().parent.parent
    writers = []
    for writer in (1, 2):
        proc = subprocess.Popen(
            [sys.executable, "-c", USAGE_WRITER, str(db), sid, str(writer), str(batches), str(go)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=repo,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        writers.append(proc)
    go.touch()
    for proc in writers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    async def totals() -> dict[str, dict[str, int]]:
        async with await SessionStore.open(db) as s:
            return await s.usage_totals(sid)

    expected = expected_usage(usage_writer_items(1, batches) + usage_writer_items(2, batches))
    assert asyncio.run(totals()) == expected == old_usage_scan(db, sid)
    # the two writers really interleaved (otherwise the test would prove little)
    with sqlite3.connect(db) as conn:
        texts = [t for (t,) in conn.execute(
            "SELECT json_extract(body, '$.text') FROM items WHERE session_id = ? ORDER BY seq", (sid,))]
    switches = sum(1 for a, b in zip(texts, texts[1:]) if a[:2] != b[:2])
    assert switches > 2


# --- sessions: title, listing, finding --------------------------------------------------------


async def test_title_comes_from_first_customer_message(store: Store):
    info = await store.create_session("triage")
    await store.append(info.id, [reply("triage", "Welcome!")])
    assert (await store.get_session(info.id)).title == ""
    await store.append(info.id, [customer("  My\n invoice   is wrong " + "x" * 200)])
    await store.append(info.id, [customer("second message")])
    title = (await store.get_session(info.id)).title
    assert title.startswith("My invoice is wrong x")
    assert len(title) == 80
    blank = await store.create_session("triage")
    await store.append(blank.id, [customer("   \n "), customer("the real question"), customer("later")])
    assert (await store.get_session(blank.id)).title == "the real question"
    titled = await store.create_session("triage", title="Given title")
    await store.append(titled.id, [customer("does not replace it")])
    assert (await store.get_session(titled.id)).title == "Given title"


async def test_list_sessions_pages_by_last_activity(store: Store):
    ids = [(await store.create_session("triage")).id for _ in range(5)]
    # touch them in the order 2, 0, 4: those are the most recent, newest first
    for i in (2, 0, 4):
        await store.append(ids[i], [customer(f"session {i}")])
    listed = [s.id for s in await store.list_sessions(limit=50)]
    assert listed[:3] == [ids[4], ids[0], ids[2]]
    assert listed[3:] == [ids[3], ids[1]]  # untouched: newest created first
    assert [s.id for s in await store.list_sessions(limit=2)] == listed[:2]
    assert [s.id for s in await store.list_sessions(limit=2, offset=2)] == listed[2:4]
    assert [s.id for s in await store.list_sessions(limit=2, offset=4)] == listed[4:]
    assert await store.list_sessions(limit=2, offset=5) == []
    assert await store.count_sessions() == 5


async def test_find_session_by_unambiguous_prefix(store: Store):
    a = await store.create_session("triage", session_id="abc123")
    await store.create_session("triage", session_id="abd456")
    assert (await store.find_session("abc123")).id == a.id
    assert (await store.find_session("abc")).id == a.id
    assert await store.find_session("ab") is None  # ambiguous
    assert await store.find_session("zz") is None
    assert await store.find_session("") is None
    # LIKE wildcards in the prefix are not wildcards
    assert await store.find_session("a%") is None
    assert await store.find_session("a_c") is None


async def test_set_status(store: Store):
    info = await store.create_session("triage")
    await store.set_status(info.id, "closed")
    assert (await store.get_session(info.id)).status == "closed"


# --- search ---------------------------------------------------------------------------------


async def test_search_finds_messages_across_sessions_with_snippets(store: Store):
    a = await store.create_session("triage")
    b = await store.create_session("triage")
    await store.append(a.id, [customer("I was charged twice for my subscription"), reply("billing", "I see the duplicate charge")])
    await store.append(b.id, [customer("The app crashes on start"), ctx("charged", "not a message")])
    hits = await store.search("charged")
    assert [(h.session_id, h.seq) for h in hits] == [(a.id, 1)]
    hit = hits[0]
    assert hit.title == "I was charged twice for my subscription"
    assert f"{MATCH_START}charged{MATCH_END}" in hit.snippet
    assert ("charged", True) in hit.parts()
    assert "".join(text for text, _ in hit.parts()) == hit.snippet.replace(MATCH_START, "").replace(MATCH_END, "")
    assert not any(match for text, match in hit.parts() if text != "charged")
    # prefix matching: "charg" finds both "charged" and "charge"
    assert {(h.session_id, h.seq) for h in await store.search("charg")} == {(a.id, 1), (a.id, 2)}
    # newest activity first
    await store.append(b.id, [customer("and it charged me too")])
    assert [h.session_id for h in await store.search("charged")] == [b.id, a.id]
    # diacritics folded
    await store.append(b.id, [customer("café crème")])
    assert [h.seq for h in await store.search("cafe")] == [4]


async def test_a_hit_in_an_agent_reply_reads_without_its_markdown_marks(store: Store):
    """A search hit shows an agent's reply as the conversation draws it: no `**` or backtick
    marks around its words, the matched word still marked, in the browser and `sessions search`."""
    a = await store.create_session("triage")
    await store.append(a.id, [reply("billing", "a ** b: **two charges** on `CH9`")])
    [hit] = await store.search("charges")
    shown = "".join(text for text, _ in hit.parts())
    assert shown == "a ** b: two charges on CH9"
    assert "**two" not in shown and "`" not in shown
    assert [text for text, match in hit.parts() if match] == ["charges"]
    # A mark whose pair the snippet's window cut off is left out too.
    cut = SearchHit(session_id=a.id, title="", seq=1, snippet=f"…see **two {MATCH_START}charges{MATCH_END} on `CH9")
    assert "".join(text for text, _ in cut.parts()) == "…see two charges on CH9"
    cut = SearchHit(session_id=a.id, title="", seq=1, snippet=f"`CH9` and **{MATCH_START}charges{MATCH_END}**…")
    assert "".join(text for text, _ in cut.parts()) == "CH9 and charges…"


# What each query finds in "I was charged twice, AND NOT happy about it": its words only, every
# one required (3+ letters as prefixes), never FTS5 or LIKE syntax. So `NOT charged` finds it (NOT
# is a word of the message, not an operator), `charged OR` does not ("or" is not in it), `col:` is
# no column filter, and `%_` is no wildcard.
@pytest.mark.parametrize(
    ("query", "found"),
    [('"', False), ('""', False), ("'", False), ("charged OR", False), ("AND", True), ("NOT charged", True),
     ("NEAR(", False), ("charged*", True), ("*", False), ("a:b", False), ("col:charged", False),
     ("(charged", True), ("charged)", True), ("^charged", True), ("-charged", True), ("+", False),
     ('"unterminated', False), ("{text}: x", False), ("\\", False), ("%_", False), ("happy:", True),
     ("i was", True), ("wa", False)],
)
async def test_search_input_with_fts_syntax_never_errors(store: Store, query: str, found: bool):
    info = await store.create_session("triage")
    await store.append(info.id, [customer("I was charged twice, AND NOT happy about it")])
    hits = await store.search(query)
    assert [(h.session_id, h.seq) for h in hits] == ([(info.id, 1)] if found else [])
    # every word of the query is a plain word: when the words occur, the message is found
    # (the query's words are all required, like a web search)
    if query in ("NOT charged", "charged*", "(charged", "charged)", "^charged", "-charged", "AND"):
        assert [h.seq for h in hits] == [1]
    if query in ("charged OR", "col:charged"):
        assert hits == []  # "OR" and "col" are plain words here, and the text has neither


async def test_search_of_nothing_returns_nothing(store: Store):
    info = await store.create_session("triage")
    await store.append(info.id, [customer("hello")])
    assert await store.search("") == []
    assert await store.search("   ") == []
    assert await store.search("zebra") == []


# --- fork -----------------------------------------------------------------------------------


async def test_fork_copies_items_up_to_k_and_leaves_the_source_alone(store: Store):
    src = await store.create_session("triage")
    await store.append(src.id, [customer("refund my duplicate charge")])  # 1
    await store.append(src.id, [handoff("triage", "billing"), ctx("plan", "pro", "billing")])  # 2, 3
    await store.append(src.id, [reply("billing", "refund issued, quokka")])  # 4
    await store.append(src.id, [handoff("billing", "senior"), ctx("plan", "max", "senior")])  # 5, 6
    await store.append(src.id, [reply("senior", "upgraded, wombat")])  # 7
    before = await store.range(src.id, 1, 100)
    source_info = await store.get_session(src.id)

    fork = await store.fork(src.id, 4)
    assert fork.id != src.id
    assert (fork.forked_from, fork.forked_at) == (src.id, 4)
    assert fork.item_count == 4
    assert fork.handoff_count == 1
    assert fork.active_agent == "billing"
    assert fork.entry_agent == "triage"
    assert fork.title == "refund my duplicate charge"
    copied = await store.range(fork.id, 1, 100)
    assert [replace(i, session_id=src.id) for i in copied] == before[:4]
    assert {k: e.value for k, e in (await store.context_at(fork.id)).items()} == {"plan": "pro"}
    assert await store.kind_seqs(fork.id, "handoff") == [2]
    # the fork's messages are searchable; the source's later ones are not in the fork
    assert {h.session_id for h in await store.search("quokka")} == {src.id, fork.id}
    assert {h.session_id for h in await store.search("wombat")} == {src.id}
    # the fork goes on from k+1, the source is unchanged
    more = await store.append(fork.id, [reply("billing", "anything else?")])
    assert more[0].seq == 5
    assert await store.range(src.id, 1, 100) == before
    assert (await store.get_session(src.id)) == source_info


async def test_fork_edges(store: Store):
    src = await store.create_session("triage")
    await store.append(src.id, [reply("triage", "welcome"), customer("hello there"), handoff("triage", "technical")])
    whole = await store.fork(src.id, 99)  # clamped to the end
    assert whole.item_count == 3 and whole.active_agent == "technical" and whole.forked_at == 3
    empty = await store.fork(src.id, 0)
    assert empty.item_count == 0 and empty.handoff_count == 0 and empty.active_agent == "triage"
    assert await store.range(empty.id, 1, 10) == []
    first = await store.append(empty.id, [customer("a new start")])
    assert first[0].seq == 1
    with pytest.raises(StoreError):
        await store.fork("missing", 1)


async def test_fork_before_the_first_customer_message_has_no_title_yet(store: Store):
    src = await store.create_session("triage")
    await store.append(src.id, [reply("triage", "welcome"), customer("my router is blinking")])
    early = await store.fork(src.id, 1)
    assert early.title == ""
    await store.append(early.id, [customer("a different problem")])
    assert (await store.get_session(early.id)).title == "a different problem"


# --- delete ---------------------------------------------------------------------------------


async def test_delete_cascades_to_items_context_and_search(store: Store, db_path: Path):
    gone = await store.create_session("triage")
    kept = await store.create_session("triage")
    await store.append(gone.id, [customer("platypus problem"), ctx("k", 1)])
    await store.append(kept.id, [customer("platypus too"), ctx("k", 2)])
    assert await store.delete_session(gone.id) is True
    assert await store.delete_session(gone.id) is False
    assert await store.get_session(gone.id) is None
    assert await store.range(gone.id, 1, 10) == []
    assert [h.session_id for h in await store.search("platypus")] == [kept.id]
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM items WHERE session_id = ?", (gone.id,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM context_keys WHERE session_id = ?", (gone.id,)).fetchone()[0] == 0
        # the FTS index holds exactly the kept session's message: the deleted one's words are gone
        # from it (an external-content index keeps them unless it is told what was deleted)
        assert conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH 'platypus'").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH 'problem'").fetchone()[0] == 0
    assert (await store.get_session(kept.id)).item_count == 2


# --- durability across connections ----------------------------------------------------------


async def test_reopen_sees_everything_and_a_second_connection_sees_commits(db_path: Path):
    a = await SessionStore.open(db_path)
    b = await SessionStore.open(db_path)
    try:
        info = await a.create_session("triage")
        v0 = await b.data_version()
        await a.append(info.id, [customer("hello"), handoff("triage", "billing")])
        assert await b.data_version() != v0
        assert [i.seq for i in await b.latest(info.id, 10)] == [1, 2]
        await b.append(info.id, [reply("billing", "hi")])
        assert (await a.get_session(info.id)).item_count == 3
    finally:
        await a.close()
        await b.close()
    again = await SessionStore.open(db_path)
    try:
        assert (await again.get_session(info.id)).active_agent == "billing"
        assert [i.seq for i in await again.range(info.id, 1, 10)] == [1, 2, 3]
    finally:
        await again.close()


def test_sql_constants_are_the_ones_the_store_runs():
    # the EXPLAIN tests check these strings; make sure they are real module constants
    for name in ("SQL_LATEST", "SQL_RANGE", "SQL_ITEM", "SQL_OF_KIND", "SQL_AGENT_AT", "SQL_CONTEXT_AT", "SQL_KIND_SEQS"):
        assert isinstance(getattr(store_sql, name), str)


# --- batched search indexing ------------------------------------------------------------------


def fts_rows(db_path: Path, word: str = "okapi") -> int:
    """How many messages the search index holds for `word` (read from the index itself: a plain
    count(*) of the external-content table would count the messages in the items)."""
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT count(*) FROM message_fts WHERE message_fts MATCH ?", (word,)).fetchone()[0]


async def test_appends_index_messages_in_batches_and_search_indexes_the_rest(store: Store, db_path: Path):
    info = await store.create_session("triage")
    total = store_sql.SEARCH_BATCH + 44
    for n in range(total):
        await store.append(info.id, [reply("billing", f"okapi note {n}")])
    # the backlog reached a batch inside an append: most are indexed without any search
    assert store_sql.SEARCH_BATCH <= fts_rows(db_path) < total
    hits = await store.search("okapi", limit=1000)
    assert sorted(h.seq for h in hits) == list(range(1, total + 1))
    assert fts_rows(db_path) == total  # each message once
    assert len(await store.search("okapi", limit=1000)) == total


async def test_search_after_deleting_the_newest_items_finds_messages_on_reused_ids(store: Store, db_path: Path):
    kept = await store.create_session("triage")
    await store.append(kept.id, [customer("first gecko")])
    doomed = await store.create_session("triage")
    await store.append(doomed.id, [customer("doomed gecko"), reply("triage", "doomed too")])
    assert len(await store.search("gecko")) == 2  # indexed up to the doomed items' ids
    await store.delete_session(doomed.id)
    # SQLite gives the freed highest ids to the next rows: they must still be indexed
    await store.append(kept.id, [customer("second gecko"), customer("third gecko")])
    assert [h.seq for h in await store.search("gecko")] == [3, 2, 1]
    assert {h.session_id for h in await store.search("gecko")} == {kept.id}
    assert await store.search("doomed") == []


async def test_deleting_a_session_whose_messages_were_never_indexed(store: Store):
    a = await store.create_session("triage")
    b = await store.create_session("triage")
    await store.append(a.id, [customer("ibis one")])
    await store.append(b.id, [customer("ibis two")])
    assert await store.delete_session(b.id)  # b's message was still in the backlog
    assert [h.session_id for h in await store.search("ibis")] == [a.id]


async def test_a_lock_held_past_the_busy_timeout_is_a_clear_store_error(db_path: Path):
    store = await SessionStore.open(db_path, busy_timeout_ms=100)
    try:
        info = await store.create_session("triage")
        blocker = sqlite3.connect(db_path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process's write lock, held
        try:
            with pytest.raises(StoreError, match="locked by another process") as caught:
                await store.append(info.id, [customer("waiting")])
            assert "\n" not in str(caught.value)
            # reads go on under WAL while the other writer holds its lock
            assert (await store.get_session(info.id)).item_count == 0
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert (await store.append(info.id, [customer("now it goes")]))[0].seq == 1
    finally:
        await store.close()


# --- context_at and agent_at agree with a plain fold over the log, for any log ----------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

KEYS = ["plan", "email", "issue"]
AGENTS = ["triage", "billing", "senior"]
step = st.one_of(
    st.tuples(st.just("ctx"), st.sampled_from(KEYS), st.one_of(st.none(), st.integers(0, 9), st.text(max_size=3))),
    st.tuples(st.just("handoff"), st.sampled_from(AGENTS), st.none()),
    st.tuples(st.just("msg"), st.none(), st.none()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(step, min_size=1, max_size=4), min_size=1, max_size=8))
def test_context_and_agent_at_every_k_match_a_fold_of_the_log(tmp_path: Path, batches):
    import asyncio
    import uuid

    async def go() -> None:
        store = await SessionStore.open(tmp_path / f"{uuid.uuid4().hex}.db")
        try:
            info = await store.create_session("triage")
            holder = "triage"
            for batch in batches:
                items = []
                for kind, a, b in batch:
                    if kind == "ctx":
                        items.append(ctx(a, b, holder))
                    elif kind == "handoff":
                        items.append(handoff(holder, a))
                        holder = a
                    else:
                        items.append(reply(holder, "text"))
                await store.append(info.id, items)
            log = await store.range(info.id, 1, 10_000)
            folded: dict[str, object] = {}
            agent = "triage"
            for k in range(0, len(log) + 1):
                if k:
                    item = log[k - 1]
                    if item.kind == "context_set":
                        if item.value is None:
                            folded.pop(item.key, None)
                        else:
                            folded[item.key] = (item.value, item.writer, item.seq)
                    elif item.kind == "handoff":
                        agent = item.to_agent
                got = {key: (e.value, e.writer, e.seq) for key, e in (await store.context_at(info.id, k)).items()}
                assert got == folded, k
                assert await store.agent_at(info.id, k) == agent, k
            assert (await store.get_session(info.id)).active_agent == agent
        finally:
            await store.close()

    asyncio.run(go())


async def test_a_session_and_its_first_items_are_created_together(store) -> None:
    info = await store.create_session("triage", first=[customer("my card was charged twice")])
    assert info.item_count == 1 and info.title == "my card was charged twice"
    [first] = await store.range(info.id, 1, 1)
    assert first.kind == "message" and first.text == "my card was charged twice"
    # A first append that fails (here: a clashing id) leaves no session and no items behind.
    with pytest.raises(StoreError):
        await store.create_session("triage", session_id=info.id, first=[customer("again")])
    assert await store.count_sessions() == 1
    assert await store.last_seq(info.id) == 1


# --- what a store reads back is what the validator would make -----------------------------------
# Sessions and context entries are constructed without pydantic's validator when their values
# already have their types (supportdesk.exact: the TUI's first page builds no validator).


def _same_model(a, b) -> None:
    assert type(a) is type(b)
    assert a == b and a.__dict__ == b.__dict__
    assert records.dump(a) == records.dump(b)


async def test_sessions_and_context_read_back_are_what_the_validator_makes(store):
    from supportdesk.store.protocol import ContextEntry, SessionInfo

    info = await store.create_session("triage", title="Card declined", channel="web", meta={"task": "t-1", "n": 2})
    await store.append(info.id, [customer("hello"), ContextSet(key="plan", value={"tier": "gold"}, writer="billing", agent="billing")])
    fork = await store.fork(info.id, 1)
    for got in [await store.get_session(info.id), await store.get_session(fork.id), *(await store.list_sessions())]:
        assert got is not None
        _same_model(got, records.validate(SessionInfo, asdict(got)))
        assert got.created_at.utcoffset() == timedelta(0)
    got = await store.get_session(info.id)
    assert got.meta == {"task": "t-1", "n": 2} and got.channel == "web" and got.item_count == 2
    entry = (await store.context_at(info.id))["plan"]
    _same_model(entry, records.validate(ContextEntry, asdict(entry)))
    assert entry.value == {"tier": "gold"} and entry.seq == 2


@pytest.mark.parametrize(
    "bad",
    [
        Message(role="robot", text="hi"),  # type: ignore[arg-type]
        Message(role="customer", text=5),  # type: ignore[arg-type]
        Notice(notice_kind="info", text="t", data=None),  # type: ignore[arg-type]
    ],
    ids=["role", "text", "data"],
)
async def test_an_item_no_reader_could_read_back_is_refused_and_nothing_is_written(store, bad):
    """Items are records the engine builds without validation; the store validates each one it
    writes, so a wrong one fails the append instead of leaving a row every reader rejects."""
    from pydantic import ValidationError

    info = await store.create_session("triage", first=[customer("hello")])
    with pytest.raises(ValidationError):
        await store.append(info.id, [customer("kept?"), bad])
    assert [i.text for i in await store.range(info.id, 1, 99)] == ["hello"]
    assert (await store.get_session(info.id)).item_count == 1


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"item_count": "3"}, 3),  # lax: the validator turns it into 3
        ({"meta": '{"a": 1}'}, 3),  # meta as stored JSON text
        ({"created_at": "2026-03-14T09:30:00.1234567+00:00"}, 3),  # seven digits: the validator decides
    ],
)
def test_a_session_row_the_validator_would_change_goes_through_it(change, expected):
    from pydantic import ValidationError

    from supportdesk.exact import constructed
    from supportdesk.store.protocol import SessionInfo, session_info

    row = {"id": "s1", "title": "t", "created_at": "2026-03-14T09:30:00+00:00", "updated_at": "2026-03-14T09:30:00+00:00",
           "entry_agent": "triage", "active_agent": "triage", "status": "open", "item_count": 3, "handoff_count": 0,
           "forked_from": None, "forked_at": None, "channel": "tui", "meta": "{}"}
    assert constructed(SessionInfo, {**row, "meta": {}}) is not None
    changed = {**row, **change}
    try:
        meta = changed["meta"]
        expected_info = records.validate(SessionInfo, {**changed, "meta": json.loads(meta) if isinstance(meta, str) else meta})
    except ValidationError:
        with pytest.raises(ValidationError):
            session_info(changed)
    else:
        _same_model(session_info(changed), expected_info)
        assert session_info(changed).item_count == expected
    with pytest.raises(ValidationError):
        session_info({**row, "item_count": "many"})
    with pytest.raises(ValidationError):
        session_info({**row, "meta": "{not json"})


# --- a channel's message id: one message per (session, external id) --------------------------


def delivered(text: str, external_id: str) -> Message:
    return Message(role="customer", text=text, agent="triage", meta={EXTERNAL_ID: external_id})


async def test_a_message_with_an_external_id_already_in_the_session_is_refused_whole(store: Store):
    """The store contract: a second message with the same (session, external id) is refused in
    the append's own transaction, nothing of that append written; other sessions, other ids,
    other kinds and messages without one are not concerned."""
    info = await store.create_session("triage")
    other = await store.create_session("triage")
    [first] = await store.append(info.id, [delivered("My card was charged twice", "chatwoot:41")])
    assert first.meta[EXTERNAL_ID] == "chatwoot:41"
    with pytest.raises(DuplicateItem, match="chatwoot:41"):
        await store.append(info.id, [reply("triage", "not kept"), delivered("again", "chatwoot:41")])
    with pytest.raises(DuplicateItem):  # twice in one append
        await store.append(info.id, [delivered("a", "chatwoot:42"), delivered("b", "chatwoot:42")])
    assert await store.last_seq(info.id) == 1
    assert (await store.get_session(info.id)).item_count == 1
    await store.append(info.id, [delivered("next", "chatwoot:43"), customer("no id"), customer("no id")])
    await store.append(other.id, [delivered("same id, another conversation", "chatwoot:41")])
    # A meta the index does not concern stays storable as it was (PostgreSQL's jsonb refuses NUL).
    await store.append(other.id, [Message(role="customer", text="x", agent="triage", meta={"note": "a\x00b"})])
    assert (await store.latest(other.id, 1))[0].meta == {"note": "a\x00b"}
    assert [i.text for i in await store.latest(info.id, 10)] == ["My card was charged twice", "next", "no id", "no id"]
    assert await store.last_seq(other.id) == 2
    lease = store.turn(info.id)  # the runner's fenced path: the same refusal, the fence kept
    async with lease:
        with pytest.raises(DuplicateItem):
            await store.append(info.id, [delivered("again", "chatwoot:43")], fence=lease.token)
        await store.append(info.id, [delivered("fenced", "chatwoot:44")], fence=lease.token)
    assert await store.last_seq(info.id) == 5


async def test_one_delivery_stored_by_two_workers_at_once_is_stored_once(backend: str, where: Path | str):
    """Two stores on one database (two `serve` workers) append the same delivery at the same
    moment, many times over: each time exactly one is stored and the other is refused."""
    async with await open_store(where) as one, await open_store(where) as two:
        sid = (await one.create_session("triage")).id
        for n in range(20):
            results = await asyncio.gather(
                one.append(sid, [delivered(f"message {n}", f"chatwoot:{n}")]),
                two.append(sid, [delivered(f"message {n}", f"chatwoot:{n}")]),
                return_exceptions=True,
            )
            stored = [r for r in results if isinstance(r, list)]
            refused = [r for r in results if isinstance(r, DuplicateItem)]
            assert (len(stored), len(refused)) == (1, 1), results
        texts = [i.text for i in await one.of_kind(sid, "message")]
        assert texts == [f"message {n}" for n in range(20)]
